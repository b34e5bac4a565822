"""scale: achieved bandwidth (x read, y written) against eager x * 2 and torch.compile."""
import torch

from opgen_examples.ops.scale import reference, scale


def run(bench) -> None:
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.randn(1 << 28, device="cuda", dtype=dtype)  # 2 GiB moved in float32: far larger than L2
        bench.compare("scale", f"n=2^28 {str(dtype)[6:]}", bytes_moved=2 * x.nbytes,
                      ours=lambda: scale(x), eager=lambda: reference(x))
