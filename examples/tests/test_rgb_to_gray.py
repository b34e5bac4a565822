"""rgb_to_gray: what is special to this op (every RGB colour rounded, a channels-first view, CUDA
equal to the CPU bit for bit on both kernel paths, the image checks, > 2**31 bytes). The standard
checks (bit-exact against the integer reference on every layout and shape in SPEC, opcheck,
torch.compile, streams, devices, threads) run from its SPEC (opgen_examples/ops/rgb_to_gray.py) in
test_opgen_conformance.py.
"""
import opgen_testing as testing
import pytest
import torch

from opgen_examples.ops.rgb_to_gray import SPEC, reference, rgb_to_gray


def make_image(shape, device, layout="contiguous"):
    return testing.make_tensor(shape, torch.uint8, device, layout, low=0, high=255)


def every_colour(device) -> torch.Tensor:
    """A 4096 x 4096 image holding each of the 2^24 RGB colours once."""
    code = torch.arange(1 << 24, dtype=torch.int32, device=device)
    rgb = torch.stack([code >> 16, (code >> 8) & 255, code & 255], dim=-1)
    return rgb.to(torch.uint8).view(4096, 4096, 3)


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("layout", testing.LAYOUTS)
def test_result_is_an_h_x_w_contiguous_byte_tensor(layout, device):
    gray = rgb_to_gray(make_image((33, 65, 3), device, layout))
    assert gray.dtype == torch.uint8 and gray.shape == (33, 65) and gray.is_contiguous()


@pytest.mark.parametrize("device", testing.DEVICES)
def test_channels_first_view(device):
    img = make_image((3, 37, 129), device).permute(1, 2, 0)  # H x W x 3 view of a 3 x H x W tensor
    assert torch.equal(rgb_to_gray(img), reference(img))


@pytest.mark.parametrize("device", testing.DEVICES)
def test_every_colour_is_rounded_bt601(device):
    img = every_colour(device)
    gray = rgb_to_gray(img)
    assert gray[0, 0] == 0 and gray[-1, -1] == 255  # black and white stay black and white
    for rows in (slice(start, start + 512) for start in range(0, 4096, 512)):  # bounded temporaries
        assert torch.equal(gray[rows], reference(img[rows]))
        r, g, b = img[rows].int().unbind(-1)
        error = (1000 * gray[rows].int() - (299 * r + 587 * g + 114 * b)).abs()  # in 1/1000 of a level
        assert error.max() <= 500 + 3  # rounded to nearest, up to the fixed-point weights' error


@testing.requires_cuda
@pytest.mark.parametrize("aligned", [True, False])
def test_cuda_matches_cpu_bit_for_bit(aligned):
    img = make_image((1080, 1921, 3), "cpu")  # many full 4096-pixel tiles and a partial one
    storage = torch.empty(img.numel() + 1, dtype=torch.uint8, device="cuda")
    on_gpu = storage[:-1] if aligned else storage[1:]  # 16-byte aligned or not: the shifting, too
    on_gpu.copy_(img.flatten())
    on_gpu = on_gpu.view(img.shape)
    assert (on_gpu.data_ptr() % 16 == 0) == aligned
    assert torch.equal(rgb_to_gray(on_gpu).cpu(), rgb_to_gray(img))


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("shape", [(1, 1, 3), (2, 5, 3), (67, 251, 3)])
def test_every_misalignment(shape, device):
    # On CUDA an image that starts mid-vector (rgb[1:], any of 16 byte offsets) still takes the
    # vector path: staged from aligned loads, shifted into place. 67 x 251: four full tiles and a
    # partial one.
    img = make_image(shape, device)
    expected = reference(img.cpu())
    for offset in range(16):
        shifted = testing.at_offset(img, offset)
        assert shifted.data_ptr() % 16 == offset
        assert torch.equal(rgb_to_gray(shifted).cpu(), expected)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_rejects_bad_input(device):
    img = make_image((4, 5, 3), device)
    with pytest.raises(RuntimeError, match="img must be Byte, got Float"):
        rgb_to_gray(img.float())
    for shape in [(4, 5, 4), (4, 15), (1, 4, 5, 3)]:
        with pytest.raises(RuntimeError, match=r"img must be an H x W x 3 \(RGB\) image, got shape"):
            rgb_to_gray(make_image(shape, device))


@testing.requires_cuda_memory(8)
def test_more_than_2_to_the_31_bytes():
    img = torch.randint(0, 256, (23000, 32000, 3), dtype=torch.uint8, device="cuda")  # 2.2 GB: byte offsets pass 2^31
    gray = rgb_to_gray(img)
    for rows in (slice(0, 2), slice(22365, 22375), slice(22998, 23000)):  # byte 2^31 is in row 22369
        assert torch.equal(gray[rows], reference(img[rows]))
