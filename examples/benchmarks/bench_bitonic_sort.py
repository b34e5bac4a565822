"""bitonic_sort: time against torch.sort (default and stable) and torch.compile, as bandwidth."""
import torch

from opgen_examples.ops.bitonic_sort import bitonic_sort


def run(bench) -> None:
    # Rows of 1024 (one block each), many short rows (several per block), long rows (multi-pass).
    for rows, cols in [(16384, 1024), (1 << 18, 64), (64, 1 << 16)]:
        x = torch.randn(rows, cols, device="cuda")
        bytes_moved = 2 * x.nbytes + x.numel() * 8  # read x, write values and int64 indices
        bench.compare("bitonic_sort", f"{rows}x{cols} float32", bytes_moved=bytes_moved,
                      ours=lambda: bitonic_sort(x), eager=lambda: torch.sort(x, dim=-1),
                      stable=lambda: torch.sort(x, dim=-1, stable=True))
