"""bitonic_sort: achieved bandwidth against eager PyTorch, torch.compile and the device copy."""
import torch

from opgen_examples.ops.bitonic_sort import bitonic_sort, reference


def run(bench) -> None:
    x = torch.randn(1 << 28, device="cuda")
    bench.compare("bitonic_sort", "n=2^28 float32", bytes_moved=2 * x.nbytes, ours=lambda: bitonic_sort(x), eager=lambda: reference(x))
