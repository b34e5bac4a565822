"""Per-call host time at tiny inputs: what a call costs before the GPU does any work.

A bench module's host_calls(numel) returns callables on inputs of numel elements (1, or 0 for empty
ones), none requiring grad:
    "ours"    the public Python function
    "raw"     the torch.ops overload, without the Python wrapper
    "native"  a torch op of the same kind (torch.add for a binary element-wise op, torch.sort, ...)
Each is timed as many back-to-back calls and one synchronize, the callables taking turns (median of
many rounds), at one element and empty, normally and under torch.inference_mode() (which skips the
autograd layer).
Differences of those medians say what the cost is made of (breakdown()).
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable

import torch

INPUTS = (("1 element", 1), ("empty", 0))
MODES = ("default", "inference_mode")


def interleaved_us(
    fns: dict[str, Callable[[], object]], calls: int = 200, repeats: int = 25, sync: Callable | None = None
) -> dict[str, float]:
    """Per-call host time of each callable in microseconds: `repeats` rounds, each timing `calls`
    back-to-back calls and one synchronize of every callable in turn (so a drift in clocks or caches
    touches them alike), median per callable; the garbage collector is off meanwhile."""
    sync = sync or torch.cuda.synchronize
    for fn in fns.values():
        for _ in range(20):
            fn()
    sync()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    collecting = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for name, fn in fns.items():
                start = time.perf_counter()
                for _ in range(calls):
                    fn()
                sync()
                samples[name].append((time.perf_counter() - start) / calls * 1e6)
    finally:
        if collecting:
            gc.enable()
    return {name: statistics.median(times) for name, times in samples.items()}


def measure(host_calls: Callable[[int], dict], timer: Callable[[dict], dict] = interleaved_us) -> list[dict]:
    """One row per callable, input and mode: {"impl", "input", "mode", "us"}; a callable that
    raises (an op refusing empty input, say) gets "error" instead of "us"."""
    rows = []
    for input_name, numel in INPUTS:
        calls = host_calls(numel)
        for mode in MODES:
            with torch.inference_mode(mode == "inference_mode"):
                working, errors = {}, {}
                for impl, fn in calls.items():
                    try:
                        fn()
                        working[impl] = fn
                    except Exception as error:
                        errors[impl] = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
                times = timer(working) if working else {}
            for impl in calls:
                row = {"impl": impl, "input": input_name, "mode": mode}
                row.update({"us": times[impl]} if impl in times else {"error": errors[impl]})
                rows.append(row)
    return rows


def lookup(rows: list[dict], impl: str, input_name: str = "1 element", mode: str = "default") -> float | None:
    for row in rows:
        if (row["impl"], row["input"], row["mode"]) == (impl, input_name, mode):
            return row.get("us")
    return None


def breakdown(rows: list[dict], impl: str = "raw") -> dict[str, float | None]:
    """What one call of `impl` at one element is made of, in microseconds (differences of medians;
    a small negative is noise): the autograd layer, the kernel launch, and the dispatcher + argument
    checks + output allocation (the call on an empty input under inference_mode, which launches nothing)."""

    def diff(a, b):
        return None if a is None or b is None else a - b

    one, one_inference = lookup(rows, impl), lookup(rows, impl, mode="inference_mode")
    empty_inference = lookup(rows, impl, "empty", "inference_mode")
    return {
        "autograd layer": diff(one, one_inference),
        "launch": diff(one_inference, empty_inference),
        "dispatch, checks, allocation": empty_inference,
    }
