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
    testing.check_backward_op(lambda g, t: BACKWARD_OP(g, t, ALPHA), lambda t: reference(t, ALPHA), grad, x)


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
    testing.check_backward_op(lambda g, t: BACKWARD_OP(g, t, ALPHA), lambda t: reference(t, ALPHA), grad, x)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_second_derivative_raises(device):
    x = testing.make_tensor((4, 9), torch.float64, device)
    testing.check_second_derivative_raises(lambda t: fused_relu_scale(t, ALPHA), x)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_gradcheck(device):
    testing.check_gradients(lambda x: fused_relu_scale(x, ALPHA), testing.make_tensor((4, 33), torch.float64, device))


@pytest.mark.parametrize("device", testing.DEVICES)
def test_opcheck(device):
    for shape in [(7, 9), (0,), (1031,)]:
        x = testing.make_tensor(shape, torch.float32, device)
        testing.check_opcheck(OP, x, ALPHA)
        testing.check_opcheck(OP, x.clone().requires_grad_(), ALPHA)
        testing.check_opcheck(BACKWARD_OP, testing.make_tensor(shape, torch.float32, device), x, ALPHA)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_torch_compile_fullgraph(device):
    x = testing.make_tensor((64, 33), torch.float32, device)
    testing.check_compiles(lambda t: fused_relu_scale(t * 2, ALPHA) + 1, x)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_rejects_integer_input(device):
    with pytest.raises(RuntimeError, match="x must be a floating-point tensor"):
        fused_relu_scale(torch.arange(6, device=device), ALPHA)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_backward_rejects_mismatched_arguments(device):
    x = testing.make_tensor((4, 5), torch.float32, device)
    with pytest.raises(RuntimeError, match="grad and x must have the same shape"):
        BACKWARD_OP(testing.make_tensor((5, 4), torch.float32, device), x, ALPHA)
    with pytest.raises(RuntimeError, match="grad and x must have the same dtype"):
        BACKWARD_OP(x.double(), x, ALPHA)


@testing.requires_cuda
def test_rejects_tensors_on_different_devices():
    with pytest.raises(RuntimeError, match="grad and x must be on the same device"):
        BACKWARD_OP(torch.ones(3, device="cuda"), torch.ones(3), ALPHA)


@testing.requires_cuda
def test_runs_on_the_current_stream():
    x = testing.make_tensor((1 << 20,), torch.float32, "cuda")
    y = testing.call_on_side_stream(lambda t: fused_relu_scale(t, ALPHA), x)
    testing.assert_close(y, reference(x.double(), ALPHA))


@testing.requires_cuda_memory(24)
def test_more_than_2_to_the_31_elements():
    n = 2**31 + 77
    x = torch.empty(n, dtype=torch.float16, device="cuda").uniform_(-4, 4)
    y = fused_relu_scale(x, ALPHA)
    for part in (slice(0, 4096), slice(2**31 - 4096, 2**31 + 4096), slice(n - 4096, n)):
        testing.assert_close(y[part], reference(x[part].double(), ALPHA), torch.float16)


# The seed's use: a model whose forward is Linear(100, 100) then fused_relu_scale(alpha=1.5).


def _model_and_reference(device):
    torch.manual_seed(0)
    model = ReluScaleModel().to(device)
    plain = torch.nn.Linear(100, 100).to(device)
    plain.load_state_dict(model.linear.state_dict())
    return model, lambda x: reference(plain(x), ALPHA), plain


@pytest.mark.parametrize("device", testing.DEVICES)
def test_model_forward_and_backward_match_plain_pytorch(device):
    model, plain_forward, plain = _model_and_reference(device)
    x = testing.make_tensor((32, 100), torch.float32, device)
    grad = testing.make_tensor((32, 100), torch.float32, device)
    y = model(x)
    expected = plain_forward(x)
    assert y.shape == (32, 100)
    torch.testing.assert_close(y, expected)
    y.backward(grad)
    expected.backward(grad)
    torch.testing.assert_close(model.linear.weight.grad, plain.weight.grad)
    torch.testing.assert_close(model.linear.bias.grad, plain.bias.grad)
    assert model.linear.weight.grad.abs().sum() > 0


@pytest.mark.parametrize("device", testing.DEVICES)
def test_model_compiles_fullgraph(device):
    model, _, _ = _model_and_reference(device)
    testing.check_compiles(model, testing.make_tensor((32, 100), torch.float32, device))
