"""vector_add: values against a float64 reference, both kernel paths (16-byte vectors and the
misaligned fallback), gradients, opcheck, torch.compile, bad input."""
import pytest
import torch

from opgen_examples import testing
from opgen_examples.ops.vector_add import naive, reference, vector_add

OP = torch.ops.examples.vector_add.default


def make_pair(shape, dtype, device, layout_a="contiguous", layout_b="contiguous"):
    return testing.make_tensor(shape, dtype, device, layout_a), testing.make_tensor(shape, dtype, device, layout_b)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
@pytest.mark.parametrize("layout", testing.LAYOUTS)
@pytest.mark.parametrize("shape", testing.SHAPES)
def test_forward_matches_reference(shape, layout, dtype, device):
    a, b = make_pair(shape, dtype, device, layout, layout)
    testing.assert_close(vector_add(a, b), reference(a.double(), b.double()), dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("aligned", [(True, True), (False, True), (True, False), (False, False)])
def test_vector_and_misaligned_paths(aligned, dtype, device):
    # On CUDA, 16-byte aligned a and b take the vector path; any misaligned one, the scalar path.
    # 70001 elements: many full tiles plus a partial one.
    layouts = ["contiguous" if ok else "misaligned" for ok in aligned]
    a, b = make_pair((70001,), dtype, device, *layouts)
    for x, ok in zip((a, b), aligned):
        assert (x.data_ptr() % 16 == 0) == ok
    c = vector_add(a, b)
    assert c.is_contiguous()
    testing.assert_close(c, reference(a.double(), b.double()), dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("layouts", [("transposed", "contiguous"), ("contiguous", "strided"),
                                     ("strided", "transposed")])
def test_mixed_layouts(layouts, device):
    a, b = make_pair((33, 65), torch.float32, device, *layouts)
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
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
def test_gradient_flows_to_both_inputs(dtype, device):
    a, b = (t.requires_grad_() for t in make_pair((37, 129), dtype, device))
    grad = testing.make_tensor((37, 129), dtype, device)
    da, db = torch.autograd.grad(vector_add(a, b), (a, b), grad)
    testing.assert_close(da, grad.double(), dtype)
    testing.assert_close(db, grad.double(), dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_gradient_to_one_input(device):
    a, b = make_pair((5, 7), torch.float32, device)
    a.requires_grad_()
    (da,) = torch.autograd.grad(vector_add(a, b).sum(), a)
    testing.assert_close(da, torch.ones(5, 7, dtype=torch.float64))


@pytest.mark.parametrize("device", testing.DEVICES)
def test_gradcheck(device):
    testing.check_gradients(vector_add, *make_pair((4, 33), torch.float64, device))


@pytest.mark.parametrize("device", testing.DEVICES)
def test_opcheck(device):
    for shape in [(7, 9), (0,), (1031,)]:
        a, b = make_pair(shape, torch.float32, device)
        testing.check_opcheck(OP, a, b)
        testing.check_opcheck(OP, a.clone().requires_grad_(), b.clone().requires_grad_())


@pytest.mark.parametrize("device", testing.DEVICES)
def test_torch_compile_fullgraph(device):
    testing.check_compiles(lambda a, b: vector_add(a * 2, b) + 1, *make_pair((64, 33), torch.float32, device))


@pytest.mark.parametrize("device", testing.DEVICES)
def test_rejects_integer_input(device):
    with pytest.raises(RuntimeError, match="a must be a floating-point tensor"):
        vector_add(torch.arange(6, device=device), torch.arange(6, device=device))


@pytest.mark.parametrize("device", testing.DEVICES)
def test_rejects_mismatched_arguments(device):
    a = testing.make_tensor((4, 5), torch.float32, device)
    with pytest.raises(RuntimeError, match="a and b must have the same shape"):
        vector_add(a, testing.make_tensor((5, 4), torch.float32, device))
    with pytest.raises(RuntimeError, match="a and b must have the same shape"):  # no broadcasting
        vector_add(a, testing.make_tensor((5,), torch.float32, device))
    with pytest.raises(RuntimeError, match="a and b must have the same dtype"):
        vector_add(a, a.double())
    with pytest.raises(RuntimeError, match="a and b must have the same dtype"):
        vector_add(a, torch.ones(4, 5, dtype=torch.int64, device=device))


@testing.requires_cuda
def test_rejects_tensors_on_different_devices():
    with pytest.raises(RuntimeError, match="a and b must be on the same device"):
        vector_add(torch.ones(3, device="cuda"), torch.ones(3))
    with pytest.raises(RuntimeError, match="a and b must be on the same device"):
        vector_add(torch.ones(3), torch.ones(3, device="cuda"))


@testing.requires_cuda
def test_runs_on_the_current_stream():
    a, b = make_pair((1 << 20,), torch.float32, "cuda")
    c = testing.call_on_side_stream(vector_add, a, b)
    testing.assert_close(c, reference(a.double(), b.double()))


@testing.requires_cuda
def test_naive_seed_kernel_adds():
    a, b = make_pair((70001,), torch.float32, "cuda", "contiguous", "misaligned")
    torch.testing.assert_close(naive(a, b), a + b, rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="a must be Float"):
        naive(a.half(), b.half())


@testing.requires_cuda_memory(24)
def test_more_than_2_to_the_31_elements():
    n = 2**31 + 77
    a = torch.empty(n, dtype=torch.float16, device="cuda").uniform_(-4, 4)
    b = torch.empty(n, dtype=torch.float16, device="cuda").uniform_(-4, 4)
    c = vector_add(a, b)
    for part in (slice(0, 4096), slice(2**31 - 4096, 2**31 + 4096), slice(n - 4096, n)):
        testing.assert_close(c[part], reference(a[part].double(), b[part].double()), torch.float16)
