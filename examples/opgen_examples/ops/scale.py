"""scale: element-wise, kernels in csrc/scale/ (the math in scale.h)."""
from __future__ import annotations

import torch
from torch import Tensor

from .._autograd import first_order_only
from .._spec import OpSpec, TensorArg

__all__ = ["scale"]


def scale(x: Tensor, factor: float = 2.0) -> Tensor:
    """Apply scale element-wise.

    x: float32, float16, bfloat16 or float64 tensors of one shape, dtype and device (CPU or CUDA),
    any strides; the result is contiguous. Differentiable; traceable by torch.compile(fullgraph=True).
    """
    return torch.ops.examples.scale.default(x, factor)


def reference(x: Tensor, factor: float = 2.0) -> Tensor:
    """scale in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return x * factor


@torch.library.register_fake("examples::scale")
def _(x: Tensor, factor: float = 2.0) -> Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.register_fake("examples::scale_backward")
def _(grad, x, factor) -> Tensor:
    return torch.empty_like(grad, memory_format=torch.contiguous_format)


def _setup_context(ctx, inputs, output):
    x, factor = inputs
    ctx.save_for_backward(x)
    ctx.factor = factor


def _backward(ctx, grad: Tensor):
    (x,) = ctx.saved_tensors
    dx = torch.ops.examples.scale_backward.default(grad, x, ctx.factor)
    return dx, None


torch.library.register_autograd("examples::scale", _backward, setup_context=_setup_context)
first_order_only("examples::scale_backward")



SPEC = OpSpec(
    name="scale",
    op=torch.ops.examples.scale.default,
    function=scale,
    reference=reference,
    # The tensors are drawn from `domain`: narrow it where the math needs (e.g. x > 0 for a log).
    args={"x": TensorArg(domain=(-4.0, 4.0)), "factor": 2.0},
    kind="elementwise",
    differentiable=("x", ),
    large=True,
)
