"""vector_add: achieved bandwidth (a and b read, c written) against eager a + b, torch.compile
and the seed's one-thread-per-element kernel."""
import torch

from opgen_examples.ops.vector_add import naive, reference, vector_add


def run(bench) -> None:
    n = 1 << 28  # 3 GiB moved in float32: far larger than L2
    for dtype in (torch.float32, torch.bfloat16):
        a = torch.randn(n, device="cuda", dtype=dtype)
        b = torch.randn(n, device="cuda", dtype=dtype)
        seed = {"seed": lambda: naive(a, b)} if dtype == torch.float32 else {}
        bench.compare("vector_add", f"n=2^28 {str(dtype)[6:]}", bytes_moved=3 * a.nbytes,
                      ours=lambda: vector_add(a, b), eager=lambda: reference(a, b), **seed)
    a = torch.randn(n + 1, device="cuda")[1:]  # misaligned views: the scalar path
    b = torch.randn(n + 1, device="cuda")[1:]
    bench.compare("vector_add", "n=2^28 float32 misaligned", bytes_moved=3 * a.nbytes,
                  ours=lambda: vector_add(a, b), eager=lambda: reference(a, b))
