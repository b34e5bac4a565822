"""custom_add (CPU only): values against a float64 reference, gradients, opcheck, torch.compile,
bad input, and a clear error for CUDA tensors."""
import pytest
import torch

from opgen_examples import testing
from opgen_examples.ops.custom_add import custom_add, reference

OP = torch.ops.examples.custom_add.default


def make_pair(shape, dtype=torch.float32, layout="contiguous"):
    return testing.make_tensor(shape, dtype, "cpu", layout), testing.make_tensor(shape, dtype, "cpu", layout)


@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
@pytest.mark.parametrize("layout", testing.LAYOUTS)
@pytest.mark.parametrize("shape", testing.SHAPES)
def test_forward_matches_reference(shape, layout, dtype):
    a, b = make_pair(shape, dtype, layout)
    c = custom_add(a, b)
    assert c.is_contiguous()
    testing.assert_close(c, reference(a.double(), b.double()), dtype)


def test_mixed_layouts():
    a = testing.make_tensor((33, 65), torch.float32, "cpu", "transposed")
    b = testing.make_tensor((33, 65), torch.float32, "cpu", "misaligned")
    testing.assert_close(custom_add(a, b), reference(a.double(), b.double()))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_nan_and_inf_like_reference(dtype):
    inf, nan = float("inf"), float("nan")
    a = torch.tensor([nan, 1.0, inf, inf, -inf, nan, -inf], dtype=dtype)
    b = torch.tensor([1.0, nan, 1.0, -inf, -inf, nan, 2.0], dtype=dtype)
    c = custom_add(a, b)  # NaN in gives NaN; inf + -inf is NaN; inf + finite stays inf
    testing.assert_close(c, reference(a.double(), b.double()), dtype)
    assert c.isnan().tolist() == [True, True, False, True, False, True, False]


@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
def test_gradient_flows_to_both_inputs(dtype):
    a, b = (t.requires_grad_() for t in make_pair((37, 129), dtype))
    grad = testing.make_tensor((37, 129), dtype)
    da, db = torch.autograd.grad(custom_add(a, b), (a, b), grad)
    testing.assert_close(da, grad.double(), dtype)
    testing.assert_close(db, grad.double(), dtype)


def test_gradcheck():
    testing.check_gradients(custom_add, *make_pair((4, 33), torch.float64))


def test_opcheck():
    for shape in [(7, 9), (0,), (1031,)]:
        a, b = make_pair(shape)
        testing.check_opcheck(OP, a, b)
        testing.check_opcheck(OP, a.clone().requires_grad_(), b.clone().requires_grad_())


def test_torch_compile_fullgraph():
    testing.check_compiles(lambda a, b: custom_add(a * 2, b) + 1, *make_pair((64, 33)))


def test_rejects_bad_input():
    a = testing.make_tensor((4, 5))
    with pytest.raises(RuntimeError, match="a must be a floating-point tensor"):
        custom_add(torch.arange(6), torch.arange(6))
    with pytest.raises(RuntimeError, match="a and b must have the same shape"):
        custom_add(a, testing.make_tensor((5,)))  # no broadcasting
    with pytest.raises(RuntimeError, match="a and b must have the same dtype"):
        custom_add(a, a.double())
    with pytest.raises(RuntimeError, match="a and b must have the same dtype"):
        custom_add(a, torch.ones(4, 5, dtype=torch.int64))
    with pytest.raises(RuntimeError, match="a and b must have the same shape"):
        custom_add(a, testing.make_tensor((5, 4)))


@testing.requires_cuda
def test_cuda_tensors_are_rejected_by_name():
    with pytest.raises(RuntimeError, match="custom_add runs on the CPU only: a is on cuda"):
        custom_add(torch.ones(3, device="cuda"), torch.ones(3, device="cuda"))
    with pytest.raises(RuntimeError, match="custom_add runs on the CPU only: b is on cuda"):
        custom_add(torch.ones(3), torch.ones(3, device="cuda"))
    with pytest.raises(RuntimeError, match="custom_add runs on the CPU only: a is on cuda"):
        custom_add(torch.ones(3, device="cuda"), torch.ones(3))
