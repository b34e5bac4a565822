"""gemm: TFLOP/s against cuBLAS (the eager row, TF32 off), and the seed's naive kernel at 4096.

Shapes are M x K x N: a is M x K, b is K x N. `python -m benchmarks gemm` times 4096^3 and 8192^3 in
float32; `--sweep` times SWEEP (float32 squares of 256 to 8192, odd sizes and skinny shapes; bfloat16,
float16 and float64 squares) and checks TARGETS.
"""

from contextlib import contextmanager

import torch

from opgen_examples.ops.gemm import gemm, gemm_naive, reference

from .sweep import Point, dtype_name, tensor
from .targets import Target, beats_eager_and_compile, host_within

SIZE_LABEL = "M*K*N"
SQUARE = (256, 512, 1024, 2048, 4096, 8192)
ODD = ((1000, 1000, 1000), (3000, 5000, 2000), (8192, 768, 3072), (4095, 4097, 4093))
SKINNY = ((8, 4096, 4096), (32, 768, 3072), (4096, 4096, 32))
SWEEP = [
    *(Point("float32 square", n**3, {"shape": (n, n, n), "dtype": torch.float32}, key=n >= 4096) for n in SQUARE),
    *(Point("float32 odd", m * k * n, {"shape": (m, k, n), "dtype": torch.float32}, key=True) for m, k, n in ODD),
    *(Point("float32 skinny", m * k * n, {"shape": (m, k, n), "dtype": torch.float32}) for m, k, n in SKINNY),
    *(
        Point(f"{dtype_name(dtype)} square", n**3, {"shape": (n, n, n), "dtype": dtype})
        for dtype in (torch.bfloat16, torch.float16, torch.float64)
        for n in (256, 1024, 4096 if dtype != torch.float64 else 2048)
    ),
]
HOST_NATIVE = "torch.mm"
TENSOR_CORES = "cuBLAS runs 16-bit and float64 GEMMs on tensor cores; this op is plain FMA by design"
TARGETS = [
    beats_eager_and_compile(limit=f"eager is cuBLAS SGEMM (at best a tie in float32); {TENSOR_CORES}"),
    Target(
        "float32 at 4096^3 and 8192^3: >= 0.95x cuBLAS SGEMM",
        "vs:eager",
        0.95,
        {"series": "float32 square", "size": [4096**3, 8192**3]},
    ),
    Target("float32 at odd sizes: >= 0.85x cuBLAS", "vs:eager", 0.85, {"series": "float32 odd"}),
    host_within(2.0, HOST_NATIVE),
]


@contextmanager
def no_tf32():
    allow_tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False  # cuBLAS in plain float32, like our kernel
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = allow_tf32


def run(bench) -> None:
    with no_tf32():
        for n in (4096, 8192):
            a = torch.randn(n, n, device="cuda")
            b = torch.randn(n, n, device="cuda")
            seed = {"seed": lambda: gemm_naive(a, b)} if n == 4096 else {}  # ~1 s a call at 8192
            bench.compare(
                "gemm",
                f"{n}x{n}x{n} float32",
                flops=2 * n**3,
                flops_dtype=torch.float32,
                compile_eager=False,
                ours=lambda: gemm(a, b),
                eager=lambda: reference(a, b),
                **seed,
            )


def measure(bench, size: int, shape: tuple, dtype: torch.dtype) -> None:
    m, k, n = shape
    a, b = tensor((m, k), dtype), tensor((k, n), dtype)
    with no_tf32():
        bench.compare(
            "gemm",
            f"{m}x{k}x{n} {dtype_name(dtype)}",
            flops=2 * m * k * n,
            compile_eager=False,  # torch.compile of a @ b calls the same cuBLAS
            roof="eager",
            ours=lambda: gemm(a, b),
            eager=lambda: reference(a, b),
        )


def host_calls(numel: int) -> dict:
    a, b = tensor((numel, numel)), tensor((numel, numel))
    return {
        "ours": lambda: gemm(a, b),
        "raw": lambda: torch.ops.examples.gemm.default(a, b),
        "native": lambda: torch.mm(a, b),
    }
