"""Timing for benchmarks/bench_<op>.py.

Two timers. `time_ms` serves the one-shape report (`python -m benchmarks`): warm-up runs (which also
compile torch.compile variants), then CUDA events around each of many runs, median taken; its inputs
are larger than L2. `flushed_ms` serves the sweep (`python -m benchmarks --sweep`), whose small inputs
would otherwise sit in L2 between runs: triton.testing.do_bench (it zeroes a 256 MB buffer before
every timed run), or the same done here where triton is missing.

Rates count the fewest bytes an op must move (inputs read once, outputs written once) or its useful
floating-point operations; they are set against a measured device-to-device copy (bytes read +
written) or a measured cuBLAS matmul, or, in the sweep, against a roof timed at the same point.

Rounds and timing noise (the sweep's `--rounds`): the callables of a point take turns, each timed
once a round, and each keeps its fastest round. A row keeps every round (`rounds_ms`), and its noise
is `round_noise(rounds_ms)`: how far the rounds it keeps as undisturbed sit above the fastest. With
three or more rounds the slowest is left out, as it may be one the host disturbed (a compile
finishing, another process); with two, neither can be told disturbed, so both count. The noise is
then the slowest remaining round over the fastest, minus 1 (with three rounds: the median round's).
One round tells no noise. benchmarks/targets.py calls a target within noise by it.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

FLUSH_BYTES = 256 << 20  # what do_bench zeroes between runs: several times the 50 MB L2 of an H100


def round_noise(rounds_ms: list[float] | None) -> float | None:
    """The timing noise of one callable at one point, from its rounds (the rule: this module's
    docstring); None where fewer than two rounds were kept."""
    if not rounds_ms or len(rounds_ms) < 2:
        return None
    ordered = sorted(rounds_ms)
    undisturbed = ordered[:-1] if len(ordered) >= 3 else ordered
    return undisturbed[-1] / undisturbed[0] - 1


@dataclass
class Row:
    op: str
    case: str
    impl: str  # "ours", "eager", "compile", "seed", "copy", ...
    ms: float
    gbps: float | None = None
    tflops: float | None = None
    roofline: float | None = None  # fraction of the roof's rate (the copy / matmul, or the `roof` impl)
    speedup_vs_eager: float | None = None
    series: str | None = None  # sweep: the line of the op's chart the point is on, e.g. "float32 misaligned"
    size: float | None = None  # sweep: where on it (elements, row length, M*N*K, tokens)
    roof: str | None = None  # sweep: the impl whose rate is this point's roof
    rounds_ms: list[float] | None = None  # each round's ms, in the order timed; `ms` is the fastest

    def as_dict(self) -> dict:
        return asdict(self)


def time_ms(fn: Callable[[], object], warmup: int = 5, reps: int = 30, min_sample_ms: float = 1.0) -> float:
    """Median milliseconds of one fn() on the current stream (L2 not flushed).

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


def flushed_timer() -> str:
    """The name of the timer flushed_ms uses here."""
    try:
        import triton.testing  # noqa: F401
    except ImportError:
        return "CUDA events (own loop: triton is not installed)"
    return "triton.testing.do_bench"


def flushed_ms(fn: Callable[[], object], warmup_ms: float = 5, rep_ms: float = 25) -> float:
    """Median milliseconds of one fn(), with L2 flushed before each timed run.

    Runs for about warmup_ms + rep_ms (at least one run of each); each run is timed alone with CUDA
    events, so what it costs includes its launch only where that outlasts the flush before it.
    """
    try:
        from triton.testing import do_bench
    except ImportError:
        return _flushed_ms_events(fn, warmup_ms, rep_ms)
    try:
        return float(do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median"))
    except TypeError:  # a triton from before return_mode
        return float(do_bench(fn, warmup=warmup_ms, rep=rep_ms, quantiles=[0.5]))


_flush_buffer: dict[str, torch.Tensor] = {}


def _flushed_ms_events(fn: Callable[[], object], warmup_ms: float, rep_ms: float) -> float:
    """What do_bench does: estimate fn's time, warm up, then zero a 256 MB buffer before each timed run."""
    device = torch.cuda.current_device()
    flush = _flush_buffer.setdefault(str(device), torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda"))
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        flush.zero_()
        fn()
    end.record()
    torch.cuda.synchronize()
    estimate_ms = max(start.elapsed_time(end) / 5, 1e-4)
    for _ in range(max(1, int(warmup_ms / estimate_ms))):
        fn()
    reps = max(1, int(rep_ms / estimate_ms))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for start, end in zip(starts, ends):
        flush.zero_()
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def warm_up_gpu(seconds: float = 0.5) -> None:
    """Keep the GPU busy for a while, so that the first timings do not catch it at idle clocks."""
    a = torch.randn(4096, 4096, device="cuda")
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(10):
            a @ a
        torch.cuda.synchronize()


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
    """Collects rows; bench_<op>.py calls compare() for each case.

    `timer` times one callable (default: time_ms with `warmup` and `reps`); the sweep passes
    flushed_ms and sets `point` while it measures one of its points, which stamps the rows.
    With `rounds` > 1 the callables of a point take turns, each timed once a round, and each keeps
    its fastest round; its row keeps all of them, for its timing noise (round_noise).
    """

    warmup: int = 5
    reps: int = 30
    rows: list[Row] = field(default_factory=list)
    timer: Callable[[Callable[[], object]], float] | None = None
    device: str = "cuda"
    point: Any = None  # the sweep's Point being measured (benchmarks/sweep.py)
    compile_per_point: bool = True  # sweep: compile eager afresh at each point, else once per line
    notes: list[str] = field(default_factory=list)  # what failed to run, and why
    rounds: int = 1
    _copy_gbps: float | None = None
    _matmul_tflops: dict = field(default_factory=dict)
    _copy_ms: dict = field(default_factory=dict)  # bytes copied -> each round's ms, the sweep's copy roof

    @property
    def copy_gbps(self) -> float:
        if self._copy_gbps is None:
            self._copy_gbps = measure_copy_gbps()
        return self._copy_gbps

    def matmul_tflops(self, dtype: torch.dtype) -> float:
        if dtype not in self._matmul_tflops:
            self._matmul_tflops[dtype] = measure_matmul_tflops(dtype)
        return self._matmul_tflops[dtype]

    def time(self, fn: Callable[[], object]) -> float:
        return self.timer(fn) if self.timer is not None else time_ms(fn, self.warmup, self.reps)

    def copy_rounds_ms(self, nbytes: int) -> list[float]:
        """One device-to-device copy of nbytes, timed `rounds` times once per size (it is the same
        for every op)."""
        nbytes = max(1, int(nbytes))
        if nbytes not in self._copy_ms:
            src = torch.empty(nbytes, dtype=torch.uint8, device=self.device)
            dst = torch.empty_like(src)
            self._copy_ms[nbytes] = [self.time(lambda: dst.copy_(src)) for _ in range(self.rounds)]
        return self._copy_ms[nbytes]

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
        roof: str | None = None,
        **others: Callable,
    ) -> list[Row]:
        """Time `ours` against eager PyTorch, torch.compile(eager) and any named `others`.

        `roof` names one of the others (cuBLAS at the same shape, say) whose rate each row's
        `roofline` is taken against. In the sweep, a point with `bytes_moved` and no roof gets a
        `copy` row: a device-to-device copy of the same bytes read + written, timed the same way.
        """
        impls: dict[str, Callable] = {"ours": ours}
        if eager is not None:
            impls["eager"] = eager
            if compile_eager and self.point is not None and self.compile_per_point:
                # A fresh compile for this shape alone (static shapes): the code a model called at
                # this shape gets. Dynamo keeps compiled code per code object, so without the reset
                # the same lambda at the next point would reuse it.
                torch._dynamo.reset()
                impls["compile"] = torch.compile(eager, dynamic=False)
            elif compile_eager:
                impls["compile"] = torch.compile(eager)
        impls.update(others)
        if roof is not None and roof not in impls:
            raise ValueError(f"roof={roof!r} names no timed callable; have {', '.join(impls)}")
        sweeping = self.point is not None
        if roof is None and sweeping and bytes_moved is not None:
            roof = "copy"
        rounds: dict[str, list[float]] = {name: [] for name in impls}
        for _ in range(self.rounds):
            for name, fn in impls.items():
                if name not in rounds:
                    continue  # failed in an earlier round
                try:
                    rounds[name].append(self.time(fn))
                except Exception as error:  # one failing variant (a compile, say) leaves the point's other rows
                    if not sweeping or name == "ours":
                        raise
                    del rounds[name]
                    self._note(f"{op} | {case}: {name} failed: {type(error).__name__}: {str(error).splitlines()[0]}")
        if roof == "copy" and "copy" not in rounds:
            rounds["copy"] = self.copy_rounds_ms(bytes_moved // 2)
        times = {name: min(ms) for name, ms in rounds.items()}
        rows = []
        for name, ms in times.items():
            row = Row(op, case, name, ms)
            if bytes_moved is not None:
                row.gbps = bytes_moved / ms / 1e6
                if not sweeping:
                    row.roofline = row.gbps / self.copy_gbps
            if flops is not None:
                row.tflops = flops / ms / 1e9
                if flops_dtype is not None and roof is None:
                    row.roofline = row.tflops / self.matmul_tflops(flops_dtype)
            if roof in times:
                row.roofline = times[roof] / ms  # the same work: the ratio of rates is that of times
                row.roof = roof
            if "eager" in times:
                row.speedup_vs_eager = times["eager"] / ms
            if sweeping:
                row.series, row.size = self.point.series, self.point.size
            row.rounds_ms = list(rounds[name])
            rows.append(row)
        self.rows += rows
        summary = ", ".join(f"{r.impl} {r.ms:.4f} ms" for r in rows)
        print(f"{op:>20} | {case:<36} | {summary}", flush=True)
        return rows

    def _note(self, text: str) -> None:
        self.notes.append(text)
        print(f"{'':>20} | {text}", flush=True)
