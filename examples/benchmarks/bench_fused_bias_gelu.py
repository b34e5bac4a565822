"""fused_bias_gelu: achieved bandwidth (x read + y written) against eager PyTorch, torch.compile and the copy.

`python -m benchmarks fused_bias_gelu` times 65536-row inputs; `--sweep` times SWEEP (1 to 65536 rows
of 4096 in float32, bfloat16 and float16, misaligned views, odd row lengths) and checks TARGETS.
"""

import torch

from opgen_examples.ops.fused_bias_gelu import fused_bias_gelu, reference

from .limits import LAUNCH_BOUND, ODD_ROWS
from .sweep import FLOATING_16_32, dtype_name, line, powers_of_two, tensor
from .targets import beats_eager_and_compile, host_within, near_copy_when_misaligned

COLS = 4096
SIZE_LABEL = "elements of x"
ROWS = powers_of_two(0, 16, 2)  # x of 2^12 to 2^28 elements
SWEEP = [
    *(p for d in FLOATING_16_32 for p in line(dtype_name(d), [r * COLS for r in ROWS], [1 << 28], dtype=d, cols=COLS)),
    *line("float32 misaligned", [r * COLS for r in ROWS], [1 << 28], dtype=torch.float32, cols=COLS, misaligned=True),
    *line("float32 odd rows (1001)", [r * 1001 for r in (3, 1000, 65_537)], dtype=torch.float32, cols=1001),
]
HOST_NATIVE = "torch.add"
TARGETS = [
    beats_eager_and_compile(limit=f"{LAUNCH_BOUND}; {ODD_ROWS}"),
    near_copy_when_misaligned("float32 misaligned"),
    host_within(1.5, HOST_NATIVE),
]


def run(bench) -> None:
    for rows, cols, dtype in [
        (65536, 4096, torch.float32),
        (65536, 4096, torch.bfloat16),
        (65536, 3072, torch.bfloat16),
    ]:
        measure(bench, rows * cols, dtype, cols)  # far larger than L2


def measure(bench, size: int, dtype: torch.dtype, cols: int, misaligned: bool = False) -> None:
    rows = size // cols
    x = tensor((rows, cols), dtype, misaligned)
    bias = tensor(cols, dtype)
    bench.compare(
        "fused_bias_gelu",
        f"{rows}x{cols} {dtype_name(dtype)}{' misaligned' if misaligned else ''}",
        bytes_moved=2 * x.nbytes,
        ours=lambda: fused_bias_gelu(x, bias),
        eager=lambda: reference(x, bias),
    )


def host_calls(numel: int) -> dict:
    x, bias = tensor(numel), tensor(numel)
    return {
        "ours": lambda: fused_bias_gelu(x, bias),
        "raw": lambda: torch.ops.examples.fused_bias_gelu.default(x, bias),
        "native": lambda: torch.add(x, bias),
    }
