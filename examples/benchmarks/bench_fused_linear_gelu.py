"""fused_linear_gelu: TFLOP/s against eager nn.Linear + GELU(tanh), torch.compile, the seed's kernel (float32)
and cuBLAS's matmul rate.

Shapes are rows x in_features x out_features. `python -m benchmarks fused_linear_gelu` times a GPT-2 /
BERT-base MLP up-projection at 32 and 8192 rows; `--sweep` times SWEEP (32 to 8192 rows in float32,
bfloat16 and float16, and odd shapes), each point against F.linear alone (the GEMM without the GELU)
as its roof, and checks TARGETS.
"""

import torch
import torch.nn.functional as F

from opgen_examples.ops.fused_linear_gelu import fused_linear_gelu, naive, reference

from .sweep import FLOATING_16_32, Point, dtype_name, tensor
from .targets import beats_eager_and_compile, host_within

SIZE_LABEL = "rows"
ROWS = (32, 128, 512, 2048, 8192)
ODD = ((33, 1000, 3001), (1000, 777, 2049), (4099, 768, 3072))
SWEEP = [
    *(
        Point(dtype_name(dtype), m, {"shape": (m, 768, 3072), "dtype": dtype}, key=m in (32, 8192))
        for dtype in FLOATING_16_32
        for m in ROWS
    ),
    *(Point("float32 odd shapes", m, {"shape": (m, k, n), "dtype": torch.float32}) for m, k, n in ODD),
]
HOST_NATIVE = "F.linear"
TARGETS = [
    beats_eager_and_compile(
        limit="in float32 at many rows eager and ours run the same cuBLAS SGEMM for most of the time "
        "(see the `linear` roof row), so the best is a tie"
    ),
    host_within(2.0, HOST_NATIVE),
]


def run(bench) -> None:
    for m, k, n in [(32, 768, 3072), (8192, 768, 3072)]:  # a GPT-2/BERT-base MLP up-projection
        for dtype in (torch.float32, torch.bfloat16):
            x = torch.randn(m, k, device="cuda", dtype=dtype)
            weight = torch.randn(n, k, device="cuda", dtype=dtype) / k**0.5
            bias = torch.randn(n, device="cuda", dtype=dtype)
            seed = {"seed": lambda: naive(x, weight, bias)} if dtype == torch.float32 else {}  # ~76 ms at 8192
            bench.compare(
                "fused_linear_gelu",
                f"{m}x{k}x{n} {str(dtype)[6:]}",
                flops=2 * m * n * k,
                flops_dtype=dtype,
                ours=lambda: fused_linear_gelu(x, weight, bias),
                eager=lambda: reference(x, weight, bias),
                **seed,
            )


def measure(bench, size: int, shape: tuple, dtype: torch.dtype) -> None:
    m, k, n = shape
    x = tensor((m, k), dtype)
    weight = tensor((n, k), dtype) / k**0.5
    bias = tensor(n, dtype)
    bench.compare(
        "fused_linear_gelu",
        f"{m}x{k}x{n} {dtype_name(dtype)}",
        flops=2 * m * n * k,
        roof="linear",
        ours=lambda: fused_linear_gelu(x, weight, bias),
        eager=lambda: reference(x, weight, bias),
        linear=lambda: F.linear(x, weight, bias),
    )


def host_calls(numel: int) -> dict:
    x, weight, bias = tensor((numel, 1)), tensor((1, 1)), tensor(1)
    return {
        "ours": lambda: fused_linear_gelu(x, weight, bias),
        "raw": lambda: torch.ops.examples.fused_linear_gelu.default(x, weight, bias),
        "native": lambda: F.linear(x, weight, bias),
    }
