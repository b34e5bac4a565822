"""fused_relu_scale: achieved bandwidth (x read, y written once) against eager relu(x) * 1.5 (two
kernels, twice the traffic), torch.compile and the seed's kernel (float32), with the seed's alpha."""
import torch

from opgen_examples.ops.fused_relu_scale import fused_relu_scale, naive, reference

ALPHA = 1.5  # the seed's


def run(bench) -> None:
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.randn(1 << 28, device="cuda", dtype=dtype)  # 2 GiB moved in float32: far larger than L2
        seed = {"seed": lambda: naive(x, ALPHA)} if dtype == torch.float32 else {}
        bench.compare("fused_relu_scale", f"n=2^28 {str(dtype)[6:]}", bytes_moved=2 * x.nbytes,
                      ours=lambda: fused_relu_scale(x, ALPHA), eager=lambda: reference(x, ALPHA), **seed)
