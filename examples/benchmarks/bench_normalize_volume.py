"""normalize_volume: achieved bandwidth against eager PyTorch, torch.compile and the device copy."""
import torch

from opgen_examples.ops.normalize_volume import normalize_volume, reference


def run(bench) -> None:
    x = torch.randn(1 << 28, device="cuda")
    bench.compare("normalize_volume", "n=2^28 float32", bytes_moved=2 * x.nbytes, ours=lambda: normalize_volume(x), eager=lambda: reference(x))
