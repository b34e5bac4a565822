"""normalize_volume: values against a float64 reference, gradients, opcheck, torch.compile, bad input."""
import pytest
import torch

from opgen_examples import testing
from opgen_examples.ops.normalize_volume import normalize_volume, reference

OP = torch.ops.examples.normalize_volume.default


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES)
@pytest.mark.parametrize("layout", testing.LAYOUTS)
@pytest.mark.parametrize("shape", testing.SHAPES)
def test_forward_matches_reference(shape, layout, dtype, device):
    x = testing.make_tensor(shape, dtype, device, layout)
    testing.assert_close(normalize_volume(x), reference(x.double()), dtype)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_gradcheck(device):
    testing.check_gradients(normalize_volume, testing.make_tensor((4, 33), torch.float64, device))


@pytest.mark.parametrize("device", testing.DEVICES)
def test_opcheck(device):
    for shape in [(7, 9), (0,), (1031,)]:
        x = testing.make_tensor(shape, torch.float32, device)
        testing.check_opcheck(OP, x)
        testing.check_opcheck(OP, x.clone().requires_grad_())


@pytest.mark.parametrize("device", testing.DEVICES)
def test_torch_compile_fullgraph(device):
    testing.check_compiles(lambda t: normalize_volume(t * 2) + 1, testing.make_tensor((64, 33), torch.float32, device))


@pytest.mark.parametrize("device", testing.DEVICES)
def test_rejects_integer_input(device):
    with pytest.raises(RuntimeError, match="x must be a floating-point tensor"):
        normalize_volume(torch.arange(6, device=device))
