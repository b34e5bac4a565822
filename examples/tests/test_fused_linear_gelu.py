"""fused_linear_gelu: values against a float64 reference, gradients, opcheck, torch.compile, bad input."""
import contextlib

import pytest
import torch

from opgen_examples import testing
from opgen_examples.ops.fused_linear_gelu import fused_linear_gelu, reference

OP = torch.ops.examples.fused_linear_gelu.default

# (x shape, out_features): odd sizes, leading dims, 1-D x, empty batch, in_features or out_features
# of 0 or 1 (where cuBLASLt is skipped), sizes cuBLASLt vectorizes.
CASES = [
    ((3, 5, 17), 13),
    ((17,), 13),
    ((0, 17), 13),
    ((2, 0, 17), 13),
    ((4, 0), 3),
    ((5, 17), 0),
    ((1, 17), 13),
    ((5, 1), 13),
    ((5, 17), 1),
    ((64, 96), 40),
    ((2, 33, 128), 72),
]


def _inputs(x_shape, out_features, dtype, device, x_layout="contiguous", weight_layout="contiguous"):
    # Values in [-1, 1]: pre-activations of order 1, where the GELU is neither linear nor zero.
    x = testing.make_tensor(x_shape, dtype, device, x_layout, low=-1, high=1)
    weight = testing.make_tensor((out_features, x_shape[-1]), dtype, device, weight_layout, low=-1, high=1)
    bias = testing.make_tensor((out_features,), dtype, device, low=-1, high=1)
    return x, weight, bias


def _as_float64(*tensors):
    return [t.detach().double().requires_grad_(t.requires_grad) for t in tensors]


@contextlib.contextmanager
def _tf32(allowed: bool):
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = allowed
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_forward_matches_reference(case, dtype, device):
    x, weight, bias = _inputs(*case, dtype, device)
    testing.assert_close(fused_linear_gelu(x, weight, bias), reference(*_as_float64(x, weight, bias)), dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("x_layout", testing.LAYOUTS)
@pytest.mark.parametrize("weight_layout", testing.LAYOUTS)
def test_forward_with_any_strides(weight_layout, x_layout, dtype, device):
    x, weight, bias = _inputs((3, 7, 24), 20, dtype, device, x_layout, weight_layout)
    testing.assert_close(fused_linear_gelu(x, weight, bias), reference(*_as_float64(x, weight, bias)), dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("bias_layout", ["strided", "misaligned"])
def test_non_contiguous_or_misaligned_bias(bias_layout, dtype, device):
    x, weight, _ = _inputs((3, 7, 24), 20, dtype, device)
    bias = testing.make_tensor((20,), dtype, device, bias_layout, low=-1, high=1)
    testing.assert_close(fused_linear_gelu(x, weight, bias), reference(*_as_float64(x, weight, bias)), dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
@pytest.mark.parametrize("case", [((3, 5, 17), 13), ((17,), 13), ((0, 17), 13)], ids=str)
def test_backward_matches_reference(case, dtype, device):
    inputs = [t.requires_grad_() for t in _inputs(*case, dtype, device)]
    y = fused_linear_gelu(*inputs)
    grad = testing.make_tensor(y.shape, dtype, device, low=-1, high=1)
    grads = torch.autograd.grad(y, inputs, grad)
    inputs64 = _as_float64(*inputs)
    expected = torch.autograd.grad(reference(*inputs64), inputs64, grad.double())
    for actual, want in zip(grads, expected):
        testing.assert_close(actual, want, dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("case", [((2, 3, 5), 6), ((5,), 4), ((3, 0), 2)], ids=str)
def test_gradcheck(case, device):
    testing.check_gradients(fused_linear_gelu, *_inputs(*case, torch.float64, device))


@pytest.mark.parametrize("device", testing.DEVICES)
def test_second_derivative_raises(device):
    testing.check_second_derivative_raises(fused_linear_gelu, *_inputs((3, 5), 4, torch.float64, device))
