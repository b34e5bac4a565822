"""fused_relu_scale: y = max(x, 0) * alpha, element-wise in one pass, kernels in
csrc/fused_relu_scale/ (the math in fused_relu_scale.h); ReluScaleModel uses it inside an nn.Module."""
from __future__ import annotations

import torch
from torch import Tensor

from .._autograd import below_autograd, first_order_only, needs_autograd
from .._spec import OpSpec, TensorArg

__all__ = ["fused_relu_scale", "ReluScaleModel"]


def fused_relu_scale(x: Tensor, alpha: float) -> Tensor:
    """relu(x) * alpha in one kernel (eager PyTorch runs two and moves twice the bytes).

    float32, float16, bfloat16 and float64 on CPU and CUDA, any shape and strides (the result is
    contiguous); differentiable in x; traceable by torch.compile(fullgraph=True).
    """
    if needs_autograd(x):
        return torch.ops.examples.fused_relu_scale.default(x, alpha)
    with below_autograd():  # no gradient needed: skip the autograd layer's Python (~10 us a call)
        return torch.ops.examples.fused_relu_scale.default(x, alpha)


def reference(x: Tensor, alpha: float) -> Tensor:
    """fused_relu_scale in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return torch.relu(x) * alpha


def naive(x: Tensor, alpha: float) -> Tensor:
    """The seed's kernel (float32 on CUDA, one thread per element, int index): a benchmark baseline."""
    return torch.ops.examples.fused_relu_scale_naive.default(x, alpha)


class ReluScaleModel(torch.nn.Module):
    """The seed's model: Linear(features, features), then fused_relu_scale(alpha)."""

    def __init__(self, features: int = 100, alpha: float = 1.5):
        super().__init__()
        self.linear = torch.nn.Linear(features, features)
        self.alpha = alpha

    def forward(self, x: Tensor) -> Tensor:
        return fused_relu_scale(self.linear(x), alpha=self.alpha)


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


@torch.library.register_fake("examples::fused_relu_scale_naive")
def _(x: Tensor, alpha: float) -> Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)



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
