"""rgb_to_gray: an 8-bit H x W x 3 RGB image to 8-bit H x W gray (BT.601 luma in fixed point);
kernels in csrc/rgb_to_gray/ (math in rgb_to_gray.h)."""
import math

import torch
from torch import Tensor

from .._declare import TensorArg, declare

__all__ = ["rgb_to_gray"]


def reference(img: Tensor) -> Tensor:
    """rgb_to_gray in plain PyTorch integer math (exactly the kernels' formula): tests and benchmark."""
    r, g, b = img.int().unbind(-1)
    return ((19595 * r + 38470 * g + 7471 * b + 32768) >> 16).to(torch.uint8)


def fake(img: Tensor) -> Tensor:
    """The result's shape, for torch.compile and opcheck (rgb_to_gray_naive's too)."""
    torch._check(img.dtype == torch.uint8, lambda: f"img must be Byte, got {img.dtype}")
    torch._check(img.dim() == 3 and img.shape[2] == 3,
                 lambda: f"img must be an H x W x 3 (RGB) image, got shape {tuple(img.shape)}")
    return img.new_empty(img.shape[:2])


def _image_shape(shape: tuple) -> tuple:
    """The conformance suite's case shape as an H x W x 3 image: H x W from its dims (ones in front,
    leading dims merged into H)."""
    shape = (1,) * (2 - len(shape)) + tuple(shape)
    return (math.prod(shape[:-1]), shape[-1], 3)


SPEC = declare(
    "rgb_to_gray(Tensor img) -> Tensor",
    kind="custom",  # host code csrc/rgb_to_gray/rgb_to_gray.cpp: `forward` on both devices
    # The seed's kernel (CUDA only, float weights truncated, not rounded): a benchmark baseline.
    variants={"rgb_to_gray_naive(Tensor img) -> Tensor": {"CUDA": "naive"}},
    reference=reference,
    fake=fake,
    doc="""Gray = round(0.299 R + 0.587 G + 0.114 B), computed as (19595 R + 38470 G + 7471 B + 2^15) >> 16.

    img: uint8, H x W x 3, any strides, on CPU or CUDA (bit-identical results). Returns a
    contiguous uint8 H x W tensor. Traceable by torch.compile(fullgraph=True); not differentiable.
    """,
    args={"img": TensorArg(shape=_image_shape, dtype=torch.uint8, domain=(0, 255))},
    dtypes=(torch.uint8,),  # the result's: compared exactly
    # H x W: empty, one pixel, odd sizes, 4096-pixel CUDA tiles (64 x 64 is exactly one), and a
    # partial last tile.
    shapes=[(0, 0), (0, 5), (1, 1), (7, 13), (64, 64), (33, 65), (5, 4099)],
)
rgb_to_gray = SPEC.function
naive = SPEC.variants["rgb_to_gray_naive"]
