"""gelu_approx: element-wise tanh GELU, kernels in csrc/gelu_approx/ (the math in gelu_approx.h).

y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), i.e. torch.nn.functional.gelu(x, approximate="tanh").


The math is in csrc/gelu_approx/gelu_approx.h; the rest is derived from SPEC below,
which the build reads too: keep its schema and kind literal.
"""

import torch
from torch import Tensor

from .._declare import declare


def reference(x: Tensor) -> Tensor:
    """gelu_approx in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return torch.nn.functional.gelu(x, approximate="tanh")


SPEC = declare(
    "gelu_approx(Tensor x) -> Tensor",
    kind="elementwise",
    reference=reference,
    # The > 2**31-element case on CUDA only: the CPU loop it shares (cpu::map) is checked there by scale and
    # fused_bias_gelu (8-37 s of a CPU run each).
    large=("cuda",),
    domain={"x": (-4.0, 4.0)},  # where the tests draw each tensor's values
)
gelu_approx = SPEC.function
__all__ = ["gelu_approx"]
