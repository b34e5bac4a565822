"""Per-call host time at tiny inputs (a benchmark, not a test): one element through a generated
project's gelu_approx and row_sumsq against torch.sigmoid, back-to-back calls timed with CUDA events.

    python scripts/call_overhead.py PACKAGE [PACKAGE ...]   # e.g. the stable and the aten build
"""
import importlib
import sys

import torch


def per_call_us(fn, *args, calls: int = 1000) -> float:
    for _ in range(50):
        fn(*args)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn(*args)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1000 / calls


def main() -> None:
    x = torch.randn(1, device="cuda")
    for name in sys.argv[1:]:
        package = importlib.import_module(name)
        print(f"{name}: gelu_approx(1 element) {per_call_us(package.gelu_approx, x):.1f} us; "
              f"row_sumsq(1x1) {per_call_us(package.row_sumsq, x[None]):.1f} us; "
              f"torch.sigmoid {per_call_us(torch.sigmoid, x):.1f} us")


if __name__ == "__main__":
    main()
