"""scale: achieved bandwidth against eager PyTorch, torch.compile and the device copy."""

import torch

from opgen_examples.ops.scale import reference, scale


def run(bench) -> None:
    n = 1 << 28  # far larger than L2
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.randn(n, device="cuda", dtype=dtype)
        # Each input read once, the result written once.
        bytes_moved = 2 * n * x.element_size()
        bench.compare(
            "scale",
            f"n=2^28 {str(dtype)[6:]}",
            bytes_moved=bytes_moved,
            ours=lambda: scale(x, factor=2.0),
            eager=lambda: reference(x, factor=2.0),
        )
