"""fused_relu_scale: element-wise, kernels in csrc/fused_relu_scale/ (the math in fused_relu_scale.h)."""
from __future__ import annotations

import torch
from torch import Tensor

from .._autograd import first_order_only
from .._spec import OpSpec, TensorArg

__all__ = ["fused_relu_scale"]


def fused_relu_scale(x: Tensor, alpha: float) -> Tensor:
    """Apply fused_relu_scale element-wise.

    x: float32, float16, bfloat16 or float64 tensors of one shape, dtype and device (CPU or CUDA),
    any strides; the result is contiguous. Differentiable; traceable by torch.compile(fullgraph=True).
    """
    return torch.ops.examples.fused_relu_scale.default(x, alpha)


def reference(x: Tensor, alpha: float) -> Tensor:
    """fused_relu_scale in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return x * alpha


@torch.library.register_fake("examples::fused_relu_scale")
def _(x: Tensor, alpha: float) -> Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.register_fake("examples::fused_relu_scale_backward")
def _(grad, x, alpha) -> Tensor:
    return torch.empty_like(grad, memory_format=torch.contiguous_format)


def _setup_context(ctx, inputs, output):
    x, alpha = inputs
    ctx.save_for_backward(x)
    ctx.alpha = alpha


def _backward(ctx, grad: Tensor):
    (x,) = ctx.saved_tensors
    dx = torch.ops.examples.fused_relu_scale_backward.default(grad, x, ctx.alpha)
    return dx, None


torch.library.register_autograd("examples::fused_relu_scale", _backward, setup_context=_setup_context)
first_order_only("examples::fused_relu_scale_backward")



SPEC = OpSpec(
    name="fused_relu_scale",
    op=torch.ops.examples.fused_relu_scale.default,
    function=fused_relu_scale,
    reference=reference,
    # The tensors are drawn from `domain`: narrow it where the math needs (e.g. x > 0 for a log).
    args={"x": TensorArg(domain=(-4.0, 4.0)), "alpha": 1.5},
    kind="elementwise",
    differentiable=("x", ),
    large=True,
)
