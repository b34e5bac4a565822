"""The tanh GELU's error constants, shared by the ops that apply it after a GEMM (fused_linear_gelu,
moe): a helper module, not an op (its name starts with "_")."""
from __future__ import annotations

# The tanh GELU's steepest slope (at z = 1.42) and curvature (at z = 0), bounding how an error in its
# argument z moves its value and its derivative.
GELU_MAX_SLOPE = 1.129
GELU_MAX_CURVATURE = 0.798
# cuBLASLt's GELU epilogue (the 16-bit CUDA paths) is within one unit in the last place of the tanh
# GELU, except for z < -3, where it returns values near zero: off by at most 7.6e-6 on an H100.
EPILOGUE_TAIL_ERROR = 1e-5
