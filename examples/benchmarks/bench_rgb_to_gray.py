"""rgb_to_gray: achieved bandwidth against eager PyTorch, torch.compile and the device copy."""
import torch

from opgen_examples.ops.rgb_to_gray import rgb_to_gray, reference


def run(bench) -> None:
    x = torch.randn(1 << 28, device="cuda")
    bench.compare("rgb_to_gray", "n=2^28 float32", bytes_moved=2 * x.nbytes, ours=lambda: rgb_to_gray(x), eager=lambda: reference(x))
