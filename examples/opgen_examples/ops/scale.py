"""scale: y = x * factor, element-wise, kernels in csrc/scale/ (the math in scale.h)."""
from __future__ import annotations

import torch
from torch import Tensor

from .._autograd import below_autograd, needs_autograd
from .._spec import OpSpec, TensorArg

__all__ = ["scale"]


def scale(x: Tensor, factor: float = 2.0) -> Tensor:
    """x * factor (default 2, the seed's x * 2).

    float32, float16, bfloat16 and float64 on CPU and CUDA, any shape and strides (the result is
    contiguous); differentiable in x, to any order; traceable by torch.compile(fullgraph=True).
    """
    if needs_autograd(x):
        return torch.ops.examples.scale.default(x, factor)
    with below_autograd():  # no gradient needed: skip the autograd layer's Python (~10 us a call)
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


# scale is linear, so its backward is too: dx = grad * factor, whose derivative in grad is the same
# kernel again. Registered as such, scale is differentiable to any order.
def _setup_backward_context(ctx, inputs, output):
    _, x, factor = inputs
    ctx.save_for_backward(x)
    ctx.factor = factor


def _backward_of_backward(ctx, grad_dx: Tensor):
    (x,) = ctx.saved_tensors
    return torch.ops.examples.scale_backward.default(grad_dx, x, ctx.factor), None, None


torch.library.register_autograd("examples::scale_backward", _backward_of_backward,
                                setup_context=_setup_backward_context)



SPEC = OpSpec(
    name="scale",
    op=torch.ops.examples.scale.default,
    function=scale,
    reference=reference,
    # The tensors are drawn from `domain`: narrow it where the math needs (e.g. x > 0 for a log).
    args={"x": TensorArg(domain=(-4.0, 4.0)), "factor": -1.37},  # not a power of two: the product is rounded
    kind="elementwise",
    differentiable=("x", ),
    first_order_only=False,  # differentiable to any order (see _backward_of_backward)
    large=True,
)
