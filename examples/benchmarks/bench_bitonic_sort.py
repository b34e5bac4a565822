"""bitonic_sort: time against torch.sort (default and stable) and torch.compile, as bandwidth.

`python -m benchmarks bitonic_sort` times three shapes; `--sweep` times SWEEP (rows of 1 to 2^24 at
2^24 elements in all, in float32; bfloat16, float16, float64, int32 and int64 at fewer row
lengths, against torch.sort only) and checks TARGETS.
"""

import torch

from opgen_examples.ops.bitonic_sort import bitonic_sort

from .limits import SHORT_ROWS
from .sweep import dtype_name, line, powers_of_two, tensor
from .targets import Target, beats_eager_and_compile, host_within

TOTAL = 1 << 24  # elements per point
SIZE_LABEL = "row length (rows x length = 2^24)"
OTHER_DTYPES = (torch.bfloat16, torch.float16, torch.float64, torch.int32, torch.int64)
SWEEP = [
    *line("float32", powers_of_two(0, 24, 2), key=[1024, 1 << 24], dtype=torch.float32),
    *line("float32 odd rows", [3, 1000, 5000, 1_000_003], dtype=torch.float32),
    *(p for d in OTHER_DTYPES for p in line(dtype_name(d), [64, 1024, 1 << 16, 1 << 24], dtype=d)),
]
HOST_NATIVE = "torch.sort"
TARGETS = [
    beats_eager_and_compile(limit=SHORT_ROWS),
    Target("at every row length up to 2^24: >= 1.0x torch.sort", "vs:eager", 1.0),
    Target("rows of 1024 (float32): >= 2x torch.sort", "vs:eager", 2.0, {"series": "float32", "size": 1024}),
    host_within(2.0, HOST_NATIVE),
]


def run(bench) -> None:
    # Rows of 1024 (one block each), many short rows (several per block), long rows (multi-pass).
    for rows, cols in [(16384, 1024), (1 << 18, 64), (64, 1 << 16)]:
        measure(bench, cols, torch.float32, rows=rows)


def measure(bench, size: int, dtype: torch.dtype, rows: int = 0) -> None:
    rows = rows or max(1, TOTAL // size)
    x = tensor((rows, size), dtype, low=-(1 << 20), high=1 << 20)
    bytes_moved = 2 * x.nbytes + x.numel() * 8  # read x, write values and int64 indices
    bench.compare(
        "bitonic_sort",
        f"{rows}x{size} {dtype_name(dtype)}",
        bytes_moved=bytes_moved,
        # torch.compile runs torch.sort's own kernels (a copy at rows of one) and takes seconds
        # to compile each shape: it is timed in float32 only.
        compile_eager=dtype == torch.float32,
        ours=lambda: bitonic_sort(x),
        eager=lambda: torch.sort(x, dim=-1),
        stable=lambda: torch.sort(x, dim=-1, stable=True),
    )


def host_calls(numel: int) -> dict:
    x = tensor(numel)
    return {
        "ours": lambda: bitonic_sort(x),
        "raw": lambda: torch.ops.examples.bitonic_sort.default(x, False),
        "native": lambda: torch.sort(x),
    }
