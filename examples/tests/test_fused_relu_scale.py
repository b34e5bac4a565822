"""fused_relu_scale: what is special to this op (other alphas, relu at -0, inf and NaN, the gradient
at 0, the backward op on its own, the seed's model built on it). The standard checks (the reference
on every layout, dtype and odd size, gradients, opcheck, torch.compile, bad input, streams, devices,
threads, > 2**31 elements) run from its SPEC (opgen_examples/ops/fused_relu_scale.py) in
test_opgen_conformance.py.

The values the standard checks draw come from each TensorArg's `domain` in SPEC (now -4..4):
narrow it there if fused_relu_scale is defined on part of the line only (x > 0 for a log, say).
"""
import opgen_testing as testing
import pytest
import torch

from opgen_examples.ops.fused_relu_scale import SPEC, ReluScaleModel, fused_relu_scale, reference

BACKWARD_OP = torch.ops.examples.fused_relu_scale_backward.default
ALPHA = SPEC.args["alpha"]  # 1.5, the seed's

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
def test_backward_op_opcheck_and_bad_input(device):
    for shape in [(7, 9), (0,), (1031,)]:
        testing.check_opcheck(BACKWARD_OP, testing.make_tensor(shape, torch.float32, device),
                              testing.make_tensor(shape, torch.float32, device), ALPHA)
    x = testing.make_tensor((4, 5), torch.float32, device)
    with pytest.raises(RuntimeError, match="grad and x must have the same shape"):
        BACKWARD_OP(testing.make_tensor((5, 4), torch.float32, device), x, ALPHA)
    with pytest.raises(RuntimeError, match="grad and x must have the same dtype"):
        BACKWARD_OP(x.double(), x, ALPHA)


@testing.requires_cuda
def test_backward_op_refuses_tensors_on_different_devices():
    with pytest.raises(RuntimeError, match="grad and x must be on the same device"):
        BACKWARD_OP(torch.ones(3, device="cuda"), torch.ones(3), ALPHA)


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
