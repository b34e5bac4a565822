"""gemm: float32 TFLOP/s against cuBLAS (TF32 off), and the seed's naive kernel at 4096."""
import torch

from opgen_examples.ops.gemm import gemm, gemm_naive, reference


def run(bench) -> None:
    allow_tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False  # cuBLAS in plain float32, like our kernel
    try:
        for n in (4096, 8192):
            a = torch.randn(n, n, device="cuda")
            b = torch.randn(n, n, device="cuda")
            seed = {"seed": lambda: gemm_naive(a, b)} if n == 4096 else {}  # ~1 s a call at 8192
            bench.compare("gemm", f"{n}x{n}x{n} float32", flops=2 * n**3, flops_dtype=torch.float32,
                          compile_eager=False, ours=lambda: gemm(a, b), eager=lambda: reference(a, b), **seed)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = allow_tf32
