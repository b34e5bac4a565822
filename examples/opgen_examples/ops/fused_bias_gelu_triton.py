"""fused_bias_gelu_triton: fused_bias_gelu (y = gelu_tanh(x + bias), bias broadcast over x's leading
dims) with its math in Triton, beside the CUDA C++ one, so the sweep puts the two side by side.

The math is the @triton.jit functions below (element by element, in float32; float64 for float64
tensors); the kernels, launchers, CPU path (the reference), autograd, tests and benchmark are
derived from SPEC, which the build reads too: keep its schema and kind literal.
"""

import torch
from torch import Tensor

from .._declare import TensorArg, declare
from .._triton import tl, triton

# A Triton kernel reads only constexpr globals; written right of a tensor (Triton's interpreter
# cannot take `constexpr * tensor`).
SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)
CUBIC = tl.constexpr(0.044715)


def reference(x: Tensor, bias: Tensor) -> Tensor:
    """fused_bias_gelu_triton in plain PyTorch: the tests hold the kernels to it in float64; CPU tensors run it."""
    return torch.nn.functional.gelu(x + bias, approximate="tanh")


# gelu_tanh(z) = 0.5 z (1 + tanh(u)) = z sigmoid(2u) for u = sqrt(2/pi) (z + 0.044715 z^3), z = x + bias.
@triton.jit
def forward(x, bias):
    z = x + bias
    return z * tl.sigmoid((z + z * z * z * CUBIC) * (2.0 * SQRT_2_OVER_PI))


# grad * dy/dx, grad * dy/dbias, given grad = dL/dy.
@triton.jit
def backward(grad, x, bias):
    z = x + bias
    s = tl.sigmoid((z + z * z * z * CUBIC) * (2.0 * SQRT_2_OVER_PI))
    dz = grad * (s + z * s * (1.0 - s) * (1.0 + z * z * (3.0 * CUBIC)) * (2.0 * SQRT_2_OVER_PI))
    return dz, dz


SPEC = declare(
    "fused_bias_gelu_triton(Tensor x, Tensor bias) -> Tensor",
    kind="elementwise",
    triton=(forward, backward),  # the math above: no C++
    broadcast=["bias"],  # over x's last dimensions
    reference=reference,
    args={"bias": TensorArg(shape=lambda s: s[-1:])},  # the tests draw bias along the last dim
    shapes=[(0,), (1,), (7,), (1031,), (4, 0, 3), (33, 65), (3, 5, 1027), (70001,), (129, 24), (2, 3, 768)],
)
fused_bias_gelu_triton = SPEC.function
__all__ = ["fused_bias_gelu_triton"]
