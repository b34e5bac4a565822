"""gelu_approx: achieved bandwidth against eager PyTorch, torch.compile and the device copy."""
import torch

from opgen_examples.ops.gelu_approx import gelu_approx, reference


def run(bench) -> None:
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.randn(1 << 28, device="cuda", dtype=dtype)  # far larger than L2
        bench.compare("gelu_approx", f"n=2^28 {str(dtype)[6:]}", bytes_moved=2 * x.nbytes,
                      ours=lambda: gelu_approx(x), eager=lambda: reference(x))
