"""fused_bias_gelu: achieved bandwidth (x read + y written) against eager PyTorch, torch.compile and the copy."""
import torch

from opgen_examples.ops.fused_bias_gelu import fused_bias_gelu, reference


def run(bench) -> None:
    for rows, cols, dtype in [(65536, 4096, torch.float32), (65536, 4096, torch.bfloat16), (65536, 3072, torch.bfloat16)]:
        x = torch.randn(rows, cols, device="cuda", dtype=dtype)  # far larger than L2
        bias = torch.randn(cols, device="cuda", dtype=dtype)
        bench.compare("fused_bias_gelu", f"{rows}x{cols} {str(dtype)[6:]}", bytes_moved=2 * x.nbytes,
                      ours=lambda: fused_bias_gelu(x, bias), eager=lambda: reference(x, bias))
