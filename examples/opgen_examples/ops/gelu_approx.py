"""gelu_approx: element-wise, kernels in csrc/gelu_approx/ (the math in gelu_approx.h)."""
from __future__ import annotations

import torch
from torch import Tensor

from .._autograd import first_order_only
from .._spec import OpSpec, TensorArg

__all__ = ["gelu_approx"]


def gelu_approx(x: Tensor) -> Tensor:
    """Apply gelu_approx element-wise.

    x: float32, float16, bfloat16 or float64 tensors of one shape, dtype and device (CPU or CUDA),
    any strides; the result is contiguous. Differentiable; traceable by torch.compile(fullgraph=True).
    """
    return torch.ops.examples.gelu_approx.default(x)


def reference(x: Tensor) -> Tensor:
    """gelu_approx in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return x * torch.sigmoid(x)


@torch.library.register_fake("examples::gelu_approx")
def _(x: Tensor) -> Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.register_fake("examples::gelu_approx_backward")
def _(grad, x) -> Tensor:
    return torch.empty_like(grad, memory_format=torch.contiguous_format)


def _setup_context(ctx, inputs, output):
    (x,) = inputs
    ctx.save_for_backward(x)


def _backward(ctx, grad: Tensor):
    (x,) = ctx.saved_tensors
    dx = torch.ops.examples.gelu_approx_backward.default(grad, x)
    return dx


torch.library.register_autograd("examples::gelu_approx", _backward, setup_context=_setup_context)
first_order_only("examples::gelu_approx_backward")



SPEC = OpSpec(
    name="gelu_approx",
    op=torch.ops.examples.gelu_approx.default,
    function=gelu_approx,
    reference=reference,
    # The tensors are drawn from `domain`: narrow it where the math needs (e.g. x > 0 for a log).
    args={"x": TensorArg(domain=(-4.0, 4.0))},
    kind="elementwise",
    differentiable=("x", ),
    large=True,
)
