"""normalize_volume: a uint16 D x H x W volume to float32, divided by max_value; kernels in
csrc/normalize_volume/ (math in normalize_volume.h)."""
import math

import torch
from torch import Tensor

from .._spec import OpSpec, TensorArg

__all__ = ["normalize_volume"]


def normalize_volume(volume: Tensor, max_value: float) -> Tensor:
    """volume.float() / max_value in one pass, for a 3-D uint16 volume and max_value > 0.

    CPU and CUDA, any strides (the result is a contiguous float32 tensor of volume's shape);
    traceable by torch.compile(fullgraph=True); not differentiable (the input is integer).
    """
    return torch.ops.examples.normalize_volume.default(volume, max_value)


def reference(volume: Tensor, max_value: float) -> Tensor:
    """normalize_volume in plain PyTorch (two passes): the benchmark times it."""
    return volume.float() / max_value


def naive(volume: Tensor, max_value: float) -> Tensor:
    """The seed's kernel (CUDA only, a 3-D grid of one-voxel threads, int index): a benchmark baseline."""
    return torch.ops.examples.normalize_volume_naive.default(volume, max_value)


@torch.library.register_fake("examples::normalize_volume")
def _(volume: Tensor, max_value: float) -> Tensor:
    torch._check(volume.dtype == torch.uint16, lambda: f"volume must be UInt16, got {volume.dtype}")
    torch._check(volume.dim() == 3, lambda: f"volume must have 3 dimension(s), got shape {tuple(volume.shape)}")
    return volume.new_empty(volume.shape, dtype=torch.float32)


@torch.library.register_fake("examples::normalize_volume_naive")
def _(volume: Tensor, max_value: float) -> Tensor:
    return volume.new_empty(volume.shape, dtype=torch.float32)


def _volume_shape(shape: tuple) -> tuple:
    """The conformance suite's case shape as D x H x W: leading dims merged, ones in front."""
    shape = (1,) * (3 - len(shape)) + tuple(shape)
    return (math.prod(shape[:-2]), *shape[-2:])


SPEC = OpSpec(
    name="normalize_volume",
    op=torch.ops.examples.normalize_volume.default,
    function=normalize_volume,
    reference=reference,
    args={"volume": TensorArg(shape=_volume_shape, dtype=torch.uint16, domain=(0, 65535)),
          "max_value": 4095.0},  # the seed's: 12-bit CT data
    dtypes=(torch.float32,),  # the result's
    # Empty, one voxel, odd sizes, several 4096-voxel CUDA tiles plus a partial one.
    shapes=[(0, 0, 0), (4, 0, 3), (1, 1, 1), (2, 3, 7), (3, 5, 1027), (17, 19, 23)],
)
