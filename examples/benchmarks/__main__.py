"""python -m benchmarks [op ...] [--out DIR]: run benchmarks/bench_<op>.py on the GPU, write a report.

--sweep measures each op from small sizes to large ones (the module's SWEEP, L2 flushed between
timed runs) into DIR/<op>.json, one file per op, and rebuilds DIR/sweep.md and the charts from every
<op>.json there: a long sweep can run as several commands, each naming some of the ops.
--report-only rebuilds that report without measuring (no GPU needed).
--tune autotunes the Triton ops' kernels on their sweep's points and stores the configs (tune.py).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

import torch

from . import derived, report, sweep, sweep_report, tune
from .harness import Bench, flushed_ms, warm_up_gpu

HERE = Path(__file__).resolve().parent


def available() -> list[str]:
    """Ops with a benchmarks/bench_<op>.py, and declared ops (their benchmark is made from SPEC)."""
    return sorted({p.stem[len("bench_") :] for p in HERE.glob("bench_*.py")} | set(derived.declared_ops()))


def bench_module(op: str):
    """benchmarks/bench_<op>.py, or the benchmark made from a declared op's SPEC (derived.py)."""
    if (HERE / f"bench_{op}.py").is_file():
        return importlib.import_module(f"benchmarks.bench_{op}")
    return derived.module_for(op)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("ops", nargs="*", help=f"ops to run (default: all of {', '.join(available()) or '-'})")
    parser.add_argument("--out", type=Path, help="report folder (default: results/, with --sweep results/sweep/)")
    parser.add_argument("--reps", type=int, default=30, help="timed runs per measurement (median taken)")
    parser.add_argument("--sweep", action="store_true", help="sweep sizes, dtypes and layouts (see above)")
    parser.add_argument("--quick", action="store_true", help="with --sweep: each line's ends and key points only")
    parser.add_argument("--report-only", action="store_true", help="with --sweep: rebuild the report, measure nothing")
    parser.add_argument("--warmup-ms", type=float, default=5, help="with --sweep: warm-up time per measurement")
    parser.add_argument("--rep-ms", type=float, default=25, help="with --sweep: timed runs per measurement, in ms")
    parser.add_argument(
        "--rounds", type=int, default=3, help="with --sweep: turns the callables of a point take (rep-ms split)"
    )
    parser.add_argument(
        "--tune", action="store_true", help="store tuned configs of the Triton ops (default: all of them) for this GPU"
    )
    parser.add_argument(
        "--compile-dynamic",
        action="store_true",
        help="with --sweep: compile eager once per line, not at each point (faster; dynamic-shape code)",
    )
    args = parser.parse_args(argv)
    unknown = sorted(set(args.ops) - set(available()))
    if unknown:
        parser.error(f"no benchmark for {', '.join(unknown)}; have {', '.join(available())}")
    if args.sweep:
        out = args.out or HERE / "results" / "sweep"
        if args.report_only:
            return _print(sweep_report.write(out))
    if not torch.cuda.is_available():
        print("benchmarks time CUDA kernels: no CUDA device here", file=sys.stderr)
        return 2
    if args.tune:
        return _print(tune.tune(args.ops or tune.triton_ops(), bench_module))
    if args.sweep:
        return run_sweep(
            args.ops or available(), out, args.quick, args.warmup_ms, args.rep_ms, args.compile_dynamic, args.rounds
        )
    bench = Bench(reps=args.reps)
    paths: list[Path] = []
    out = args.out or HERE / "results"
    for op in args.ops or available():
        bench_module(op).run(bench)
        paths = report.write(bench, out)  # after every op, so an interrupted run keeps what it measured
    paths += report.update_cards(bench, HERE.parent / "docs" / "ops")
    return _print(paths)


def run_sweep(
    ops: list[str], out: Path, quick: bool, warmup_ms: float, rep_ms: float, compile_dynamic: bool, rounds: int = 3
) -> int:
    sweep.configure_compile()
    warm_up_gpu()
    copies: dict = {}  # a copy of n bytes is timed once for all ops
    started = time.perf_counter()
    for op in ops:
        module = bench_module(op)
        if not hasattr(module, "SWEEP"):
            print(f"{op:>20} | no SWEEP in benchmarks/bench_{op}.py: not swept", flush=True)
            continue
        bench = Bench(
            timer=lambda fn: flushed_ms(fn, warmup_ms, rep_ms / rounds),
            compile_per_point=not compile_dynamic,
            rounds=rounds,
            _copy_ms=copies,
        )
        chunk = sweep.run(op, module, quick=quick, warmup_ms=warmup_ms, rep_ms=rep_ms, bench=bench, out_dir=out)
        peak = torch.cuda.max_memory_allocated() / 2**30
        print(f"{op:>20} | swept {chunk['points']['measured']} points in {chunk['seconds']:.0f} s, peak {peak:.1f} GiB")
        print(f"wrote {out / f'{op}.json'}")
        sweep_report.write(out, charts=[op])  # after every op, so an interrupted run keeps what it measured
        torch.cuda.empty_cache()
    print(f"sweep of {len(ops)} op(s): {time.perf_counter() - started:.0f} s")
    return _print(sweep_report.write(out))


def _print(paths: list[Path]) -> int:
    for path in paths:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
