"""vector_add: achieved bandwidth against eager PyTorch, torch.compile and the device copy."""
import torch

from opgen_examples.ops.vector_add import vector_add, reference


def run(bench) -> None:
    n = 1 << 28  # far larger than L2
    for dtype in (torch.float32, torch.bfloat16):
        a = torch.randn(n, device="cuda", dtype=dtype)
        b = torch.randn(n, device="cuda", dtype=dtype)
        # Each input read once, the result written once.
        bytes_moved = 3 * n * a.element_size()
        bench.compare("vector_add", f"n=2^28 {str(dtype)[6:]}", bytes_moved=bytes_moved,
                      ours=lambda: vector_add(a, b), eager=lambda: reference(a, b))
