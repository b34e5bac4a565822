"""fused_relu_scale: achieved bandwidth (x read, y written once) against eager relu(x) * 1.5 (two
kernels, twice the traffic), torch.compile and the seed's kernel (float32), with the seed's alpha.

`python -m benchmarks fused_relu_scale` times 2^28 elements; `--sweep` times SWEEP (2^10 to 2^28
elements in float32, bfloat16 and float16, misaligned views, odd sizes) and checks TARGETS.
"""

import torch

from opgen_examples.ops.fused_relu_scale import fused_relu_scale, naive, reference

from .limits import LAUNCH_BOUND
from .sweep import dtype_name, elementwise_points, size_name, tensor
from .targets import beats_eager_and_compile, host_within, near_copy_when_misaligned

ALPHA = 1.5  # the seed's
SIZE_LABEL = "elements"
SWEEP = elementwise_points()
HOST_NATIVE = "torch.mul"
TARGETS = [
    beats_eager_and_compile(limit=LAUNCH_BOUND),
    near_copy_when_misaligned("float32 misaligned"),
    host_within(1.5, HOST_NATIVE),
]


def run(bench) -> None:
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.randn(1 << 28, device="cuda", dtype=dtype)  # 2 GiB moved in float32: far larger than L2
        seed = {"seed": lambda: naive(x, ALPHA)} if dtype == torch.float32 else {}
        bench.compare(
            "fused_relu_scale",
            f"n=2^28 {str(dtype)[6:]}",
            bytes_moved=2 * x.nbytes,
            ours=lambda: fused_relu_scale(x, ALPHA),
            eager=lambda: reference(x, ALPHA),
            **seed,
        )


def measure(bench, size: int, dtype: torch.dtype, misaligned: bool = False) -> None:
    x = tensor(size, dtype, misaligned)
    case = f"n={size_name(size)} {dtype_name(dtype)}{' misaligned' if misaligned else ''}"
    bench.compare(
        "fused_relu_scale",
        case,
        bytes_moved=2 * x.nbytes,
        ours=lambda: fused_relu_scale(x, ALPHA),
        eager=lambda: reference(x, ALPHA),
    )


def host_calls(numel: int) -> dict:
    x = tensor(numel)
    return {
        "ours": lambda: fused_relu_scale(x, ALPHA),
        "raw": lambda: torch.ops.examples.fused_relu_scale.default(x, ALPHA),
        "native": lambda: torch.mul(x, ALPHA),
    }
