"""scale: values against a float64 reference, gradients (first and second order), opcheck,
torch.compile, bad input."""
import pytest
import torch

from opgen_examples import testing
from opgen_examples.ops.scale import reference, scale

OP = torch.ops.examples.scale.default
FACTOR = -1.37  # not a power of two: the product is rounded


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
@pytest.mark.parametrize("layout", testing.LAYOUTS)
@pytest.mark.parametrize("shape", testing.SHAPES)
def test_forward_matches_reference(shape, layout, dtype, device):
    x = testing.make_tensor(shape, dtype, device, layout)
    testing.assert_close(scale(x, FACTOR), reference(x.double(), FACTOR), dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_default_factor_is_two(device):
    x = testing.make_tensor((1031,), torch.float32, device)
    torch.testing.assert_close(scale(x), x * 2, rtol=0, atol=0)
    torch.testing.assert_close(OP(x), x * 2, rtol=0, atol=0)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("factor", [0.0, 1.0, 3, -0.5, 1e-3])
def test_factors(factor, device):
    x = testing.make_tensor((33, 65), torch.float32, device, "misaligned")
    testing.assert_close(scale(x, factor), reference(x.double(), factor))


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("factor", [FACTOR, 0.0])
def test_nan_and_inf_like_reference(factor, dtype, device):
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0], dtype=dtype, device=device)
    y = scale(x, factor)  # NaN stays NaN; inf * 0 is NaN, as in x * factor
    testing.assert_close(y, reference(x.double(), factor), dtype)
    assert y[0].isnan() and y[3].isfinite()


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
def test_backward_matches_reference(dtype, device):
    x = testing.make_tensor((37, 129), dtype, device).requires_grad_()
    grad = testing.make_tensor((37, 129), dtype, device)
    (dx,) = torch.autograd.grad(scale(x, FACTOR), x, grad)
    testing.assert_close(dx, grad.double() * FACTOR, dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_gradcheck(device):
    testing.check_gradients(lambda x: scale(x, FACTOR), testing.make_tensor((4, 33), torch.float64, device))
    testing.check_gradients(scale, testing.make_tensor((5,), torch.float64, device))


@pytest.mark.parametrize("device", testing.DEVICES)
def test_gradgradcheck(device):
    x = testing.make_tensor((4, 9), torch.float64, device).requires_grad_()
    assert torch.autograd.gradgradcheck(lambda t: scale(t, FACTOR) * t, (x,))


@pytest.mark.parametrize("device", testing.DEVICES)
def test_opcheck(device):
    for shape in [(7, 9), (0,), (1031,)]:
        x = testing.make_tensor(shape, torch.float32, device)
        testing.check_opcheck(OP, x, FACTOR)
        testing.check_opcheck(OP, x.clone().requires_grad_(), FACTOR)
        testing.check_opcheck(OP, x)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_torch_compile_fullgraph(device):
    x = testing.make_tensor((64, 33), torch.float32, device)
    testing.check_compiles(lambda t: scale(t * 2, FACTOR) + 1, x)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_rejects_integer_input(device):
    with pytest.raises(RuntimeError, match="x must be a floating-point tensor"):
        scale(torch.arange(6, device=device))


@testing.requires_cuda
def test_runs_on_the_current_stream():
    x = testing.make_tensor((1 << 20,), torch.float32, "cuda")
    y = testing.call_on_side_stream(lambda t: scale(t, FACTOR), x)
    testing.assert_close(y, reference(x.double(), FACTOR))


@testing.requires_cuda_memory(24)
def test_more_than_2_to_the_31_elements():
    n = 2**31 + 77
    x = torch.empty(n, dtype=torch.float16, device="cuda").uniform_(-4, 4)
    y = scale(x, FACTOR)
    for part in (slice(0, 4096), slice(2**31 - 4096, 2**31 + 4096), slice(n - 4096, n)):
        testing.assert_close(y[part], reference(x[part].double(), FACTOR), torch.float16)
