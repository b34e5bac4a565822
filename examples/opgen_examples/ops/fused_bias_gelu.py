"""fused_bias_gelu: y = gelu_tanh(x + bias), bias broadcast over the leading dims of x, in one pass.

Kernels in csrc/fused_bias_gelu/; the GELU is gelu_approx's (csrc/gelu_approx/gelu_approx.h).
"""
import math

import torch
from torch import Tensor

from .._autograd import below_autograd, first_order_only, needs_autograd
from .._error_model import carried_error, rounding_error, sum_error
from .._spec import OpSpec, TensorArg

__all__ = ["fused_bias_gelu"]


def fused_bias_gelu(x: Tensor, bias: Tensor) -> Tensor:
    """tanh-approximation GELU of x + bias, with bias (1-D, x.size(-1) elements) added along the last dim.

    Reads x once and writes y once (eager PyTorch makes a round trip to memory for x + bias); the sum
    is taken in float (double for float64) and rounded once. float32, float16, bfloat16 and float64
    on CPU and CUDA, any shape and strides (the result is contiguous); differentiable in x and bias;
    traceable by torch.compile(fullgraph=True).
    """
    if needs_autograd(x, bias):
        return torch.ops.examples.fused_bias_gelu.default(x, bias)
    with below_autograd():  # no gradient needed: skip the autograd layer's Python (~10 us a call)
        return torch.ops.examples.fused_bias_gelu.default(x, bias)


def reference(x: Tensor, bias: Tensor) -> Tensor:
    """fused_bias_gelu in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return torch.nn.functional.gelu(x + bias, approximate="tanh")


def _check_bias(x: Tensor, bias: Tensor) -> None:
    torch._check(x.dim() >= 1, lambda: "x must have at least 1 dimension (the one bias is added along), got a scalar")
    torch._check(bias.dim() == 1, lambda: f"bias must have 1 dimension(s), got shape {tuple(bias.shape)}")
    torch._check(bias.shape[0] == x.shape[-1],
                 lambda: f"bias must have x.size(-1) = {x.shape[-1]} elements, got {bias.shape[0]}")


@torch.library.register_fake("examples::fused_bias_gelu")
def _(x: Tensor, bias: Tensor) -> Tensor:
    _check_bias(x, bias)
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.register_fake("examples::fused_bias_gelu_backward")
def _(grad: Tensor, x: Tensor, bias: Tensor) -> Tensor:
    _check_bias(x, bias)
    torch._check(grad.shape == x.shape, lambda: f"grad and x must have the same shape, got {grad.shape} and {x.shape}")
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _setup_context(ctx, inputs, output):
    x, bias = inputs
    ctx.save_for_backward(x, bias)


def _backward(ctx, grad: Tensor):
    x, bias = ctx.saved_tensors
    dz = torch.ops.examples.fused_bias_gelu_backward.default(grad, x, bias)  # d(x + bias)
    dbias = None
    if ctx.needs_input_grad[1]:
        dbias = dz.sum(dim=tuple(range(dz.dim() - 1))) if dz.dim() > 1 else dz  # sum(dim=()) would sum everything
    return dz if ctx.needs_input_grad[0] else None, dbias


torch.library.register_autograd("examples::fused_bias_gelu", _backward, setup_context=_setup_context)
first_order_only("examples::fused_bias_gelu_backward")


def grad_error_bound(dtype: torch.dtype, grad: Tensor, x: Tensor, bias: Tensor) -> dict[str, Tensor]:
    """What bias's gradient adds to its rounding (x's is one rounding of float math): it sums dz,
    each rounded to the dtype, over the rows (torch's sum, in float32); see _error_model.py."""
    z = (x + bias).requires_grad_()
    (dz,) = torch.autograd.grad(reference(z, torch.zeros_like(bias)), z, grad)
    rows = dz.reshape(math.prod(dz.shape[:-1]), dz.shape[-1])  # a 1-D x is one row
    carried = carried_error(rounding_error(rows, dtype).square().sum(0))
    return {"bias": carried + sum_error(rows.abs().sum(0), rows.shape[0], dtype)}


SPEC = OpSpec(
    name="fused_bias_gelu",
    op=torch.ops.examples.fused_bias_gelu.default,
    function=fused_bias_gelu,
    reference=reference,
    args={"x": TensorArg(), "bias": TensorArg(shape=lambda s: s[-1:])},  # bias along the last dim
    differentiable=("x", "bias"),
    grad_error_bound=grad_error_bound,
    # At least one dim (bias runs along the last), plus rows a whole number of 16-byte vectors wide
    # (the CUDA vector path) of several widths.
    shapes=[(0,), (1,), (7,), (1031,), (4, 0, 3), (33, 65), (3, 5, 1027), (70001,),
            (8,), (3, 16), (129, 24), (2, 3, 768), (1, 8192), (7001, 8)],
    large=True,
)
