"""gelu_approx: what is special to this op (extreme inputs that overflow or cancel in a naive tanh
GELU, the negative tail's relative accuracy, NaN and infinities, the backward op on its own). The
standard checks (the reference on every layout, dtype and odd size, gradients, opcheck,
torch.compile, bad input, streams, devices, threads, > 2**31 elements) run from its SPEC
(opgen_examples/ops/gelu_approx.py) in test_opgen_conformance.py.

The values the standard checks draw come from each TensorArg's `domain` in SPEC (now -4..4):
narrow it there if gelu_approx is defined on part of the line only (x > 0 for a log, say).
"""
import math

import opgen_testing as testing
import pytest
import torch

from opgen_examples.ops.gelu_approx import SPEC, gelu_approx, reference

BACKWARD_OP = torch.ops.examples.gelu_approx_backward.default

SPECIAL_VALUES = [0.0, -0.0, 1e-30, -1e-30, 1e30, -1e30, float("inf"), float("-inf"), float("nan")]


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_special_values_match_the_reference(dtype, device):
    """Zeros, tiny and huge values, infinities and NaN: the kernel's math agrees with the reference."""
    values = torch.tensor(SPECIAL_VALUES, dtype=dtype, device=device)
    args = testing.draw(SPEC, values.shape, dtype, device)
    for name in SPEC.tensor_args:
        args[name] = values.clone()
    expected = testing.reference_in_float64(SPEC, args)
    testing.assert_matches(SPEC, testing.call(SPEC, args), expected, dtype)


def _extreme_values(dtype):
    """Values where a naive tanh GELU overflows (x^3, exp) or cancels (1 + tanh ~ 0)."""
    big = min(torch.finfo(dtype).max, 1e100)  # the float64 reference itself overflows at x^3 > 1e308
    values = [100.0, 1e4, 65504.0, big, 9.0, 10.5, 30.0, torch.finfo(dtype).tiny, 1e-30, 0.0]
    return torch.tensor([v for m in values for v in (m, -m)], dtype=torch.float64).to(dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
def test_extreme_inputs_stay_finite_and_accurate(dtype, device):
    x = _extreme_values(dtype).to(device).requires_grad_()
    y = gelu_approx(x)
    (dx,) = torch.autograd.grad(y, x, torch.ones_like(y))
    assert torch.isfinite(y).all() and torch.isfinite(dx).all(), (y, dx)
    x64 = x.detach().double().requires_grad_()
    y64 = reference(x64)
    (dx64,) = torch.autograd.grad(y64, x64, torch.ones_like(y64))
    testing.assert_close(y, y64, dtype)
    testing.assert_close(dx, dx64, dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_negative_tail_keeps_relative_accuracy(device):
    # 1 + tanh(u) cancels for negative x (float32 torch.nn.functional.gelu is off by 6e-4 relative
    # at x = -4 and returns 0 below -5; float64 cancels past -6); x * sigmoid(2u), the same function,
    # does not: the float32 result stays within the float32 tolerance without any absolute slack.
    x = torch.linspace(-9, -3, 1001, dtype=torch.float32, device=device)
    x64 = x.double()
    expected = x64 * torch.sigmoid(2 * math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64**3))
    torch.testing.assert_close(gelu_approx(x).double(), expected, rtol=testing.tolerances(torch.float32)[0], atol=0)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_nan_propagates(device):
    x = torch.tensor([float("nan"), 1.0], device=device)
    assert gelu_approx(x)[0].isnan() and not gelu_approx(x)[1].isnan()
    assert BACKWARD_OP(torch.ones_like(x), x)[0].isnan()


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
def test_infinities_like_reference(dtype, device):
    # gelu(inf) = inf; at -inf the reference's 0.5 x (1 + tanh) is -inf * 0 = NaN, and so is ours.
    x = torch.tensor([float("inf"), -float("inf"), float("nan")], dtype=dtype, device=device)
    y = gelu_approx(x)
    testing.assert_close(y, reference(x.double()), dtype)
    assert y[0] == float("inf")


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("x_layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("grad_layout", testing.LAYOUTS)
def test_backward_op_with_any_strides(grad_layout, x_layout, device):
    grad = testing.make_tensor((33, 65), torch.float32, device, grad_layout)
    x = testing.make_tensor((33, 65), torch.float32, device, x_layout)
    testing.check_backward_op(BACKWARD_OP, reference, grad, x)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_backward_op_opcheck_and_bad_input(device):
    for shape in [(7, 9), (0,), (1031,)]:
        testing.check_opcheck(BACKWARD_OP, testing.make_tensor(shape, torch.float32, device),
                              testing.make_tensor(shape, torch.float32, device))
    x = testing.make_tensor((4, 5), torch.float32, device)
    with pytest.raises(RuntimeError, match="grad and x must have the same shape"):
        BACKWARD_OP(testing.make_tensor((5, 4), torch.float32, device), x)
    with pytest.raises(RuntimeError, match="grad and x must have the same dtype"):
        BACKWARD_OP(x.double(), x)


@testing.requires_cuda
def test_backward_op_refuses_tensors_on_different_devices():
    with pytest.raises(RuntimeError, match="grad and x must be on the same device"):
        BACKWARD_OP(torch.ones(3, device="cuda"), torch.ones(3))
