"""custom_add (CPU only): what is special to this op (mixed layouts, NaN and inf combinations, no
broadcasting, a clear error for CUDA tensors). The standard checks (the reference on every layout,
dtype and odd size, gradients, opcheck, torch.compile, bad input, threads) run from its SPEC
(opgen_examples/ops/custom_add.py) in test_opgen_conformance.py, on the CPU only.
"""
import opgen_testing as testing
import pytest
import torch

from opgen_examples.ops.custom_add import custom_add, reference


def test_mixed_layouts():
    a = testing.make_tensor((33, 65), torch.float32, "cpu", "transposed")
    b = testing.make_tensor((33, 65), torch.float32, "cpu", "misaligned")
    c = custom_add(a, b)
    assert c.is_contiguous()
    testing.assert_close(c, reference(a.double(), b.double()))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_nan_and_inf_like_reference(dtype):
    inf, nan = float("inf"), float("nan")
    a = torch.tensor([nan, 1.0, inf, inf, -inf, nan, -inf], dtype=dtype)
    b = torch.tensor([1.0, nan, 1.0, -inf, -inf, nan, 2.0], dtype=dtype)
    c = custom_add(a, b)  # NaN in gives NaN; inf + -inf is NaN; inf + finite stays inf
    testing.assert_close(c, reference(a.double(), b.double()), dtype)
    assert c.isnan().tolist() == [True, True, False, True, False, True, False]


def test_no_broadcasting_and_no_integer_b():
    a = testing.make_tensor((4, 5))
    with pytest.raises(RuntimeError, match="b and a must have the same shape"):
        custom_add(a, testing.make_tensor((5,)))
    with pytest.raises(RuntimeError, match="b and a must have the same dtype"):
        custom_add(a, torch.ones(4, 5, dtype=torch.int64))


@testing.requires_cuda
def test_cuda_tensors_are_rejected_by_name():
    with pytest.raises(RuntimeError, match="custom_add runs on the CPU only: a is on cuda"):
        custom_add(torch.ones(3, device="cuda"), torch.ones(3, device="cuda"))
    with pytest.raises(RuntimeError, match="custom_add runs on the CPU only: b is on cuda"):
        custom_add(torch.ones(3), torch.ones(3, device="cuda"))
    with pytest.raises(RuntimeError, match="custom_add runs on the CPU only: a is on cuda"):
        custom_add(torch.ones(3, device="cuda"), torch.ones(3))
