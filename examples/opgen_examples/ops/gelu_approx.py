"""gelu_approx: element-wise tanh GELU, kernels in csrc/gelu_approx/ (the math in gelu_approx.h).

y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), i.e. torch.nn.functional.gelu(x, approximate="tanh").
"""
from __future__ import annotations

import torch
from torch import Tensor

from .._autograd import below_autograd, first_order_only, needs_autograd
from .._spec import OpSpec, TensorArg

__all__ = ["gelu_approx"]


def gelu_approx(x: Tensor) -> Tensor:
    """tanh-approximation GELU of x, element-wise.

    Computed as x * sigmoid(2u) in float (double for float64): finite for every finite input and
    within a few ulp of the float64 result (more accurate than the tanh form for negative x).
    float32, float16, bfloat16 and float64 on CPU and CUDA, any shape and strides (the result is
    contiguous); differentiable; traceable by torch.compile(fullgraph=True).
    """
    if needs_autograd(x):
        return torch.ops.examples.gelu_approx.default(x)
    with below_autograd():  # no gradient needed: skip the autograd layer's Python (~10 us a call)
        return torch.ops.examples.gelu_approx.default(x)


def reference(x: Tensor) -> Tensor:
    """gelu_approx in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return torch.nn.functional.gelu(x, approximate="tanh")


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
