"""vector_add: achieved bandwidth (a and b read, c written) against eager a + b, torch.compile
and the seed's one-thread-per-element kernel.

`python -m benchmarks vector_add` times 2^28 elements; `--sweep` times SWEEP (2^10 to 2^28 elements in
float32, bfloat16 and float16, misaligned views, odd sizes) and checks TARGETS.
"""

import torch

from opgen_examples.ops.vector_add import naive, reference, vector_add

from .limits import LAUNCH_BOUND
from .sweep import dtype_name, elementwise_points, size_name, tensor
from .targets import beats_eager_and_compile, host_within, near_copy_when_misaligned

SIZE_LABEL = "elements"
SWEEP = elementwise_points()
HOST_NATIVE = "torch.add"
TARGETS = [
    beats_eager_and_compile(limit=LAUNCH_BOUND),
    near_copy_when_misaligned("float32 misaligned"),
    host_within(1.5, HOST_NATIVE),
]


def run(bench) -> None:
    n = 1 << 28  # 3 GiB moved in float32: far larger than L2
    for dtype in (torch.float32, torch.bfloat16):
        a = torch.randn(n, device="cuda", dtype=dtype)
        b = torch.randn(n, device="cuda", dtype=dtype)
        seed = {"seed": lambda: naive(a, b)} if dtype == torch.float32 else {}
        bench.compare(
            "vector_add",
            f"n=2^28 {str(dtype)[6:]}",
            bytes_moved=3 * a.nbytes,
            ours=lambda: vector_add(a, b),
            eager=lambda: reference(a, b),
            **seed,
        )
    measure(bench, n, torch.float32, misaligned=True)  # the scalar path


def measure(bench, size: int, dtype: torch.dtype, misaligned: bool = False) -> None:
    a = tensor(size, dtype, misaligned)
    b = tensor(size, dtype, misaligned)
    case = f"n={size_name(size)} {dtype_name(dtype)}{' misaligned' if misaligned else ''}"
    bench.compare(
        "vector_add", case, bytes_moved=3 * a.nbytes, ours=lambda: vector_add(a, b), eager=lambda: reference(a, b)
    )


def host_calls(numel: int) -> dict:
    a, b = tensor(numel), tensor(numel)
    return {
        "ours": lambda: vector_add(a, b),
        "raw": lambda: torch.ops.examples.vector_add.default(a, b),
        "native": lambda: torch.add(a, b),
    }
