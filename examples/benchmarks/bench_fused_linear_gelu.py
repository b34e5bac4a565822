"""fused_linear_gelu: TFLOP/s against eager nn.Linear + GELU(tanh), torch.compile, the seed's kernel (float32)
and cuBLAS's matmul rate."""
import torch

from opgen_examples.ops.fused_linear_gelu import fused_linear_gelu, naive, reference


def run(bench) -> None:
    for m, k, n in [(32, 768, 3072), (8192, 768, 3072)]:  # a GPT-2/BERT-base MLP up-projection
        for dtype in (torch.float32, torch.bfloat16):
            x = torch.randn(m, k, device="cuda", dtype=dtype)
            weight = torch.randn(n, k, device="cuda", dtype=dtype) / k**0.5
            bias = torch.randn(n, device="cuda", dtype=dtype)
            seed = {"seed": lambda: naive(x, weight, bias)} if dtype == torch.float32 else {}  # ~76 ms at 8192
            bench.compare("fused_linear_gelu", f"{m}x{k}x{n} {str(dtype)[6:]}", flops=2 * m * n * k,
                          flops_dtype=dtype, ours=lambda: fused_linear_gelu(x, weight, bias),
                          eager=lambda: reference(x, weight, bias), **seed)
