"""scale: y = x * factor, element-wise, kernels in csrc/scale/ (the math in scale.h).

The math is in csrc/scale/scale.h; the rest is derived from SPEC below,
which the build reads too: keep its schema and kind literal.
"""

import torch
from torch import Tensor

from .._declare import declare


def reference(x: Tensor, factor: float = 2.0) -> Tensor:
    """scale in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return x * factor


# scale is linear, so its backward is too: dx = grad * factor, whose derivative in grad is the same
# kernel again. Registered as such, scale is differentiable to any order.
def _setup_backward_context(ctx, inputs, output):
    _, x, factor = inputs
    ctx.save_for_backward(x)
    ctx.factor = factor


def _backward_of_backward(ctx, grad_dx: Tensor):
    (x,) = ctx.saved_tensors
    return torch.ops.examples.scale_backward.default(grad_dx, x, ctx.factor), None, None


SPEC = declare(
    "scale(Tensor x, float factor=2.0) -> Tensor",
    kind="elementwise",
    reference=reference,
    domain={"x": (-4.0, 4.0)},  # where the tests draw each tensor's values
    example={"factor": -1.37},  # the scalars tests and benchmarks pass
    first_order_only=False,
)
scale = SPEC.function
__all__ = ["scale"]


torch.library.register_autograd(
    "examples::scale_backward", _backward_of_backward, setup_context=_setup_backward_context
)
