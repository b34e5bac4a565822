"""fused_linear_gelu: what is special to this op (values within a tolerance calibrated on eager
nn.Linear + GELU over its shapes, both CUDA paths, long reductions, any strides of x and weight,
gradients of 3-D x, opcheck and torch.compile with leading dims, the TF32 flag, the shape checks).
The standard checks (the reference on every layout, dtype and shape in SPEC, gradients, gradcheck,
second derivatives, opcheck, torch.compile, bad input, streams, devices, threads) run from its SPEC
(opgen_examples/ops/fused_linear_gelu.py) in test_opgen_conformance.py.
"""
import contextlib

import pytest
import torch

import opgen_testing as testing
from opgen_examples.ops.fused_linear_gelu import fused_linear_gelu, reference

OP = torch.ops.examples.fused_linear_gelu.default

# (x shape, out_features): odd sizes, leading dims, 1-D x, empty batch, in_features or out_features
# of 0 or 1 (where cuBLASLt is skipped), sizes cuBLASLt vectorizes; on CUDA, batches of at most 32
# rows take the small-batch kernel (partial tiles, the 32/33 boundary), and float32 batches of 33 to
# 64 rows with out_features not a multiple of 4 a GEMM into padded rows (the 64/65 boundary).
CASES = [
    ((3, 5, 17), 13),
    ((17,), 13),
    ((0, 17), 13),
    ((2, 0, 17), 13),
    ((4, 0), 3),
    ((5, 17), 0),
    ((1, 17), 13),
    ((5, 1), 13),
    ((5, 17), 1),
    ((64, 96), 40),
    ((2, 33, 128), 72),
    ((32, 70), 20),
    ((33, 70), 20),
    ((33, 70), 21),
    ((64, 96), 43),
    ((65, 96), 43),
]
# Leading dims of x: 21 rows (the small-batch kernel on CUDA) and 45 (the GEMM path).
BATCH_SHAPES = pytest.mark.parametrize("batch_shape", [(3, 7), (5, 9)], ids=["small_batch", "gemm_batch"])


def _inputs(x_shape, out_features, dtype, device, x_layout="contiguous", weight_layout="contiguous"):
    # Values in [-1, 1]: pre-activations of order 1, where the GELU is neither linear nor zero.
    x = testing.make_tensor(x_shape, dtype, device, x_layout, low=-1, high=1)
    weight = testing.make_tensor((out_features, x_shape[-1]), dtype, device, weight_layout, low=-1, high=1)
    bias = testing.make_tensor((out_features,), dtype, device, low=-1, high=1)
    return x, weight, bias


def _as_float64(*tensors):
    return [t.detach().double().requires_grad_(t.requires_grad) for t in tensors]


def assert_matches_reference(y, x, weight, bias):
    """y against the float64 reference, within the dtype's tolerance widened to 4x the error of eager
    nn.Linear + GELU in the same dtype on the same device: a GEMM's rounding grows with in_features,
    and float16/bfloat16 GEMMs may add split-K partial sums in that dtype (torch's default, which an
    H100 run showed at 2.8% for one bfloat16 output of 70 products)."""
    assert y.dtype == x.dtype
    expected = reference(*_as_float64(x, weight, bias))
    eager_error = (reference(x, weight, bias).double() - expected).abs().max().item() if y.numel() else 0.0
    rtol, atol = testing.tolerances(y.dtype)
    torch.testing.assert_close(y.double(), expected, rtol=rtol, atol=max(atol, 4 * eager_error))


@contextlib.contextmanager
def _tf32(allowed: bool):
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = allowed
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_forward_matches_reference(case, dtype, device):
    x, weight, bias = _inputs(*case, dtype, device)
    assert_matches_reference(fused_linear_gelu(x, weight, bias), x, weight, bias)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("batch", [32, 33], ids=["small_batch", "gemm_batch"])
def test_long_reduction(batch, dtype, device):
    # 1000 products per output: on CUDA at batch 32, 8 reduction steps per warp and a partial last one.
    x, weight, bias = _inputs((batch, 1000), 37, dtype, device)
    assert_matches_reference(fused_linear_gelu(x, weight, bias), x, weight, bias)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("x_layout", testing.LAYOUTS)
@pytest.mark.parametrize("weight_layout", testing.LAYOUTS)
@BATCH_SHAPES
def test_forward_with_any_strides(batch_shape, weight_layout, x_layout, dtype, device):
    x, weight, bias = _inputs((*batch_shape, 24), 21, dtype, device, x_layout, weight_layout)
    assert_matches_reference(fused_linear_gelu(x, weight, bias), x, weight, bias)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("bias_layout", ["strided", "misaligned"])
@BATCH_SHAPES
def test_non_contiguous_or_misaligned_bias(batch_shape, bias_layout, dtype, device):
    x, weight, _ = _inputs((*batch_shape, 24), 20, dtype, device)
    bias = testing.make_tensor((20,), dtype, device, bias_layout, low=-1, high=1)
    assert_matches_reference(fused_linear_gelu(x, weight, bias), x, weight, bias)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
@pytest.mark.parametrize("case", [((3, 5, 17), 13), ((17,), 13), ((0, 17), 13)], ids=str)
def test_backward_matches_reference(case, dtype, device):
    inputs = [t.requires_grad_() for t in _inputs(*case, dtype, device)]
    y = fused_linear_gelu(*inputs)
    grad = testing.make_tensor(y.shape, dtype, device, low=-1, high=1)
    grads = torch.autograd.grad(y, inputs, grad)
    inputs64 = _as_float64(*inputs)
    expected = torch.autograd.grad(reference(*inputs64), inputs64, grad.double())
    for actual, want in zip(grads, expected):
        testing.assert_close(actual, want, dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("case", [((2, 3, 5), 6), ((3, 0), 2)], ids=str)
def test_gradcheck(case, device):
    testing.check_gradients(fused_linear_gelu, *_inputs(*case, torch.float64, device))


@pytest.mark.parametrize("device", testing.DEVICES)
def test_opcheck(device):
    for case in [((3, 5, 17), 13), ((0, 17), 13), ((17,), 13)]:
        inputs = _inputs(*case, torch.float32, device)
        testing.check_opcheck(OP, *inputs)
        testing.check_opcheck(OP, *[t.clone().requires_grad_() for t in inputs])


@pytest.mark.parametrize("device", testing.DEVICES)
def test_torch_compile_fullgraph(device):
    x, weight, bias = _inputs((4, 16, 33), 24, torch.float32, device)
    testing.check_compiles(lambda t, w, b: fused_linear_gelu(t * 2, w, b) + 1, x, weight, bias)


@testing.requires_cuda
def test_float32_follows_the_tf32_flag():
    # 1024 products of values in [-1, 1] per output: full float32 errs by ~1e-6, TF32 (10-bit
    # mantissas) by ~1e-2. Eager nn.Linear + GELU, under the same flag, calibrates each case.
    x, weight, bias = _inputs((256, 1024), 256, torch.float32, "cuda")
    expected = reference(*_as_float64(x, weight, bias))

    def max_error(fn):
        return (fn(x, weight, bias).double() - expected).abs().max().item()

    with _tf32(False):
        assert max_error(fused_linear_gelu) < 1e-4 and max_error(reference) < 1e-4
    if torch.cuda.get_device_capability() >= (8, 0):
        with _tf32(True):
            assert max_error(fused_linear_gelu) > 1e-4 and max_error(reference) > 1e-4


@pytest.mark.parametrize("device", testing.DEVICES)
def test_rejects_bad_arguments(device):
    x, weight, bias = _inputs((4, 5), 3, torch.float32, device)
    bad = [
        ((torch.arange(5, device=device), weight, bias), "x must be a floating-point tensor"),
        ((x[0, 0], weight, bias), "x must have at least 1 dimension"),
        ((x, weight[0], bias), "weight must have 2 dimension"),
        ((x, weight[:, :4], bias), r"weight must have x.size\(-1\) = 5 columns \(in_features\), got shape \[3, 4\]"),
        ((x, weight, bias[None]), "bias must have 1 dimension"),
        ((x, weight, bias[:2]), r"bias must have weight.size\(0\) = 3 elements \(out_features\), got 2"),
        ((x, weight.double(), bias), "weight and x must have the same dtype"),
        ((x, weight, bias.half()), "bias and x must have the same dtype"),
    ]
    for args, message in bad:
        with pytest.raises(RuntimeError, match=message):
            fused_linear_gelu(*args)


@testing.requires_cuda
def test_rejects_x_on_another_device():
    # SPEC's check puts weight, then bias on the CPU; here x is the one on the CPU.
    x, weight, bias = _inputs((4, 5), 3, torch.float32, "cuda")
    with pytest.raises(RuntimeError, match="weight and x must be on the same device"):
        fused_linear_gelu(x.cpu(), weight, bias)


@testing.requires_cuda
@pytest.mark.parametrize("batch", [16, 4096], ids=["small_batch", "gemm_batch"])
def test_runs_on_the_current_stream(batch):
    x, weight, bias = _inputs((batch, 256), 384, torch.float32, "cuda")
    y = testing.call_on_side_stream(fused_linear_gelu, x, weight, bias)
    # A GEMM's tolerance (float32 rounding of 256 products), not an elementwise one: a stream bug
    # shows as unwritten or stale output, far outside it.
    torch.testing.assert_close(y.double(), reference(*_as_float64(x, weight, bias)), rtol=1e-4, atol=1e-4)
