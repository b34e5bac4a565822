"""gelu_approx: element-wise tanh GELU, kernels in csrc/gelu_approx/ (math in gelu_approx.h).

y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), i.e. torch.nn.functional.gelu(x, approximate="tanh").
"""
import torch
from torch import Tensor

from .._autograd import first_order_only

__all__ = ["gelu_approx"]


def gelu_approx(x: Tensor) -> Tensor:
    """tanh-approximation GELU of x, element-wise.

    Computed as x * sigmoid(2u) in float (double for float64): finite for every finite input and
    within a few ulp of the float64 result (more accurate than the tanh form for negative x).
    float32, float16, bfloat16 and float64 on CPU and CUDA, any shape and strides (the result is
    contiguous); differentiable; traceable by torch.compile(fullgraph=True).
    """
    return torch.ops.examples.gelu_approx.default(x)


def reference(x: Tensor) -> Tensor:
    """gelu_approx in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return torch.nn.functional.gelu(x, approximate="tanh")


@torch.library.register_fake("examples::gelu_approx")
def _(x: Tensor) -> Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.register_fake("examples::gelu_approx_backward")
def _(grad: Tensor, x: Tensor) -> Tensor:
    torch._check(grad.shape == x.shape, lambda: f"grad and x must have the same shape, got {grad.shape} and {x.shape}")
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _setup_context(ctx, inputs, output):
    (x,) = inputs
    ctx.save_for_backward(x)


def _backward(ctx, grad: Tensor):
    (x,) = ctx.saved_tensors
    return torch.ops.examples.gelu_approx_backward.default(grad, x)


torch.library.register_autograd("examples::gelu_approx", _backward, setup_context=_setup_context)
first_order_only("examples::gelu_approx_backward")
