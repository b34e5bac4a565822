"""gelu_approx: values against a float64 reference, gradients, opcheck, torch.compile, bad input."""
import math

import pytest
import torch

from opgen_examples import testing
from opgen_examples.ops.gelu_approx import gelu_approx, reference

OP = torch.ops.examples.gelu_approx.default
BACKWARD_OP = torch.ops.examples.gelu_approx_backward.default


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
@pytest.mark.parametrize("layout", testing.LAYOUTS)
@pytest.mark.parametrize("shape", testing.SHAPES)
def test_forward_matches_reference(shape, layout, dtype, device):
    x = testing.make_tensor(shape, dtype, device, layout)
    testing.assert_close(gelu_approx(x), reference(x.double()), dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
def test_backward_matches_reference(dtype, device):
    x = testing.make_tensor((37, 129), dtype, device).requires_grad_()
    grad = testing.make_tensor((37, 129), dtype, device)
    (dx,) = torch.autograd.grad(gelu_approx(x), x, grad)
    x64 = x.detach().double().requires_grad_()
    (expected,) = torch.autograd.grad(reference(x64), x64, grad.double())
    testing.assert_close(dx, expected, dtype)


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
def test_second_derivative_raises(device):
    testing.check_second_derivative_raises(gelu_approx, testing.make_tensor((4, 9), torch.float64, device))


@pytest.mark.parametrize("device", testing.DEVICES)
def test_gradcheck(device):
    testing.check_gradients(gelu_approx, testing.make_tensor((4, 33), torch.float64, device))


@pytest.mark.parametrize("device", testing.DEVICES)
def test_opcheck(device):
    for shape in [(7, 9), (0,), (1031,)]:
        x = testing.make_tensor(shape, torch.float32, device)
        testing.check_opcheck(OP, x)
        testing.check_opcheck(OP, x.clone().requires_grad_())
        testing.check_opcheck(BACKWARD_OP, testing.make_tensor(shape, torch.float32, device), x)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_torch_compile_fullgraph(device):
    x = testing.make_tensor((64, 33), torch.float32, device)
    testing.check_compiles(lambda t: gelu_approx(t * 2) + 1, x)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_rejects_integer_input(device):
    with pytest.raises(RuntimeError, match="x must be a floating-point tensor"):
        gelu_approx(torch.arange(6, device=device))


@pytest.mark.parametrize("device", testing.DEVICES)
def test_backward_rejects_mismatched_arguments(device):
    x = testing.make_tensor((4, 5), torch.float32, device)
    with pytest.raises(RuntimeError, match="grad and x must have the same shape"):
        BACKWARD_OP(testing.make_tensor((5, 4), torch.float32, device), x)
    with pytest.raises(RuntimeError, match="grad and x must have the same dtype"):
        BACKWARD_OP(x.double(), x)


@testing.requires_cuda
def test_rejects_tensors_on_different_devices():
    with pytest.raises(RuntimeError, match="grad and x must be on the same device"):
        BACKWARD_OP(torch.ones(3, device="cuda"), torch.ones(3))


@testing.requires_cuda
def test_runs_on_the_current_stream():
    x = testing.make_tensor((1 << 20,), torch.float32, "cuda")
    y = testing.call_on_side_stream(gelu_approx, x)
    testing.assert_close(y, reference(x.double()))


@testing.requires_cuda_memory(24)
def test_more_than_2_to_the_31_elements():
    n = 2**31 + 77
    x = torch.empty(n, dtype=torch.float16, device="cuda").uniform_(-4, 4)
    y = gelu_approx(x)
    for part in (slice(0, 4096), slice(2**31 - 4096, 2**31 + 4096), slice(n - 4096, n)):
        testing.assert_close(y[part], reference(x[part].double()), torch.float16)
