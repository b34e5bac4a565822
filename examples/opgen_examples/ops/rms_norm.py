"""rms_norm: RMSNorm, x * weight / sqrt(mean(x^2) + eps) over the last dimension, with the math in csrc/rms_norm/rms_norm.h.

The math is in csrc/rms_norm/rms_norm.h; the rest is derived from SPEC below,
which the build reads too: keep its schema and kind literal.
"""

from torch import Tensor

from .._declare import declare


def reference(x: Tensor, weight: Tensor, eps: float = 1e-6) -> Tensor:
    """rms_norm in plain PyTorch: the tests hold the kernels to it in float64."""
    return x * (x.square().mean(dim=-1, keepdim=True) + eps).rsqrt() * weight


SPEC = declare(
    "rms_norm(Tensor x, Tensor weight, float eps=1e-6) -> Tensor",
    kind="rowwise",  # the math sees one row of x's last dimension (d) at a time
    broadcast=["weight"],  # one vector of d elements every row reads
    reference=reference,
    domain={"x": (-4.0, 4.0), "weight": (-4.0, 4.0)},  # where the tests draw each tensor's values
    example={"eps": 1e-6},  # the scalars tests and benchmarks pass
)
rms_norm = SPEC.function
__all__ = ["rms_norm"]
