"""fused_bias_gelu_triton: the points of bench_fused_bias_gelu (its CUDA C++ twin), so the sweep
report puts the two side by side: achieved bandwidth against eager PyTorch, torch.compile and the copy.
"""

import torch

from opgen_examples.ops.fused_bias_gelu_triton import fused_bias_gelu_triton, reference

from .bench_fused_bias_gelu import HOST_NATIVE, SIZE_LABEL, SWEEP, TARGETS  # noqa: F401 (the module's interface)
from .sweep import dtype_name, tensor


def run(bench) -> None:
    for rows, cols, dtype in [(65536, 4096, torch.float32), (65536, 4096, torch.bfloat16)]:
        measure(bench, rows * cols, dtype, cols)  # far larger than L2


def measure(bench, size: int, dtype: torch.dtype, cols: int, misaligned: bool = False) -> None:
    rows = size // cols
    x = tensor((rows, cols), dtype, misaligned)
    bias = tensor(cols, dtype)
    bench.compare(
        "fused_bias_gelu_triton",
        f"{rows}x{cols} {dtype_name(dtype)}{' misaligned' if misaligned else ''}",
        bytes_moved=2 * x.nbytes,
        ours=lambda: fused_bias_gelu_triton(x, bias),
        eager=lambda: reference(x, bias),
    )


def host_calls(numel: int) -> dict:
    x, bias = tensor(numel), tensor(numel)
    return {
        "ours": lambda: fused_bias_gelu_triton(x, bias),
        "raw": lambda: torch.ops.examples.fused_bias_gelu_triton.default(x, bias),
        "native": lambda: torch.add(x, bias),
    }
