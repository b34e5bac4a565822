"""bitonic_sort: what is special to this op (exactly torch.sort(stable=True) with many ties, both
orders, NaN, inf and signed zeros, long rows, extreme integers, gradients through values, opcheck
of the descending sort, bad dtypes). The standard checks (exactly the reference, ascending, on every
layout, dtype and odd size, opcheck, torch.compile, streams, devices, threads) run from its SPEC
(opgen_examples/ops/bitonic_sort.py) in test_opgen_conformance.py.
"""
import opgen_testing as testing
import pytest
import torch

from opgen_examples.ops.bitonic_sort import bitonic_sort, reference

OP = torch.ops.examples.bitonic_sort.default
DTYPES = testing.FLOAT_DTYPES + [torch.int32, torch.int64]
# Empty rows and batches, a scalar, rows shorter than a thread's items, around powers of two,
# several leading dimensions, and rows longer than one block sorts in shared memory (16384 items of
# keys up to 4 bytes, 8192 of 8-byte keys on an H100), which take the multi-pass path.
SHAPES = [(0,), (), (1,), (2,), (3,), (4, 0), (0, 7), (1000,), (3, 1024), (2, 1025), (3, 5, 77), (2, 5000),
          (2, 20000)]


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
    for row_length in [9, 58, 1500]:  # one thread, one warp, several warps
        assert_sorted_like_torch(x.repeat(row_length // x.numel() + 1)[:row_length].to(device), descending)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
@pytest.mark.parametrize("length", [8192, 8193, 16384, 16385, 70000])
def test_long_rows(length, dtype, device):
    # Around the single-block limits (8192 and 16384 items): chunk sorts plus global merge steps.
    assert_sorted_like_torch(make_input((2, length), dtype, device), descending=length % 2 == 1)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_extreme_integers_sort_before_padding(device):
    # The largest key (int32 max; int64 max) must not be confused with the padding sentinel.
    for dtype in [torch.int32, torch.int64]:
        info = torch.iinfo(dtype)
        x = torch.tensor([info.max, info.min, 0, info.max, -1, info.min + 1, 5], dtype=dtype, device=device)
        for descending in [False, True]:
            assert_sorted_like_torch(x, descending)


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
    # SPEC's stream check sorts one long row (the multi-pass path); this one, the single-block path.
    x = make_input((4096, 300), torch.float32, "cuda")
    values, indices = testing.call_on_side_stream(bitonic_sort, x)
    expected_values, expected_indices = reference(x)
    assert torch.equal(values, expected_values) and torch.equal(indices, expected_indices)
