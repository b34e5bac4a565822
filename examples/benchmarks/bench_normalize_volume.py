"""normalize_volume: achieved bandwidth (2 bytes read + 4 written per voxel) against eager
volume.float() / max_value (two passes), torch.compile and the seed's 3-D-grid kernel.

`python -m benchmarks normalize_volume` times a 512^3 volume; `--sweep` times SWEEP (cubes of 16^3 to
512^3 voxels, aligned and misaligned, and odd shapes; the op takes uint16 only) and checks TARGETS.
"""

import torch

from opgen_examples.ops.normalize_volume import naive, normalize_volume, reference

from .limits import LAUNCH_BOUND
from .sweep import Point, tensor
from .targets import beats_eager_and_compile, host_within, near_copy_when_misaligned

MAX_VALUE = 4095.0  # the seed's
SIZE_LABEL = "voxels"
SIDES = (16, 32, 64, 128, 256, 384, 512)
ODD_SHAPES = ((7, 9, 11), (100, 300, 77), (255, 257, 129), (511, 509, 513))
SWEEP = [
    *(Point("uint16 cubes", s**3, {"shape": (s, s, s)}, key=s == 512) for s in SIDES),
    *(Point("uint16 cubes misaligned", s**3, {"shape": (s, s, s), "misaligned": True}, key=s == 512) for s in SIDES),
    *(Point("uint16 odd shapes", d * h * w, {"shape": (d, h, w)}) for d, h, w in ODD_SHAPES),
]
HOST_NATIVE = "Tensor.float"
TARGETS = [
    beats_eager_and_compile(limit=LAUNCH_BOUND),
    near_copy_when_misaligned("uint16 cubes misaligned"),
    host_within(1.5, HOST_NATIVE),
]


def run(bench) -> None:
    for misaligned in (False, True):  # misaligned: not 8-byte aligned, one voxel at a time
        volume = tensor((512, 512, 512), torch.uint16, misaligned, high=4096)
        bench.compare(
            "normalize_volume",
            "512^3 uint16" + (" misaligned" if misaligned else ""),
            bytes_moved=volume.numel() * (2 + 4),  # 768 MiB: far larger than L2
            ours=lambda: normalize_volume(volume, MAX_VALUE),
            eager=lambda: reference(volume, MAX_VALUE),
            seed=lambda: naive(volume, MAX_VALUE),
        )


def measure(bench, size: int, shape: tuple, misaligned: bool = False) -> None:
    volume = tensor(shape, torch.uint16, misaligned, high=4096)
    bench.compare(
        "normalize_volume",
        "x".join(map(str, shape)) + (" misaligned" if misaligned else ""),
        bytes_moved=size * (2 + 4),
        ours=lambda: normalize_volume(volume, MAX_VALUE),
        eager=lambda: reference(volume, MAX_VALUE),
    )


def host_calls(numel: int) -> dict:
    volume = tensor((numel, 1, 1), torch.uint16, high=4096)
    return {
        "ours": lambda: normalize_volume(volume, MAX_VALUE),
        "raw": lambda: torch.ops.examples.normalize_volume.default(volume, MAX_VALUE),
        "native": lambda: volume.float(),
    }
