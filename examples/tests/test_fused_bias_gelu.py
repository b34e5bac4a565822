"""fused_bias_gelu: what is special to this op (a strided or misaligned bias, NaN and inf in x or
bias, more rows than one grid pass, gradients of 1-D and 3-D inputs, the backward op on its own,
the bias checks). The standard checks (the reference on every layout, dtype and size in SPEC's
shapes, gradients, opcheck, torch.compile, bad input, streams, devices, threads, > 2**31 elements)
run from its SPEC (opgen_examples/ops/fused_bias_gelu.py) in test_opgen_conformance.py.
"""
import opgen_testing as testing
import pytest
import torch

from opgen_examples.ops.fused_bias_gelu import fused_bias_gelu, reference

OP = torch.ops.examples.fused_bias_gelu.default
BACKWARD_OP = torch.ops.examples.fused_bias_gelu_backward.default  # (grad, x, bias, needs_x, needs_bias)


def dz(grad, x, bias):
    """d(x + bias): x's gradient, and bias's before it is summed over the rows."""
    return BACKWARD_OP(grad, x, bias, True, False)[0]


def _bias_for(x, layout="contiguous"):
    return testing.make_tensor((x.shape[-1],), x.dtype, x.device, layout)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("bias_layout", ["strided", "misaligned"])
def test_non_contiguous_or_misaligned_bias(bias_layout, dtype, device):
    x = testing.make_tensor((37, 64), dtype, device)
    bias = _bias_for(x, bias_layout)
    testing.assert_close(fused_bias_gelu(x, bias), reference(x.double(), bias.double()), dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("cols", [64, 72, 65])
def test_x_grad_and_bias_at_every_misalignment(cols, dtype, device):
    # On CUDA, rows of a whole number of vectors (64, 72 columns) take the vector path at any x or
    # bias offset (shifted into place from aligned loads); 65 columns, the scalar path.
    x, grad = (testing.make_tensor((37, cols), dtype, device) for _ in range(2))
    bias = _bias_for(x)
    x64 = x.double().requires_grad_()
    expected = reference(x64, bias.double())
    (expected_dz,) = torch.autograd.grad(expected, x64, grad.double())
    per_vector = 16 // x.element_size()
    for offset in range(per_vector):
        for bias_offset in (0, offset, (offset + 1) % per_vector):
            x_at, bias_at = testing.at_offset(x, offset), testing.at_offset(bias, bias_offset)
            testing.assert_close(fused_bias_gelu(x_at, bias_at), expected.detach(), dtype)
            grad_at = testing.at_offset(grad, (offset + 3) % per_vector)
            testing.assert_close(dz(grad_at, x_at, bias_at), expected_dz, dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_nan_and_inf_like_reference(dtype, device):
    inf, nan = float("inf"), float("nan")
    x = torch.tensor([[nan, 1.0, inf, -inf, 1.0], [0.5, 1.0, 2.0, 3.0, inf]], dtype=dtype, device=device)
    bias = torch.tensor([1.0, nan, 1.0, 1.0, -inf], dtype=dtype, device=device)
    y = fused_bias_gelu(x, bias)  # a NaN in x or bias gives NaN; inf + -inf is NaN; gelu(inf) = inf
    testing.assert_close(y, reference(x.double(), bias.double()), dtype)
    assert y[:, 1].isnan().all() and y[0, 0].isnan() and y[0, 2] == inf


@testing.requires_cuda
def test_more_rows_than_one_grid_pass():
    # 3M rows of 2 floats need more than 65535 row blocks, so threads loop over rows.
    x = testing.make_tensor((3_000_000, 2), torch.float32, "cuda")
    bias = _bias_for(x)
    testing.assert_close(fused_bias_gelu(x, bias), reference(x.double(), bias.double()))


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(4, 6, 64), (40,)])
def test_backward_of_other_ranks(shape, dtype, device):
    # dbias sums dx over every leading dim (none for a 1-D x); SPEC's gradient checks use 2-D x.
    x = testing.make_tensor(shape, dtype, device).requires_grad_()
    bias = _bias_for(x).requires_grad_()
    grad = testing.make_tensor(shape, dtype, device)
    dx, dbias = torch.autograd.grad(fused_bias_gelu(x, bias), (x, bias), grad)
    x64 = x.detach().double().requires_grad_()
    bias64 = bias.detach().double().requires_grad_()
    (expected_dx,) = torch.autograd.grad(reference(x64, bias64), x64, grad.double())
    testing.assert_close(dx, expected_dx, dtype)
    # dbias is dx summed over the leading dims (rounded once from a float sum).
    testing.assert_close(dbias, dx.double().reshape(-1, shape[-1]).sum(0), dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("shape", [(2, 3, 8), (9,)])
def test_gradcheck_of_other_ranks(shape, device):
    x = testing.make_tensor(shape, torch.float64, device)
    testing.check_gradients(fused_bias_gelu, x, _bias_for(x))


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("x_layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("grad_layout", testing.LAYOUTS)
def test_backward_op_with_any_strides(grad_layout, x_layout, device):
    grad = testing.make_tensor((33, 65), torch.float32, device, grad_layout)
    x = testing.make_tensor((33, 65), torch.float32, device, x_layout)
    bias = _bias_for(x, "strided")
    testing.check_backward_op(lambda g, t: dz(g, t, bias), lambda t: reference(t, bias.double()), grad, x)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_opcheck_of_other_ranks_and_the_backward_op(device):
    for shape in [(7, 9), (5, 0), (2, 3, 16)]:
        x = testing.make_tensor(shape, torch.float32, device)
        bias = _bias_for(x)
        testing.check_opcheck(OP, x, bias)
        testing.check_opcheck(OP, x.clone().requires_grad_(), bias.clone().requires_grad_())
        testing.check_opcheck(BACKWARD_OP, testing.make_tensor(shape, torch.float32, device), x, bias, True, True)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_bias_broadcasts_as_torch_does_or_is_refused(device):
    x = testing.make_tensor((4, 5), torch.float32, device)
    bias = _bias_for(x)
    for broadcast in (bias[None], bias[:1], x[:1].T[:1, :1]):  # (1, 5), (1,), (1, 1)
        testing.assert_close(fused_bias_gelu(x, broadcast), reference(x.double(), broadcast.double()))
    column = testing.make_tensor((4, 1), torch.float32, device)  # a bias per row: a block of x's dims too
    testing.assert_close(fused_bias_gelu(x, column), reference(x.double(), column.double()))
    with pytest.raises(RuntimeError, match=r"bias must broadcast over x .*got bias \[4\] and x \[4, 5\]"):
        fused_bias_gelu(x, bias[:4])
    with pytest.raises(RuntimeError, match="bias must broadcast over x"):  # the result would be larger than x
        fused_bias_gelu(x[0, 0], bias)
    with pytest.raises(RuntimeError, match="bias and x must have the same dtype"):
        fused_bias_gelu(x, bias.double())


@pytest.mark.parametrize("device", testing.DEVICES)
def test_backward_rejects_mismatched_arguments(device):
    x = testing.make_tensor((4, 5), torch.float32, device)
    bias = _bias_for(x)
    with pytest.raises(RuntimeError, match="grad and x must have the same shape"):
        dz(testing.make_tensor((5, 4), torch.float32, device), x, bias)
    with pytest.raises(RuntimeError, match="grad and x must have the same dtype"):
        dz(x.double(), x, bias)
    with pytest.raises(RuntimeError, match="bias must broadcast over x"):
        dz(x, x, bias[:3])


@testing.requires_cuda
def test_rejects_tensors_on_different_devices():
    # SPEC's check puts each later argument on the CPU; here x is the one on the CPU, and the backward.
    with pytest.raises(RuntimeError, match="bias and x must be on the same device"):
        fused_bias_gelu(torch.ones(2, 3), torch.ones(3, device="cuda"))
    with pytest.raises(RuntimeError, match="grad and x must be on the same device"):
        dz(torch.ones(2, 3), torch.ones(2, 3, device="cuda"), torch.ones(3, device="cuda"))


@testing.requires_cuda_memory(24)
def test_more_than_2_to_the_31_elements_in_rows():
    # Row offsets past 2**31 (SPEC's large case is one long row).
    rows, cols = 2**31 // 64 + 3, 64
    x = torch.empty(rows, cols, dtype=torch.float16, device="cuda").uniform_(-4, 4)
    bias = _bias_for(x)
    y = fused_bias_gelu(x, bias)
    for part in (slice(0, 64), slice(2**31 // 64 - 64, 2**31 // 64 + 64), slice(rows - 64, rows)):
        testing.assert_close(y[part], reference(x[part].double(), bias.double()), torch.float16)
