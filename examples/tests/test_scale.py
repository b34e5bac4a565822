"""scale: what is special to this op (the default factor, other factors, inf * 0, second
derivatives). The standard checks (the reference on every layout, dtype and odd size, gradients,
opcheck, torch.compile, bad input, streams, devices, threads, > 2**31 elements) run from its SPEC
(opgen_examples/ops/scale.py) in test_opgen_conformance.py.

The values the standard checks draw come from each TensorArg's `domain` in SPEC (now -4..4):
narrow it there if scale is defined on part of the line only (x > 0 for a log, say).
"""
import opgen_testing as testing
import pytest
import torch

from opgen_examples.ops.scale import SPEC, reference, scale

OP = torch.ops.examples.scale.default
FACTOR = SPEC.args["factor"]  # -1.37: not a power of two, the product is rounded

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
def test_default_factor_is_two(device):
    x = testing.make_tensor((1031,), torch.float32, device)
    torch.testing.assert_close(scale(x), x * 2, rtol=0, atol=0)
    torch.testing.assert_close(OP(x), x * 2, rtol=0, atol=0)
    testing.check_opcheck(OP, x)
    testing.check_gradients(scale, testing.make_tensor((5,), torch.float64, device))


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("factor", [0.0, 1.0, 3, -0.5, 1e-3])
def test_factors(factor, device):
    x = testing.make_tensor((33, 65), torch.float32, device, "misaligned")
    testing.assert_close(scale(x, factor), reference(x.double(), factor))


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("factor", [FACTOR, 0.0])
def test_nan_and_inf_like_reference(factor, dtype, device):
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0], dtype=dtype, device=device)
    y = scale(x, factor)  # NaN stays NaN; inf * 0 is NaN, as in x * factor
    testing.assert_close(y, reference(x.double(), factor), dtype)
    assert y[0].isnan() and y[3].isfinite()


@pytest.mark.parametrize("device", testing.DEVICES)
def test_gradgradcheck(device):
    x = testing.make_tensor((4, 9), torch.float64, device).requires_grad_()
    assert torch.autograd.gradgradcheck(lambda t: scale(t, FACTOR) * t, (x,))
