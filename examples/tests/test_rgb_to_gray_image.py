"""scripts/rgb_to_gray_image.py and its PNG codec (scripts/png.py): the shipped test image decodes
to the pattern it was drawn from, the codec round-trips every row filter, and the script writes
the gray image that rgb_to_gray computes."""
import importlib.util
import os
import random
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
import torch

import opgen_testing as testing
from opgen_examples.ops.rgb_to_gray import reference

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "rgb_to_gray_image.py"
TEST_IMAGE = ROOT / "data" / "rgb_test_256x192.png"


def _load_png_module():
    # By path, under its own name: "png" could be another package (pypng) here.
    spec = importlib.util.spec_from_file_location("opgen_scripts_png", ROOT / "scripts" / "png.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


png = _load_png_module()


def colour_pattern(width: int = 256, height: int = 192) -> bytes:
    """The shipped test image's RGB pixels: colour ramps under three saturated discs. The file was
    written once with png.write(TEST_IMAGE, png.Image(256, 192, 3, colour_pattern()),
    filters=[0, 1, 2, 3] + [4] * 188): rows 0-3 take None, Sub, Up, Average, the rest Paeth."""
    discs = [(64, 64, 40, (255, 0, 0)), (160, 100, 56, (0, 200, 60)), (224, 40, 28, (30, 60, 255))]
    pixels = bytearray()
    for y in range(height):
        for x in range(width):
            colour = (x * 255 // (width - 1), y * 255 // (height - 1), 255 - (x + y) * 255 // (width + height - 2))
            for cx, cy, radius, fill in discs:
                if (x - cx) ** 2 + (y - cy) ** 2 <= radius**2:
                    colour = fill
            pixels += bytes(colour)
    return bytes(pixels)


def row_filters(data: bytes, image) -> set:
    raw = zlib.decompress(b"".join(body for kind, body in png.chunks(data) if kind == b"IDAT"))
    stride = 1 + image.width * image.channels
    return {raw[y * stride] for y in range(image.height)}


def test_shipped_image_is_the_pattern_and_uses_every_filter():
    data = TEST_IMAGE.read_bytes()
    image = png.decode(data)
    assert (image.width, image.height, image.channels) == (256, 192, 3)
    assert image.pixels == colour_pattern()
    assert row_filters(data, image) == {0, 1, 2, 3, 4}  # so decoding it exercises all five
    assert len(data) < 8_000


@pytest.mark.parametrize("filters", [[0], [1], [2], [3], [4], None])
@pytest.mark.parametrize("channels", [1, 3])
def test_codec_round_trips(channels, filters):
    rng = random.Random(channels)
    width, height = 13, 7
    smooth = [(x * 9 + y * 17 + c * 50) % 256 for y in range(height) for x in range(width) for c in range(channels)]
    noisy = [rng.randrange(256) for _ in smooth]
    for pixels in (smooth, noisy):
        image = png.Image(width, height, channels, bytes(pixels))
        assert png.decode(png.encode(image, filters)) == image


def test_decoder_refuses_what_it_cannot_read():
    data = png.encode(png.Image(2, 2, 3, bytes(12)))
    with pytest.raises(ValueError, match="not a PNG file"):
        png.decode(b"GIF89a" + data[6:])
    corrupt = bytearray(data)
    corrupt[-20] ^= 1  # inside the IDAT chunk
    with pytest.raises(ValueError, match="bad CRC"):
        png.decode(bytes(corrupt))
    with pytest.raises(ValueError, match="truncated PNG"):
        png.decode(data[:-12])
    sixteen_bit = png.SIGNATURE + png.make_chunk(b"IHDR", bytes.fromhex("00000002 00000002 10 02 00 00 00"))
    with pytest.raises(ValueError, match="unsupported PNG: bit depth 16"):
        png.decode(sixteen_bit + png.make_chunk(b"IEND", b""))


def run_script(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("device", testing.DEVICES)
def test_script_writes_the_gray_image(device, tmp_path):
    out = tmp_path / "gray.png"
    result = run_script(str(TEST_IMAGE), str(out), "--device", device)
    assert result.returncode == 0, result.stderr
    assert f"converted on {device}" in result.stdout
    gray = png.read(out)
    assert (gray.width, gray.height, gray.channels) == (256, 192, 1)
    rgb = torch.frombuffer(bytearray(colour_pattern()), dtype=torch.uint8).view(192, 256, 3)
    assert gray.pixels == bytes(reference(rgb).flatten().tolist())
    assert gray.pixels[64 * 256 + 64] == 76  # the red disc: round(0.299 * 255)


def test_script_refuses_a_gray_input(tmp_path):
    gray = tmp_path / "gray.png"
    png.write(gray, png.Image(4, 3, 1, bytes(range(12))))
    result = run_script(str(gray), str(tmp_path / "out.png"), "--device", "cpu")
    assert result.returncode != 0
    assert "is a grayscale image; expected RGB" in result.stderr
