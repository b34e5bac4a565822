"""scale: achieved bandwidth against eager PyTorch, torch.compile and the device copy.

`python -m benchmarks scale` times one large size; `--sweep` times SWEEP (sizes 2^10 to 2^28 in
float32, bfloat16 and float16, misaligned views, odd sizes) and checks TARGETS.
"""

import torch

from opgen_examples.ops.scale import reference, scale

from .limits import LAUNCH_BOUND
from .sweep import dtype_name, elementwise_points, size_name, tensor
from .targets import beats_eager_and_compile, host_within, near_copy_when_misaligned

SIZE_LABEL = "elements"
SWEEP = elementwise_points()
HOST_NATIVE = "torch.neg"
TARGETS = [
    beats_eager_and_compile(limit=LAUNCH_BOUND),
    near_copy_when_misaligned("float32 misaligned"),
    host_within(1.5, HOST_NATIVE),
]


def run(bench) -> None:
    for dtype in (torch.float32, torch.bfloat16):
        measure(bench, 1 << 28, dtype)  # far larger than L2


def measure(bench, size: int, dtype: torch.dtype, misaligned: bool = False) -> None:
    x = tensor(size, dtype, misaligned)
    # Each input read once, the result written once.
    bytes_moved = 2 * size * x.element_size()
    case = f"n={size_name(size)} {dtype_name(dtype)}{' misaligned' if misaligned else ''}"
    bench.compare(
        "scale",
        case,
        bytes_moved=bytes_moved,
        ours=lambda: scale(x, factor=2.0),
        eager=lambda: reference(x, factor=2.0),
    )


def host_calls(numel: int) -> dict:
    """Calls on numel-element inputs (benchmarks/host.py): ours, the bare torch.ops call, a native op."""
    x = tensor(numel)
    return {
        "ours": lambda: scale(x, factor=2.0),
        "raw": lambda: torch.ops.examples.scale.default(x, factor=2.0),
        "native": lambda: torch.neg(x),
    }
