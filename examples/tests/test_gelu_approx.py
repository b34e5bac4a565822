"""gelu_approx: values against a float64 reference, gradients, opcheck, torch.compile, bad input."""
import pytest
import torch

from opgen_examples import testing
from opgen_examples.ops.gelu_approx import gelu_approx, reference

OP = torch.ops.examples.gelu_approx.default
BACKWARD_OP = torch.ops.examples.gelu_approx_backward.default


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
@pytest.mark.parametrize("layout", testing.LAYOUTS)
@pytest.mark.parametrize("shape", testing.SHAPES)
def test_forward_matches_reference(shape, layout, dtype, device):
    x = testing.make_tensor(shape, dtype, device, layout)
    testing.assert_close(gelu_approx(x), reference(x.double()), dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
def test_backward_matches_reference(dtype, device):
    x = testing.make_tensor((37, 129), dtype, device).requires_grad_()
    grad = testing.make_tensor((37, 129), dtype, device)
    (dx,) = torch.autograd.grad(gelu_approx(x), x, grad)
    x64 = x.detach().double().requires_grad_()
    (expected,) = torch.autograd.grad(reference(x64), x64, grad.double())
    testing.assert_close(dx, expected, dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_gradcheck(device):
    testing.check_gradients(gelu_approx, testing.make_tensor((4, 33), torch.float64, device))


@pytest.mark.parametrize("device", testing.DEVICES)
def test_opcheck(device):
    for shape in [(7, 9), (0,), (1031,)]:
        x = testing.make_tensor(shape, torch.float32, device)
        testing.check_opcheck(OP, x)
        testing.check_opcheck(OP, x.clone().requires_grad_())
        testing.check_opcheck(BACKWARD_OP, testing.make_tensor(shape, torch.float32, device), x)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_torch_compile_fullgraph(device):
    x = testing.make_tensor((64, 33), torch.float32, device)
    testing.check_compiles(lambda t: gelu_approx(t * 2) + 1, x)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_rejects_integer_input(device):
    with pytest.raises(RuntimeError, match="x must be a floating-point tensor"):
        gelu_approx(torch.arange(6, device=device))


@pytest.mark.parametrize("device", testing.DEVICES)
def test_backward_rejects_mismatched_arguments(device):
    x = testing.make_tensor((4, 5), torch.float32, device)
    with pytest.raises(RuntimeError, match="grad and x must have the same shape"):
        BACKWARD_OP(testing.make_tensor((5, 4), torch.float32, device), x)
    with pytest.raises(RuntimeError, match="grad and x must have the same dtype"):
        BACKWARD_OP(x.double(), x)


@testing.requires_cuda
def test_rejects_tensors_on_different_devices():
    with pytest.raises(RuntimeError, match="grad and x must be on the same device"):
        BACKWARD_OP(torch.ones(3, device="cuda"), torch.ones(3))


@testing.requires_cuda
def test_runs_on_the_current_stream():
    x = testing.make_tensor((1 << 20,), torch.float32, "cuda")
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        y = gelu_approx(x)
    stream.synchronize()
    testing.assert_close(y, reference(x.double()))


@testing.requires_cuda_memory(24)
def test_more_than_2_to_the_31_elements():
    n = 2**31 + 77
    x = torch.empty(n, dtype=torch.float16, device="cuda").uniform_(-4, 4)
    y = gelu_approx(x)
    for part in (slice(0, 4096), slice(2**31 - 4096, 2**31 + 4096), slice(n - 4096, n)):
        testing.assert_close(y[part], reference(x[part].double()), torch.float16)
