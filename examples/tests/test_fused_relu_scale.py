"""fused_relu_scale: values against a float64 reference, gradients, opcheck, torch.compile, bad
input, and the seed's model (Linear then fused_relu_scale) built on it."""
import pytest
import torch

from opgen_examples import testing
from opgen_examples.ops.fused_relu_scale import ReluScaleModel, fused_relu_scale, reference

OP = torch.ops.examples.fused_relu_scale.default
BACKWARD_OP = torch.ops.examples.fused_relu_scale_backward.default
ALPHA = 1.5  # the seed's


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
@pytest.mark.parametrize("layout", testing.LAYOUTS)
@pytest.mark.parametrize("shape", testing.SHAPES)
def test_forward_matches_reference(shape, layout, dtype, device):
    x = testing.make_tensor(shape, dtype, device, layout)
    testing.assert_close(fused_relu_scale(x, ALPHA), reference(x.double(), ALPHA), dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("alpha", [0.0, -0.7, 3])
def test_other_alphas(alpha, device):
    x = testing.make_tensor((1031,), torch.float32, device)
    testing.assert_close(fused_relu_scale(x, alpha), reference(x.double(), alpha))


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("alpha", [ALPHA, 0.0, -0.7])
def test_special_values_behave_like_relu(alpha, dtype, device):
    # NaN stays NaN; with alpha = 0, relu(inf) * 0 is NaN, as in the reference.
    x = torch.tensor([float("-inf"), -1.0, -0.0, 0.0, 1.0, float("inf"), float("nan")], dtype=dtype, device=device)
    y = fused_relu_scale(x, alpha)
    testing.assert_close(y, reference(x.double(), alpha), dtype)
    assert y[-1].isnan()


@pytest.mark.parametrize("device", testing.DEVICES)
def test_backward_at_special_values_matches_relu(device):
    # torch.relu passes the gradient through at +inf and NaN (NaN <= 0 is false), and blocks it at 0.
    x = torch.tensor([float("-inf"), -1.0, -0.0, 0.0, 1.0, float("inf"), float("nan")], device=device)
    grad = torch.full_like(x, 2.0)
    x64 = x.double().requires_grad_()
    (expected,) = torch.autograd.grad(reference(x64, ALPHA), x64, grad.double())
    testing.assert_close(BACKWARD_OP(grad, x, ALPHA), expected)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
def test_backward_matches_reference(dtype, device):
    x = testing.make_tensor((37, 129), dtype, device).requires_grad_()
    grad = testing.make_tensor((37, 129), dtype, device)
    (dx,) = torch.autograd.grad(fused_relu_scale(x, ALPHA), x, grad)
    x64 = x.detach().double().requires_grad_()
    (expected,) = torch.autograd.grad(reference(x64, ALPHA), x64, grad.double())
    testing.assert_close(dx, expected, dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_gradient_at_zero_is_zero(device):
    x = torch.zeros(5, device=device, requires_grad=True)
    (dx,) = torch.autograd.grad(fused_relu_scale(x, ALPHA).sum(), x)
    assert torch.equal(dx, torch.zeros_like(dx))


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("x_layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("grad_layout", testing.LAYOUTS)
def test_backward_op_with_any_strides(grad_layout, x_layout, device):
    grad = testing.make_tensor((33, 65), torch.float32, device, grad_layout)
    x = testing.make_tensor((33, 65), torch.float32, device, x_layout)
    x64 = x.double().requires_grad_()
    (expected,) = torch.autograd.grad(reference(x64, ALPHA), x64, grad.double())
    testing.assert_close(BACKWARD_OP(grad, x, ALPHA), expected)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_second_derivative_raises(device):
    x = testing.make_tensor((4, 9), torch.float64, device)
    testing.check_second_derivative_raises(lambda t: fused_relu_scale(t, ALPHA), x)
