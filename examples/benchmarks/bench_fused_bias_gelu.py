"""fused_bias_gelu: achieved bandwidth against eager PyTorch, torch.compile and the device copy."""
import torch

from opgen_examples.ops.fused_bias_gelu import fused_bias_gelu, reference


def run(bench) -> None:
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.randn(1 << 28, device="cuda", dtype=dtype)  # far larger than L2
        bench.compare("fused_bias_gelu", f"n=2^28 {str(dtype)[6:]}", bytes_moved=2 * x.nbytes,
                      ours=lambda: fused_bias_gelu(x), eager=lambda: reference(x))
