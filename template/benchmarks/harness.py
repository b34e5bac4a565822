"""Timing for benchmarks/bench_<op>.py.

Each measurement: warm-up runs (which also compile torch.compile variants), then CUDA events around
each of many runs, median taken. Rates count the fewest bytes an op must move (inputs read once,
outputs written once) or its useful floating-point operations; they are set against a measured
device-to-device copy (bytes read + written) or a measured cuBLAS matmul.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import torch


@dataclass
class Row:
    op: str
    case: str
    impl: str  # "ours", "eager", "compile", "seed", ...
    ms: float
    gbps: float | None = None
    tflops: float | None = None
    roofline: float | None = None  # fraction of the measured copy bandwidth / matmul rate
    speedup_vs_eager: float | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def time_ms(fn: Callable[[], object], warmup: int = 5, reps: int = 30, min_sample_ms: float = 1.0) -> float:
    """Median milliseconds of one fn() on the current stream.

    Each timed sample enqueues enough back-to-back calls to last about `min_sample_ms`, so a kernel
    shorter than the host's per-call overhead is timed by the GPU's work, not by launch gaps.
    """
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    calls = max(1, math.ceil(min_sample_ms / max(_one_sample_ms(fn, 1), 1e-3)))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for start, end in zip(starts, ends):
        start.record()
        for _ in range(calls):
            fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)) / calls


def _one_sample_ms(fn: Callable[[], object], calls: int) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / calls


def measure_copy_gbps(nbytes: int = 1 << 30) -> float:
    """Device-to-device copy bandwidth, counting bytes read plus bytes written."""
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda").random_()
    dst = torch.empty_like(src)
    return 2 * nbytes / time_ms(lambda: dst.copy_(src)) / 1e6


def measure_matmul_tflops(dtype: torch.dtype, n: int = 8192) -> float:
    """cuBLAS n x n x n matmul rate (TF32 off for float32)."""
    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    allow_tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        return 2 * n**3 / time_ms(lambda: a @ b, reps=10) / 1e9
    finally:
        torch.backends.cuda.matmul.allow_tf32 = allow_tf32


@dataclass
class Bench:
    """Collects rows; bench_<op>.py calls compare() for each case."""

    warmup: int = 5
    reps: int = 30
    rows: list[Row] = field(default_factory=list)
    _copy_gbps: float | None = None
    _matmul_tflops: dict = field(default_factory=dict)

    @property
    def copy_gbps(self) -> float:
        if self._copy_gbps is None:
            self._copy_gbps = measure_copy_gbps()
        return self._copy_gbps

    def matmul_tflops(self, dtype: torch.dtype) -> float:
        if dtype not in self._matmul_tflops:
            self._matmul_tflops[dtype] = measure_matmul_tflops(dtype)
        return self._matmul_tflops[dtype]

    def compare(
        self,
        op: str,
        case: str,
        *,
        ours: Callable,
        eager: Callable | None = None,
        bytes_moved: int | None = None,
        flops: float | None = None,
        flops_dtype: torch.dtype | None = None,
        compile_eager: bool = True,
        **others: Callable,
    ) -> list[Row]:
        """Time `ours` against eager PyTorch, torch.compile(eager) and any named `others`."""
        impls: dict[str, Callable] = {"ours": ours}
        if eager is not None:
            impls["eager"] = eager
            if compile_eager:
                impls["compile"] = torch.compile(eager)
        impls.update(others)
        times = {name: time_ms(fn, self.warmup, self.reps) for name, fn in impls.items()}
        rows = []
        for name, ms in times.items():
            row = Row(op, case, name, ms)
            if bytes_moved is not None:
                row.gbps = bytes_moved / ms / 1e6
                row.roofline = row.gbps / self.copy_gbps
            if flops is not None:
                row.tflops = flops / ms / 1e9
                if flops_dtype is not None:
                    row.roofline = row.tflops / self.matmul_tflops(flops_dtype)
            if "eager" in times:
                row.speedup_vs_eager = times["eager"] / ms
            rows.append(row)
        self.rows += rows
        summary = ", ".join(f"{r.impl} {r.ms:.3f} ms" for r in rows)
        print(f"{op:>20} | {case:<28} | {summary}", flush=True)
        return rows
