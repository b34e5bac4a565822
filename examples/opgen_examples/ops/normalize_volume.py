"""normalize_volume: a uint16 D x H x W volume to float32, divided by max_value; kernels in
csrc/normalize_volume/ (math in normalize_volume.h)."""
import math

import torch
from torch import Tensor

from .._declare import TensorArg, declare

__all__ = ["normalize_volume"]


def reference(volume: Tensor, max_value: float) -> Tensor:
    """normalize_volume in plain PyTorch (two passes): the benchmark times it."""
    return volume.float() / max_value


def fake(volume: Tensor, max_value: float) -> Tensor:
    """The result's shape and dtype, for torch.compile and opcheck (normalize_volume_naive's too)."""
    torch._check(volume.dtype == torch.uint16, lambda: f"volume must be UInt16, got {volume.dtype}")
    torch._check(volume.dim() == 3, lambda: f"volume must have 3 dimension(s), got shape {tuple(volume.shape)}")
    return volume.new_empty(volume.shape, dtype=torch.float32)


def _volume_shape(shape: tuple) -> tuple:
    """The conformance suite's case shape as D x H x W: leading dims merged, ones in front."""
    shape = (1,) * (3 - len(shape)) + tuple(shape)
    return (math.prod(shape[:-2]), *shape[-2:])


SPEC = declare(
    "normalize_volume(Tensor volume, float max_value) -> Tensor",
    kind="custom",  # host code csrc/normalize_volume/normalize_volume.cpp: `forward` on both devices
    # The seed's kernel (CUDA only, a 3-D grid of one-voxel threads, int index): a benchmark baseline.
    variants={"normalize_volume_naive(Tensor volume, float max_value) -> Tensor": {"CUDA": "naive"}},
    reference=reference,
    fake=fake,
    doc="""volume.float() / max_value in one pass, for a 3-D uint16 volume and max_value > 0.

    CPU and CUDA, any strides (the result is a contiguous float32 tensor of volume's shape);
    traceable by torch.compile(fullgraph=True); not differentiable (the input is integer).
    """,
    args={"volume": TensorArg(shape=_volume_shape, dtype=torch.uint16, domain=(0, 65535)),
          "max_value": 4095.0},  # the seed's: 12-bit CT data
    dtypes=(torch.float32,),  # the result's
    # Empty, one voxel, odd sizes, several 4096-voxel CUDA tiles plus a partial one.
    shapes=[(0, 0, 0), (4, 0, 3), (1, 1, 1), (2, 3, 7), (3, 5, 1027), (17, 19, 23)],
)
normalize_volume = SPEC.function
naive = SPEC.variants["normalize_volume_naive"]
