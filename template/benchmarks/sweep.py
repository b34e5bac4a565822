"""The sweep (`python -m benchmarks --sweep`): each op measured from small sizes to large ones.

A bench_<op>.py takes part by declaring

    SWEEP        a list of Point (or a function returning one): the chart's lines and sizes
    measure      measure(bench, size, **point.args): one bench.compare(...) for that point
    TARGETS      what the op promises (benchmarks/targets.py), checked against what was measured
    SIZE_LABEL   what `size` counts, for the chart's x axis ("elements", "row length", ...)
    host_calls   optional, host_calls(numel) -> {"ours", "raw", "native"}: benchmarks/host.py

run() measures one op into a dict that write_chunk() saves as <out>/<op>.json; load_chunks() reads
every such file back, so the sweep can run in several commands and the report covers them all.
"""

from __future__ import annotations

import datetime
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import torch

from . import clocks, host
from .harness import Bench, flushed_ms, flushed_timer

DEVICE = "cuda"  # where tensor() puts inputs ("meta" lets the tests walk a sweep without a GPU)
FLOATING_16_32 = (torch.float32, torch.bfloat16, torch.float16)
# Sizes just off the powers of two: the tails of vectorized loops and partial blocks.
ODD_SIZES = (999, 65_537, 1_000_003, 33_554_467)


@dataclass
class Point:
    """One point of an op's sweep: its chart line (`series`), its x coordinate (`size`), and what
    the module's measure() takes. `key` points are kept by --quick (a target reads them)."""

    series: str
    size: int
    args: dict = field(default_factory=dict)
    key: bool = False


def powers_of_two(lo: int, hi: int, step: int = 1) -> list[int]:
    """2^lo, 2^(lo+step), ... up to 2^hi, which is always included."""
    exponents = list(range(lo, hi + 1, step))
    if exponents[-1] != hi:
        exponents.append(hi)
    return [1 << e for e in exponents]


def line(series: str, sizes: Iterable[int], key: Iterable[int] = (), **args) -> list[Point]:
    """One chart line: a Point per size, all with the same args."""
    key = set(key)
    return [Point(series, int(size), dict(args), int(size) in key) for size in sizes]


def elementwise_points(
    dtypes: Sequence[torch.dtype] = FLOATING_16_32, lo: int = 10, hi: int = 28, step: int = 2
) -> list[Point]:
    """An element-wise op's sweep: 2^lo..2^hi elements (every 2^step) in each dtype, the first dtype
    also on misaligned views (one element past an aligned start) and at odd sizes. The largest
    size of each line is a key point. measure(bench, size, dtype, misaligned) takes them."""
    sizes = powers_of_two(lo, hi, step)
    first = dtype_name(dtypes[0])
    points = []
    for dtype in dtypes:
        points += line(dtype_name(dtype), sizes, key=[sizes[-1]], dtype=dtype, misaligned=False)
    points += line(f"{first} misaligned", sizes, key=[sizes[-1]], dtype=dtypes[0], misaligned=True)
    points += line(f"{first} odd sizes", [n for n in ODD_SIZES if n <= sizes[-1]], dtype=dtypes[0], misaligned=False)
    return points


def select(points: Sequence[Point], quick: bool) -> list[Point]:
    """All points, or for a quick run each line's smallest and largest size and the key points."""
    if not quick:
        return list(points)
    ends: dict[str, tuple[int, int]] = {}
    for p in points:
        lo, hi = ends.get(p.series, (p.size, p.size))
        ends[p.series] = (min(lo, p.size), max(hi, p.size))
    return [p for p in points if p.key or p.size in ends[p.series]]


def check_points(points: Sequence[Point]) -> None:
    """Raise ValueError unless the sweep is usable: Points, sizes >= 0, no point twice."""
    if not points:
        raise ValueError("the sweep has no points")
    seen = set()
    for p in points:
        if not isinstance(p, Point) or not p.series or not isinstance(p.size, int) or p.size < 0:
            raise ValueError(f"not a well-formed Point: {p!r}")
        where = (p.series, p.size, tuple(sorted((k, repr(v)) for k, v in p.args.items())))
        if where in seen:
            raise ValueError(f"point {p.series!r} at size {p.size} is in the sweep twice")
        seen.add(where)


def points_of(module: ModuleType) -> list[Point]:
    sweep = module.SWEEP
    points = list(sweep() if callable(sweep) else sweep)
    check_points(points)
    return points


# ---- inputs and labels, for the modules' measure() -------------------------------------------


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def size_name(n: int) -> str:
    """2^20 for a power of two, else the number."""
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def tensor(shape, dtype: torch.dtype = torch.float32, misaligned: bool = False, low: int = 0, high: int = 256):
    """Random values of shape and dtype on DEVICE; misaligned: a view starting one element into its
    storage, which defeats vector loads. Integer dtypes are drawn from [low, high)."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    numel = 1
    for n in shape:
        numel *= n
    count = numel + (1 if misaligned else 0)
    if dtype.is_floating_point:
        flat = torch.randn(count, device=DEVICE, dtype=dtype)
    else:
        flat = torch.randint(low, high, (count,), device=DEVICE, dtype=torch.int64).to(dtype)
    return flat[1:].view(shape) if misaligned else flat.view(shape)


# ---- running one op --------------------------------------------------------------------------


COMPILE_PER_POINT = "compiled afresh at each point (static shapes: the code a model called at that shape gets)"
COMPILE_PER_LINE = (
    "compiled once per line and reused across its sizes (past the second size: the dynamic-shape code, "
    "which can be slower than static code)"
)


def run_meta(warmup_ms: float, rep_ms: float, compile_per_point: bool = True, rounds: int = 1) -> dict:
    return {
        "compile": COMPILE_PER_POINT if compile_per_point else COMPILE_PER_LINE,
        "device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
        "torch": torch.__version__,
        "timer": flushed_timer(),
        "warmup_ms": warmup_ms,
        "rep_ms": rep_ms,
        "rounds": rounds,
        "l2_flushed": True,
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


def configure_compile() -> None:
    """torch.compile for the sweep: compile in this process (a pool of compile workers starting up
    beside the timed runs would slow their host side), and keep a function compiled once per line
    (--compile-dynamic) from falling back to eager after its default of 8 recompiles."""
    import torch._inductor.config as inductor

    inductor.compile_threads = 1
    config = torch._dynamo.config
    for name, value in (("recompile_limit", 256), ("cache_size_limit", 256), ("accumulated_recompile_limit", 4096)):
        if hasattr(config, name):
            setattr(config, name, max(getattr(config, name), value))


def run(
    op: str,
    module: ModuleType,
    *,
    quick: bool = False,
    warmup_ms: float = 5,
    rep_ms: float = 25,
    bench: Bench | None = None,
    meta: dict | None = None,
    host_timer=host.interleaved_us,
    out_dir: Path | None = None,
) -> dict:
    """Measure one op's sweep (and its host overhead) into a chunk: a dict for write_chunk().

    With out_dir, the chunk is written after every point ("complete": false until the end), so a
    run stopped by a time limit keeps what it measured.
    """
    all_points = points_of(module)
    points = select(all_points, quick)
    bench = bench or Bench(timer=lambda fn: flushed_ms(fn, warmup_ms, rep_ms))
    started = time.perf_counter()
    first_row = len(bench.rows)
    chunk = {
        "op": op,
        "meta": meta if meta is not None else run_meta(warmup_ms, rep_ms, bench.compile_per_point, bench.rounds),
        "size_label": getattr(module, "SIZE_LABEL", "size"),
        "quick": quick,
        "complete": False,
        "points": {"measured": 0, "selected": len(points), "declared": len(all_points)},
        "seconds": 0.0,
        "rows": [],
        "host": [],
        "host_native": getattr(module, "HOST_NATIVE", "native"),
        "targets": [t.as_dict() for t in getattr(module, "TARGETS", [])],
        "notes": [],
        "timeline": [],  # [series, size, seconds] per point measured: where the sweep's time goes
        "clocks": {"start": clocks.read(), "end": None},
    }

    def update() -> None:
        chunk.update(
            seconds=round(time.perf_counter() - started, 1),
            rows=[r.as_dict() for r in bench.rows[first_row:]],
            notes=list(bench.notes),
        )
        if out_dir is not None:
            write_chunk(chunk, out_dir)

    series = None
    for point in points:
        if point.series != series and not bench.compile_per_point:
            # Compiled once per line: its first size gets static shapes, its second dynamic ones
            # that the rest reuse; other lines' guards are not checked on every call.
            torch._dynamo.reset()
            series = point.series
        bench.point = point
        point_started = time.perf_counter()
        try:
            module.measure(bench, point.size, **point.args)
        except Exception as error:  # out of memory, say: the report lists it, the sweep goes on
            message = str(error).splitlines()[0] if str(error) else ""
            bench._note(f"{op} | {point.series} at {point.size}: {type(error).__name__}: {message}")
        finally:
            bench.point = None
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        chunk["points"]["measured"] += 1
        chunk["timeline"].append([point.series, point.size, round(time.perf_counter() - point_started, 2)])
        update()
    chunk["clocks"]["end"] = clocks.read()
    if hasattr(module, "host_calls"):
        chunk["host"] = host.measure(module.host_calls, host_timer)
    chunk["complete"] = True
    update()
    return chunk


def write_chunk(chunk: dict, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{chunk['op']}.json"
    scratch = path.with_name(path.name + ".partial")
    scratch.write_text(json.dumps(chunk, indent=1) + "\n")
    scratch.replace(path)  # a reader never sees half a file
    return path


def load_chunks(out_dir: Path) -> list[dict]:
    """Every op's chunk in out_dir (one JSON file each, from however many runs), by op name."""
    chunks = []
    for path in sorted(out_dir.glob("*.json")):
        data = json.loads(path.read_text())
        if isinstance(data, dict) and "op" in data and "rows" in data:
            chunks.append(data)
    return sorted(chunks, key=lambda c: c["op"])
