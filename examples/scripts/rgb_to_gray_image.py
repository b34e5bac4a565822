"""Convert an RGB PNG to a grayscale PNG with opgen_examples.rgb_to_gray, on CUDA when there is a GPU.

    python scripts/rgb_to_gray_image.py data/rgb_test_256x192.png gray.png [--device cpu|cuda]

Needs opgen_examples importable: installed (pip install --no-build-isolation -e .), or from this
checkout with PYTHONPATH=. and OPGEN_JIT=rgb_to_gray (compiles the op on first use). PNGs are
read and written by png.py beside this script (8-bit RGB and grayscale).
"""
from __future__ import annotations

import argparse
import sys

import torch

import png  # scripts/png.py: this script's folder comes first on sys.path
from opgen_examples import rgb_to_gray


def convert(image: png.Image, device: str) -> png.Image:
    rgb = torch.frombuffer(bytearray(image.pixels), dtype=torch.uint8).view(image.height, image.width, 3)
    gray = rgb_to_gray(rgb.to(device)).cpu()
    return png.Image(image.width, image.height, 1, bytes(gray.flatten().tolist()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", help="an 8-bit RGB PNG")
    parser.add_argument("output", help="where to write the 8-bit grayscale PNG")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args(argv)
    try:
        image = png.read(args.input)
    except (OSError, ValueError) as error:
        parser.error(f"cannot read {args.input}: {error}")
    if image.channels != 3:
        parser.error(f"{args.input} is a grayscale image; expected RGB")
    png.write(args.output, convert(image, args.device))
    print(f"{args.input} ({image.width}x{image.height} RGB) -> {args.output} (gray), converted on {args.device}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
