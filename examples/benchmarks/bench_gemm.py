"""gemm: achieved bandwidth against eager PyTorch, torch.compile and the device copy."""
import torch

from opgen_examples.ops.gemm import gemm, reference


def run(bench) -> None:
    x = torch.randn(1 << 28, device="cuda")
    bench.compare("gemm", "n=2^28 float32", bytes_moved=2 * x.nbytes, ours=lambda: gemm(x), eager=lambda: reference(x))
