"""gemm: what is special to this op (the error model of a K-term dot product on two layouts, row
strides and broadcast rows, a zero inner dimension, NaN and inf confined to their row and column,
the matrix checks, the seed's kernel, offsets past 2**31). The standard checks (the
reference on every layout, dtype and size in SPEC, gradients, opcheck, torch.compile, bad input,
streams, devices, threads) run from its SPEC (opgen_examples/ops/gemm.py) in
test_opgen_conformance.py.
"""
import opgen_testing as testing
import pytest
import torch

from opgen_examples.ops.gemm import SPEC, gemm, gemm_naive, reference

SIZES = SPEC.shapes  # (M, K, N)


def assert_matches_product(c: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """c equals a @ b within gemm's error model (SPEC: one unit in the last place of the output's
    dtype, plus what a K-term sum in float32 may err; see _error_model.py), so a missing or wrong
    term shows (tests/test_error_model.py)."""
    assert c.shape == (a.shape[0], b.shape[1]) and c.dtype == a.dtype and c.device == a.device
    args = {"a": a, "b": b}
    expected = testing.reference_in_float64(SPEC, args)
    testing.assert_matches(SPEC, c, expected, a.dtype, bound=testing.error_bound(SPEC, args, a.dtype))


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("size", SIZES, ids=str)
def test_forward_within_the_dot_product_error_bound(size, layout, dtype, device):
    m, k, n = size
    a = testing.make_tensor((m, k), dtype, device, layout)
    b = testing.make_tensor((k, n), dtype, device, layout)
    c = gemm(a, b)
    assert c.is_contiguous()
    assert_matches_product(c, a, b)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_mixed_layouts_and_row_strides(device):
    # A row-major view with padded rows is used in place; a column slice keeps unit column stride.
    wide = testing.make_tensor((67, 200), torch.float32, device)
    a = wide[:, 3:131]  # (67, 128), row stride 200
    b = testing.make_tensor((256, 128), torch.float32, device)[::2]  # (128, 128), row stride 256
    assert_matches_product(gemm(a, b), a, b)
    assert_matches_product(gemm(a, b.t().contiguous().t()), a, b)
    # Broadcast rows (stride 0) and a single column.
    row = testing.make_tensor((1, 40), torch.float32, device).expand(9, 40)
    col = testing.make_tensor((40, 1), torch.float32, device)
    assert_matches_product(gemm(row, col), row, col)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("offset", [0, 1, 2, 3])
def test_float32_b_rows_at_any_alignment(offset, device):
    # CUDA copies float32 b 16 bytes at a time: rows that do not start on 16 bytes (a view at an
    # offset, an odd N, broadcast rows with stride 0) are first copied into padded rows.
    a = testing.make_tensor((70, 45), torch.float32, device)
    for n in (37, 64):
        b = testing.make_tensor((45, n + 4), torch.float32, device)[:, offset:offset + n]
        assert_matches_product(gemm(a, b), a, b)
    row = testing.make_tensor((1, 41), torch.float32, device)[:, offset:offset + 37].expand(45, 37)
    assert_matches_product(gemm(a, row), a, row)


@testing.requires_cuda
@pytest.mark.parametrize("size", [(1025, 515, 1031), (640, 256, 1152)], ids=str)
def test_large_products_with_partial_tiles(size):
    # Enough tiles for the float32 kernel's large tile shape (the SPEC's sizes take the small one):
    # partial tiles on every edge with an odd K and N, then whole tiles only.
    m, k, n = size
    a = testing.make_tensor((m, k), torch.float32, "cuda")
    b = testing.make_tensor((k, n), torch.float32, "cuda")
    assert_matches_product(gemm(a, b), a, b)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_zero_inner_dimension_gives_zeros(device):
    c = gemm(torch.ones(3, 0, device=device), torch.ones(0, 4, device=device))
    assert torch.equal(c, torch.zeros(3, 4, device=device))


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_nan_and_inf_reach_only_their_row_and_column(dtype, device):
    a = testing.make_tensor((37, 45), dtype, device)
    b = testing.make_tensor((45, 29), dtype, device)
    a[3, 7] = float("nan")
    a[20, 0] = float("inf")  # times b[0, j]: an inf of that sign (nonzero random b)
    b[44, 11] = float("nan")
    c = gemm(a, b)
    expected = reference(a.double(), b.double())
    assert torch.equal(c.isnan(), expected.isnan()) and torch.equal(c.isinf(), expected.isinf())
    assert c[3].isnan().all() and c[:, 11].isnan().all() and c.isnan().sum() == 29 + 37 - 1
    assert c[20].isinf().sum() == 28
    rows, cols = [i for i in range(37) if i not in (3, 20)], [j for j in range(29) if j != 11]
    assert_matches_product(c[rows][:, cols], a[rows], b[:, cols])  # the other outputs are untouched


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
def test_backward_within_the_dot_product_error_bound(dtype, device):
    a = testing.make_tensor((37, 45), dtype, device).requires_grad_()
    b = testing.make_tensor((45, 29), dtype, device).requires_grad_()
    grad = testing.make_tensor((37, 29), dtype, device)
    da, db = torch.autograd.grad(gemm(a, b), (a, b), grad)
    assert_matches_product(da, grad, b.detach().t())
    assert_matches_product(db, a.detach().t(), grad)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_rejects_bad_input(device):
    a = testing.make_tensor((4, 5), torch.float32, device)
    with pytest.raises(RuntimeError, match="a must be a floating-point tensor"):
        gemm(torch.ones(4, 5, dtype=torch.int64, device=device), a.t())
    with pytest.raises(RuntimeError, match="a must have 2 dimension"):
        gemm(torch.ones(5, device=device), a.t())
    with pytest.raises(RuntimeError, match="a must have 2 dimension"):  # no batched matmul
        gemm(torch.ones(2, 4, 5, device=device), a.t())
    with pytest.raises(RuntimeError, match="b must be a floating-point tensor"):
        gemm(a, torch.ones(5, 3, dtype=torch.int64, device=device))
    with pytest.raises(RuntimeError, match="b must have 2 dimension"):
        gemm(a, torch.ones(5, device=device))
    with pytest.raises(RuntimeError, match="a's columns and b's rows must match"):
        gemm(a, a)
    with pytest.raises(RuntimeError, match="a and b must have the same dtype"):
        gemm(a, a.t().double())


@testing.requires_cuda
def test_rejects_a_on_another_device():
    # SPEC's check puts b on the CPU; here a is the one on the CPU.
    with pytest.raises(RuntimeError, match="a and b must be on the same device"):
        gemm(torch.ones(3, 4), torch.ones(4, 2, device="cuda"))


@testing.requires_cuda
@pytest.mark.parametrize("size", [(1, 1, 1), (17, 33, 65), (300, 200, 100)], ids=str)
def test_naive_kernel_matches_reference(size):
    m, k, n = size
    a = testing.make_tensor((m, k), torch.float32, "cuda")
    b = testing.make_tensor((k, n), torch.float32, "cuda", "transposed")
    assert_matches_product(gemm_naive(a, b), a, b)


@testing.requires_cuda
@testing.requires_cuda_memory(24)
def test_offsets_past_two_to_the_31():
    m, k, n = (1 << 21) + 3, 1024, 12  # a has 2^31 + 3072 elements: row offsets need 64 bits
    a = torch.empty(m, k, device="cuda").uniform_(-1, 1)
    b = testing.make_tensor((k, n), torch.float32, "cuda")
    c = gemm(a, b)
    tail = slice(m - 200, m)
    assert_matches_product(c[tail], a[tail], b)
