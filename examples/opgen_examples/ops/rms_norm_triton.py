"""rms_norm_triton: RMSNorm, x * weight / sqrt(mean(x^2) + eps) over the last dimension, with its math in Triton.

The math is the @triton.jit functions below: each sees [ROWS, BLOCK] tiles of whole rows of
x's last dimension (d elements, zero past d; cols is each column's index, d the row length),
in float32 (float64 for float64). The kernels, launchers, CPU path (the reference), autograd, tests
and benchmark are derived from SPEC, which the build reads too: keep its schema and kind literal.
"""

from torch import Tensor

from .._declare import declare
from .._triton import tl, triton


def reference(x: Tensor, weight: Tensor, eps: float = 1e-6) -> Tensor:
    """rms_norm_triton in plain PyTorch: the tests hold the kernels to it in float64; CPU tensors run it."""
    return x * (x.square().mean(dim=-1, keepdim=True) + eps).rsqrt() * weight


# s = 1 / sqrt(mean(x^2) + eps) per row (x is zero past d, so the sum needs no mask).
@triton.jit
def forward(x, weight, eps, cols, d):
    scale = tl.rsqrt(tl.sum(x * x, axis=1)[:, None] / tl.maximum(d, 1) + eps)
    return x * scale * weight


# The gradients of x, weight from grad, the result's: one tile each.
# dx = s (g w - x s^2 mean(g w x)), dw = g x s.
@triton.jit
def backward(grad, x, weight, eps, cols, d):
    n = tl.maximum(d, 1)
    scale = tl.rsqrt(tl.sum(x * x, axis=1)[:, None] / n + eps)
    dot = tl.sum(grad * weight * x, axis=1)[:, None] / n
    return scale * (grad * weight - x * scale * scale * dot), grad * x * scale


SPEC = declare(
    "rms_norm_triton(Tensor x, Tensor weight, float eps=1e-6) -> Tensor",
    kind="rowwise",  # the math sees whole rows of x's last dimension (d <= 65536)
    triton=(forward, backward),  # the math above: no C++
    broadcast=["weight"],  # one vector of d elements every row reads
    reference=reference,
    domain={"x": (-4.0, 4.0), "weight": (-4.0, 4.0)},  # where the tests draw each tensor's values
    example={"eps": 1e-6},  # the scalars tests and benchmarks pass
)
rms_norm_triton = SPEC.function
__all__ = ["rms_norm_triton"]
