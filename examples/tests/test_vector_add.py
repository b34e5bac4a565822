"""vector_add: what is special to this op (both CUDA paths with a and b aligned differently, mixed
layouts, NaN and inf combinations, no broadcasting, the seed's kernel). The standard checks (the
reference on every layout, dtype and odd size, gradients, opcheck, torch.compile, bad input,
streams, devices, threads, > 2**31 elements) run from its SPEC (opgen_examples/ops/vector_add.py)
in test_opgen_conformance.py.

The values the standard checks draw come from each TensorArg's `domain` in SPEC (now -4..4):
narrow it there if vector_add is defined on part of the line only (x > 0 for a log, say).
"""
import opgen_testing as testing
import pytest
import torch

from opgen_examples.ops.vector_add import SPEC, naive, reference, vector_add


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
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("aligned", [(True, True), (False, True), (True, False), (False, False)])
def test_vector_and_misaligned_paths(aligned, dtype, device):
    # On CUDA, both take the vector path; a misaligned one is read with aligned loads shifted into place.
    # 70001 elements: many full tiles plus a partial one.
    a, b = (testing.make_tensor((70001,), dtype, device, "contiguous" if ok else "misaligned") for ok in aligned)
    for x, ok in zip((a, b), aligned):
        assert (x.data_ptr() % 16 == 0) == ok
    c = vector_add(a, b)
    assert c.is_contiguous()
    testing.assert_close(c, reference(a.double(), b.double()), dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("layouts", [("transposed", "contiguous"), ("contiguous", "strided"),
                                     ("strided", "transposed")])
def test_mixed_layouts(layouts, device):
    a, b = (testing.make_tensor((33, 65), torch.float32, device, layout) for layout in layouts)
    testing.assert_close(vector_add(a, b), reference(a.double(), b.double()))


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_nan_and_inf_like_reference(dtype, device):
    inf, nan = float("inf"), float("nan")
    a = torch.tensor([nan, 1.0, inf, inf, -inf, nan, -inf], dtype=dtype, device=device)
    b = torch.tensor([1.0, nan, 1.0, -inf, -inf, nan, 2.0], dtype=dtype, device=device)
    c = vector_add(a, b)  # NaN in gives NaN; inf + -inf is NaN; inf + finite stays inf
    testing.assert_close(c, reference(a.double(), b.double()), dtype)
    assert c.isnan().tolist() == [True, True, False, True, False, True, False]


@pytest.mark.parametrize("device", testing.DEVICES)
def test_no_broadcasting_and_no_integer_b(device):
    a = testing.make_tensor((4, 5), torch.float32, device)
    with pytest.raises(RuntimeError, match="b and a must have the same shape"):
        vector_add(a, testing.make_tensor((5,), torch.float32, device))
    with pytest.raises(RuntimeError, match="b and a must have the same dtype"):
        vector_add(a, torch.ones(4, 5, dtype=torch.int64, device=device))


@testing.requires_cuda
def test_naive_seed_kernel_adds():
    a = testing.make_tensor((70001,), torch.float32, "cuda")
    b = testing.make_tensor((70001,), torch.float32, "cuda", "misaligned")
    torch.testing.assert_close(naive(a, b), a + b, rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="a must be Float"):
        naive(a.half(), b.half())


@testing.requires_cuda
def test_refuses_a_on_another_device():
    # SPEC's check puts b on the CPU; here a is the one on the CPU.
    with pytest.raises(RuntimeError, match="b and a must be on the same device"):
        vector_add(torch.ones(3), torch.ones(3, device="cuda"))
