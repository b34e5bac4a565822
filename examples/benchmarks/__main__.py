"""python -m benchmarks [op ...] [--out DIR]: run benchmarks/bench_<op>.py on the GPU, write a report."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import torch

from . import report
from .harness import Bench

HERE = Path(__file__).resolve().parent


def available() -> list[str]:
    return sorted(p.stem[len("bench_") :] for p in HERE.glob("bench_*.py"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("ops", nargs="*", help=f"ops to run (default: all of {', '.join(available()) or '-'})")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="report folder")
    parser.add_argument("--reps", type=int, default=30, help="timed runs per measurement (median taken)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.ops) - set(available()))
    if unknown:
        parser.error(f"no benchmark for {', '.join(unknown)}; have {', '.join(available())}")
    if not torch.cuda.is_available():
        print("benchmarks time CUDA kernels: no CUDA device here", file=sys.stderr)
        return 2
    bench = Bench(reps=args.reps)
    paths: list[Path] = []
    for op in args.ops or available():
        importlib.import_module(f"benchmarks.bench_{op}").run(bench)
        paths = report.write(bench, args.out)  # after every op, so an interrupted run keeps what it measured
    paths += report.update_cards(bench, HERE.parent / "docs" / "ops")
    for path in paths:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
