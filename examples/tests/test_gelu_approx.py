"""gelu_approx: what is special to this op. The standard checks (the reference on every layout, dtype
and odd size, gradients, opcheck, torch.compile, bad input, streams, devices, threads, > 2**31
elements) run from its SPEC (opgen_examples/ops/gelu_approx.py) in test_opgen_conformance.py.

The values the standard checks draw come from each TensorArg's `domain` in SPEC (now -4..4):
narrow it there if gelu_approx is defined on part of the line only (x > 0 for a log, say).
"""
import opgen_testing as testing
import pytest
import torch

from opgen_examples.ops.gelu_approx import SPEC

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
