"""The GPU's SM clock while the sweep runs, read with nvidia-smi at each op's start and end. A kernel
near its instruction bound slows with the SM clock (held back for power or heat) where a copy of the
same bytes, memory-bound, does not: a report that shows the clock tells such a slowdown from a change
in the code."""

from __future__ import annotations

import shutil
import subprocess

import torch

FIELDS = ("clocks.sm", "clocks.max.sm", "temperature.gpu", "power.draw")


def parse(text: str) -> dict | None:
    """nvidia-smi's csv line (noheader, nounits) for FIELDS, or None where it is not one."""
    lines = text.strip().splitlines()
    values = [v.strip() for v in lines[0].split(",")] if len(lines) == 1 else []
    if len(values) != len(FIELDS):
        return None
    try:
        sm, most, temperature = (int(float(v)) for v in values[:3])
    except ValueError:  # "[N/A]", "[Not Supported]"
        return None
    try:
        power = float(values[3])
    except ValueError:
        power = None
    return {"sm_mhz": sm, "max_sm_mhz": most, "temperature_c": temperature, "power_w": power}


def read() -> dict | None:
    """The current GPU's clock now, or None: no GPU, no nvidia-smi, or no field it could read."""
    if not torch.cuda.is_available() or shutil.which("nvidia-smi") is None:
        return None
    uuid = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "uuid", None)
    query = [f"--query-gpu={','.join(FIELDS)}", "--format=csv,noheader,nounits"]
    for target in ([["-i", f"GPU-{uuid}"]] if uuid is not None else []) + [[]]:
        try:
            result = subprocess.run(["nvidia-smi", *target, *query], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        found = parse(result.stdout) if result.returncode == 0 else None
        if found is not None:  # without -i: only where one GPU answers (parse takes one line)
            return found
    return None


def describe(chunks: list[dict]) -> str | None:
    """The report's line on the SM clock at each op's start and end, or None where none was read."""
    read_ops = [(c["op"], c["clocks"]) for c in chunks if (c.get("clocks") or {}).get("start")]
    if not read_ops:
        return None
    most = sorted({clock["start"]["max_sm_mhz"] for _, clock in read_ops})
    parts = []
    for op, clock in read_ops:
        end = clock.get("end")
        span = f"{clock['start']['sm_mhz']}" + (f" to {end['sm_mhz']}" if end else "")
        heat = f"{clock['start']['temperature_c']}" + (f" to {end['temperature_c']}" if end else "")
        parts.append(f"{op} {span} MHz ({heat} C)")
    return (
        f"SM clock (nvidia-smi) at each op's start and end, its most {' or '.join(map(str, most))} MHz: "
        + ", ".join(parts)
        + ". A clock held below the most slows an op near its instruction bound, not the copy roof."
    )
