"""bitonic_sort: what is special to this op (exactly torch.sort(stable=True) with many ties, both
orders, NaN, inf and signed zeros, rows on both sides of the CUDA network's limit, long rows and
many rows for the radix sort, extreme integers, gradients through values, opcheck of the
descending sort, bad dtypes). The standard checks (exactly the reference, ascending, on every
layout, dtype and odd size, opcheck, torch.compile, streams, devices, threads) run from its SPEC
(opgen_examples/ops/bitonic_sort.py) in test_opgen_conformance.py.
"""
import opgen_testing as testing
import pytest
import torch

from opgen_examples.ops.bitonic_sort import bitonic_sort, reference

OP = torch.ops.examples.bitonic_sort.default
DTYPES = testing.FLOAT_DTYPES + [torch.int32, torch.int64]
# The longest row the CUDA network sorts in shared memory (bitonic_sort_cuda.cu); longer rows take
# the radix sort (bitonic_sort_radix.cu).
NETWORK_MAX_ROW = {
    torch.float16: 16384,
    torch.bfloat16: 16384,
    torch.float32: 8192,
    torch.int32: 8192,
    torch.float64: 8192,
    torch.int64: 8192,
}
# Empty rows and batches, a scalar, rows of one, rows shorter than a thread's items, around powers of
# two, several leading dimensions, and rows past the network's limit (the radix sort on CUDA).
SHAPES = [(0,), (), (1,), (5, 1), (2,), (3,), (4, 0), (0, 7), (1000,), (3, 1024), (2, 1025), (3, 5, 77),
          (2, 5000), (2, 20000)]


def make_input(shape, dtype, device, layout="contiguous"):
    """Random values with many repeats (multiples of 1/4 in [-20, 20]), so ties are common."""
    x = testing.make_tensor(shape, dtype, device, layout, low=-20, high=20)
    if dtype.is_floating_point:
        x.copy_((x * 4).round() / 4)
    return x


def assert_sorted_like_torch(x, descending=False):
    values, indices = bitonic_sort(x, descending)
    expected_values, expected_indices = reference(x.cpu(), descending)
    assert values.device == x.device and indices.device == x.device
    assert values.shape == x.shape and indices.shape == x.shape and indices.dtype == torch.int64
    torch.testing.assert_close(values.cpu(), expected_values, rtol=0, atol=0, equal_nan=True)
    assert torch.equal(torch.signbit(values.cpu()), torch.signbit(expected_values)), "signed zeros differ"
    assert torch.equal(indices.cpu(), expected_indices)
    if x.dim() > 0:
        torch.testing.assert_close(x.gather(-1, indices), values, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_matches_stable_torch_sort(shape, dtype, descending, device):
    assert_sorted_like_torch(make_input(shape, dtype, device), descending)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
def test_nan_inf_and_signed_zeros(dtype, descending, device):
    # NaN sorts above inf (first when descending), NaNs tie, -0.0 ties with +0.0 and keeps its sign.
    special = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.0, -float("nan"), -0.0, 0.0])
    x = torch.cat([special, special.flip(0), testing.make_tensor((40,), torch.float64, "cpu")]).to(dtype)
    for row_length in [9, 58, 1500, 40000]:  # one thread, one warp, several warps; the radix sort
        row = x.repeat(row_length // x.numel() + 1)[:row_length].to(device)
        assert_sorted_like_torch(row, descending)
        if row_length % 2 == 0:  # several rows: the radix sort reads the values back from x
            assert_sorted_like_torch(row.view(2, -1), descending)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_around_the_network_limit(dtype, descending, device):
    # The longest rows the network sorts, and one element more (the radix sort).
    limit = NETWORK_MAX_ROW[dtype]
    for length in [limit // 2 + 1, limit, limit + 1]:
        assert_sorted_like_torch(make_input((3, length), dtype, device), descending)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("layout", testing.LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_short_rows_in_any_layout(dtype, layout, device):
    # Rows a multiple of 4 long move 4 elements at a time on CUDA when x is aligned, else one by one.
    for shape in [(37, 12), (6, 1024), (5, 1000)]:
        assert_sorted_like_torch(make_input(shape, dtype, device, layout), descending=shape[0] == 6)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("layout", ["transposed", "strided", "misaligned"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64])
def test_long_rows_in_any_layout(dtype, layout, device):
    assert_sorted_like_torch(make_input((3, 20001), dtype, device, layout), descending=True)


@testing.requires_cuda
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_one_long_row(dtype, descending):
    # Past 2**20 elements, with every special value among many ties: one radix sort, values decoded
    # from the sorted keys (NaN and zeros read from x).
    x = make_input((2**20 + 7,), dtype, "cuda")
    if dtype.is_floating_point:
        positions = torch.randint(0, x.numel(), (3000,), device="cuda")
        specials = torch.tensor([float("nan"), -float("nan"), float("inf"), -float("inf"), 0.0, -0.0], device="cuda")
        x[positions] = specials.repeat(500).to(dtype)
    else:
        info = torch.iinfo(dtype)
        x[:: x.numel() // 10] = info.max
        x[1 :: x.numel() // 10] = info.min
    assert_sorted_like_torch(x, descending)


@testing.requires_cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(300, 9000), (3, 5, 40000), (2, 2**19 + 1)], ids=str)
def test_many_long_rows(shape, dtype):
    # Sorted together by key, then grouped by row (a second stable sort); values gathered from x.
    assert_sorted_like_torch(make_input(shape, dtype, "cuda"), descending=shape[0] == 3)


@testing.requires_cuda
@pytest.mark.parametrize("shape", [(1700, 20000), (3, 2**24 + 1)], ids=str)
def test_rows_in_several_batches(shape):
    # A batch holds about 2**25 elements: 1677 rows of 20000 (then a last batch of 23 rows), or one
    # row when rows are longer than half that. torch.sort on the GPU is the reference here (integers: no NaN to differ on).
    x = torch.randint(-1000, 1000, shape, dtype=torch.int32, device="cuda")
    values, indices = bitonic_sort(x, descending=True)
    expected_values, expected_indices = torch.sort(x, dim=-1, descending=True, stable=True)
    assert torch.equal(values, expected_values) and torch.equal(indices, expected_indices)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_extreme_integers_sort_before_padding(device):
    # The largest key (int32 max; int64 max) must not be confused with the padding sentinel.
    for dtype in [torch.int32, torch.int64]:
        info = torch.iinfo(dtype)
        x = torch.tensor([info.max, info.min, 0, info.max, -1, info.min + 1, 5], dtype=dtype, device=device)
        for descending in [False, True]:
            assert_sorted_like_torch(x, descending)
            assert_sorted_like_torch(x.repeat(1500), descending)  # the radix sort on CUDA


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
def test_backward_scatters_through_indices(dtype, device):
    x = testing.make_tensor((37, 129), dtype, device).requires_grad_()
    grad = testing.make_tensor((37, 129), dtype, device)
    values, indices = bitonic_sort(x)
    assert not indices.requires_grad
    (dx,) = torch.autograd.grad(values, x, grad)
    x64 = x.detach().double().requires_grad_()
    (expected,) = torch.autograd.grad(reference(x64)[0], x64, grad.double())
    testing.assert_close(dx, expected, dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_gradcheck(device):
    testing.check_gradients(lambda t: bitonic_sort(t, True)[0], testing.make_tensor((4, 33), torch.float64, device))


@pytest.mark.parametrize("device", testing.DEVICES)
def test_opcheck_and_compile_descending_and_with_grad(device):
    for shape in [(7, 9), (0, 3), (2, 1025), ()]:
        x = testing.make_tensor(shape, torch.float32, device)
        testing.check_opcheck(OP, x)
        testing.check_opcheck(OP, x, True)
        testing.check_opcheck(OP, x.clone().requires_grad_())
    x = testing.make_tensor((64, 33), torch.float32, device)
    testing.check_compiles(lambda t: bitonic_sort(t * 2, descending=True)[0] + 1, x)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_rejects_bad_input(device):
    with pytest.raises(RuntimeError, match="x must be a float32, float16, bfloat16, float64, int32 or int64 tensor"):
        bitonic_sort(torch.ones(6, dtype=torch.bool, device=device))
    with pytest.raises(RuntimeError, match="x must be a float32, float16, bfloat16, float64, int32 or int64 tensor"):
        bitonic_sort(torch.ones(6, dtype=torch.uint8, device=device))


@testing.requires_cuda
def test_runs_on_the_current_stream_with_rows_in_shared_memory():
    # SPEC's stream check sorts one long row (the radix sort); this one, rows in shared memory.
    x = make_input((4096, 300), torch.float32, "cuda")
    values, indices = testing.call_on_side_stream(bitonic_sort, x)
    expected_values, expected_indices = reference(x)
    assert torch.equal(values, expected_values) and torch.equal(indices, expected_indices)
