"""The sweep's report, rebuilt from every op's JSON chunk in a folder: sweep.md (targets met or
missed, the worst point of each op, host overhead, each op's points) and one chart per op
(<op>.png: achieved rate against size, ours, eager, torch.compile and the roof).

    python -m benchmarks.sweep_report DIR    # re-render from DIR/*.json, no GPU needed
"""

from __future__ import annotations

import math
from pathlib import Path

from . import clocks, host
from .sweep import load_chunks
from .targets import BASELINES, best_baseline_ms, by_case, evaluate_all


def _rate(row: dict) -> float | None:
    return row["gbps"] if row.get("gbps") is not None else row.get("tflops")


def _unit(rows: list[dict]) -> str:
    return "GB/s" if any(r.get("gbps") is not None for r in rows) else "TFLOP/s"


def _impls(rows: list[dict]) -> list[str]:
    """ours, eager, compile, the others as measured, the roofs last."""
    roofs = {r["roof"] for r in rows if r.get("roof")}
    names = list(dict.fromkeys(r["impl"] for r in rows))
    first = [n for n in ("ours", *BASELINES) if n in names and n not in roofs]
    return first + [n for n in names if n not in first and n not in roofs] + [n for n in names if n in roofs]


def worst_points(chunk: dict) -> dict:
    """The op's lowest ours / best of eager and compile, and lowest fraction of the roof, and where."""
    worst = {"op": chunk["op"], "vs_best": None, "vs_best_case": None, "roof": None, "roof_case": None}
    for case, impls in by_case(chunk["rows"]).items():
        ours = impls.get("ours")
        if ours is None:
            continue
        best = best_baseline_ms(impls)
        if best is not None and (worst["vs_best"] is None or best / ours["ms"] < worst["vs_best"]):
            worst.update(vs_best=best / ours["ms"], vs_best_case=case)
        roof = ours.get("roofline")
        if roof is not None and (worst["roof"] is None or roof < worst["roof"]):
            worst.update(roof=roof, roof_case=case)
    return worst


def _x(value: float | None, spec: str = ".2f", suffix: str = "x") -> str:
    return "-" if value is None else f"{value:{spec}}{suffix}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _requirement(target: dict, native: str | None) -> str:
    metric, at_least = target["metric"], target["at_least"]
    if metric == "vs_best":
        return f">= {at_least:g}x best of eager, compile"
    if metric == "roof":
        return f">= {100 * at_least:g}% of roof"
    if metric == "host":
        return f"<= {1 / at_least:g}x {native or 'native'}"
    return f">= {at_least:g}x {metric[3:]}"


def _measured(result: dict) -> str:
    value, metric = result["value"], result["target"]["metric"]
    if value is None:
        return "-"
    if metric == "roof":
        shown = _pct(value)
    elif metric == "host":
        shown = f"{1 / value:.2f}x"  # ours / native: the way the target is stated
    else:
        shown = f"{value:.2f}x"
    return f"{shown} ({result['case']})" + (f", {result['points']} points" if result["points"] > 1 else "")


def _rounds_text(metas: dict, chunks: list[dict]) -> str:
    rounds = sorted({m.get("rounds", 1) for m in metas.values()})
    if rounds == [1]:
        text = "Each callable timed once per point: no timing noise, so no target is within noise."
    else:
        text = (
            f"The callables of a point take turns, {' or '.join(map(str, rounds))} rounds, and each keeps its fastest "
            "round. Its timing noise comes from the rounds it keeps: with three or more the slowest is left out (the "
            "host may have disturbed it), and the noise is the slowest of the rest over the fastest, minus 1."
        )
    if any(row.get("rounds_ms") is None for chunk in chunks for row in chunk["rows"]):
        text += (
            " Rows without per-round times (written before rows kept them) have unknown timing noise, counted as "
            "0: no tie allowance at their points, so there met means at or over the target and missed under it."
        )
    return text


STATUS_LEGEND = (
    "Each point a target selects is judged with its timing noise n (the larger of the two rows compared there): "
    "**met** if it clears the target by the noise (value >= target x (1 + n)), **missed** if it falls short by "
    "more than the noise (value x (1 + n) < target), a **tie within timing noise** in between. A target is "
    "missed if any point is, within noise if any point is a tie, else met; the value shown is the lowest among "
    "the points of that status. **incomplete**: a row it compares against (eager, torch.compile, the roof, the "
    "named callable) was not timed at some points, and no timed point misses; **not measured**: no point "
    "selected. Host-time targets have no noise: met or missed."
)


def _at_points(count: int, total: int) -> str:
    return f"at {count} of {total} point{'s' if total > 1 else ''}"


def _missing_text(result: dict) -> str:
    """Which compared rows were not timed at how many of the points, and why where a note says."""
    parts = []
    for name, count in result["missing"].items():
        why = result["missing_why"].get(name, [])
        reasons = "; ".join(f"{why.count(r)} failed: {r}" for r in dict.fromkeys(why))
        parts.append(f"{name} not timed {_at_points(count, result['points'])}" + (f" ({reasons})" if reasons else ""))
    return ", ".join(parts)


def _noise_text(result: dict) -> str:
    unknown, points = result["noise_unknown"], result["points"]
    if not unknown:
        return ""
    where = "" if unknown == points else f" {_at_points(unknown, points)}"
    return f" (timing noise unknown{where}: no tie allowance)"


def _status_text(result: dict) -> str:
    status, target = result["status"], result["target"]
    if status == "missed":
        text = "**missed**" + (f": {target['limit']}" if target.get("limit") else "")
        text += f"; {_missing_text(result)}" if result["missing"] else ""
    elif status == "within noise":
        text = f"tie within timing noise ({_pct(result['noise'])} there)"
    elif status == "incomplete":
        timed = result["timed_status"]
        text = f"**incomplete**: {_missing_text(result)}" + (f"; {timed} where timed" if timed else "")
    else:
        text = status
    return text + _noise_text(result)


def targets_table(results: list[dict], chunks: list[dict]) -> list[str]:
    native = {c["op"]: c.get("host_native") for c in chunks}
    lines = ["| op | target | required | measured (worst point) | status |", "|---|---|---|---|---|"]
    for r in results:
        lines.append(
            f"| {r['op']} | {r['target']['name']} | {_requirement(r['target'], native[r['op']])} "
            f"| {_measured(r)} | {_status_text(r)} |"
        )
    return lines


def host_table(chunks: list[dict]) -> list[str]:
    lines = [
        "| op | ours us | raw torch.ops us | native | native us | ours / native | Python wrapper "
        "| autograd layer | launch | dispatch, checks, allocation |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for chunk in chunks:
        rows = chunk.get("host") or []
        if not rows:
            continue
        ours, raw, native = (host.lookup(rows, impl) for impl in ("ours", "raw", "native"))
        parts = host.breakdown(rows, "raw")
        wrapper = None if ours is None or raw is None else ours - raw
        ratio = None if not ours or not native else ours / native
        cells = [_x(v, ".1f", "") for v in (ours, raw)] + [chunk.get("host_native", "-"), _x(native, ".1f", "")]
        cells += [_x(ratio), _x(wrapper, ".1f", "")] + [_x(v, ".1f", "") for v in parts.values()]
        lines.append(f"| {chunk['op']} | " + " | ".join(cells) + " |")
    return lines


def op_table(chunk: dict) -> list[str]:
    rows = chunk["rows"]
    impls = _impls(rows)
    unit = _unit(rows)
    head = "| series | case | " + " | ".join(f"{i} ms" for i in impls) + f" | ours {unit} | % of roof | ours / best |"
    lines = [head, "|---|---|" + "---:|" * (len(impls) + 3)]
    for case, by_impl in by_case(rows).items():
        ours = by_impl.get("ours")
        if ours is None:
            continue
        best = best_baseline_ms(by_impl)
        cells = [_x(by_impl[i]["ms"], ".4f", "") if i in by_impl else "-" for i in impls]
        rate = _rate(ours)
        lines.append(
            f"| {ours.get('series') or '-'} | {case} | "
            + " | ".join(cells)
            + f" | {_x(rate, '.1f', '')} | {_pct(ours.get('roofline'))} "
            + f"| {_x(None if best is None else best / ours['ms'])} |"
        )
    return lines


def markdown(chunks: list[dict], charts: dict[str, str]) -> str:
    metas = {c["op"]: c["meta"] for c in chunks}
    devices = sorted({m["device"] for m in metas.values()})
    timers = sorted(
        {f"{m['timer']} (warm-up {m['warmup_ms']:g} ms, {m['rep_ms']:g} ms of timed runs)" for m in metas.values()}
    )
    seconds = sum(c.get("seconds", 0) for c in chunks)
    quick = [c["op"] for c in chunks if c.get("quick")]
    interrupted = [
        f"{c['op']} ({c['points']['measured']} of {c['points']['selected']} points)"
        for c in chunks
        if not c.get("complete", True)
    ]
    compiled = "; ".join(sorted({m.get("compile", "how it was compiled is not recorded") for m in metas.values()}))
    dates = [m.get("date", "-") for m in metas.values()]
    per_op = ", ".join(f"{c['op']} {c.get('seconds', 0):.0f} s" for c in chunks)
    lines = [
        f"# Sweep on {', '.join(devices)}",
        "",
        f"torch {', '.join(sorted({m['torch'] for m in metas.values()}))}. Timer: {'; '.join(timers)}: the median of "
        "runs timed one by one with CUDA events, **L2 flushed before every timed run** (a 256 MB buffer zeroed), "
        "so small inputs are read from memory as in a real model, not from L2. " + _rounds_text(metas, chunks),
        "",
        "Roofs, timed the same way at each point: for memory-bound ops a device-to-device copy of the same bytes "
        "(read + written), otherwise the row the op names (cuBLAS at the same shape, a dense-GEMM bound). "
        f"`compile` is torch.compile(eager), default mode, {compiled}. A call whose host side outlasts the "
        "flush before it (about 0.1 ms) is timed with that host time: torch.compile's at small sizes, for one.",
        "",
        f"{len(chunks)} ops, {sum(c['points']['measured'] for c in chunks)} points, {seconds:.0f} s of sweep "
        f"({per_op}). Measured {' to '.join(dict.fromkeys([min(dates), max(dates)]))}.",
    ]
    clock = clocks.describe(chunks)
    if clock:
        lines += ["", clock]
    if quick:
        lines += ["", f"Quick run (each line's ends and key points only) for: {', '.join(quick)}."]
    if interrupted:
        lines += ["", f"**Interrupted** before the end (no host overhead measured): {', '.join(interrupted)}."]
    results = evaluate_all(chunks)
    lines += ["", "## Targets", "", STATUS_LEGEND, "", *targets_table(results, chunks)] if results else []
    lines += [
        "",
        "## Worst point per op",
        "",
        "| op | lowest ours / best of eager, compile | at | lowest % of roof | at |",
        "|---|---:|---|---:|---|",
    ]
    for chunk in chunks:
        w = worst_points(chunk)
        lines.append(
            f"| {w['op']} | {_x(w['vs_best'])} | {w['vs_best_case'] or '-'} | {_pct(w['roof'])} "
            f"| {w['roof_case'] or '-'} |"
        )
    host_lines = host_table(chunks)
    if len(host_lines) > 2:
        lines += [
            "",
            "## Host overhead per call (one element, no input requiring grad)",
            "",
            "Microseconds per call: many back-to-back calls and one synchronize. `raw` is the "
            "torch.ops overload without the Python wrapper. What `raw` is made of: the autograd layer (default "
            "against inference_mode), the launch (one element against an empty input, both under "
            "inference_mode: the kernel launch and whatever else only a non-empty input costs) and the rest "
            "(the empty call: dispatcher, argument checks, output allocation). The callables take turns, many "
            "rounds, median per callable. "
            "Differences of medians; a small negative is noise.",
            "",
            *host_lines,
        ]
    for chunk in chunks:
        lines += ["", f"## {chunk['op']}", ""]
        if chunk["op"] in charts:
            lines += [f"![{chunk['op']}]({charts[chunk['op']]})", ""]
        lines += [
            f"x axis: {chunk.get('size_label', 'size')}; {chunk['points']['measured']} of "
            f"{chunk['points']['declared']} points; {chunk.get('seconds', 0):.0f} s.",
            "",
        ]
        lines += op_table(chunk)
        if chunk.get("notes"):
            lines += ["", *(f"- {note}" for note in chunk["notes"])]
    return "\n".join(lines) + "\n"


def chart(chunk: dict, path: Path) -> bool:
    """One panel per series: achieved rate against size (both log scales), a line per impl, the roof
    dashed. False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = [r for r in chunk["rows"] if r.get("series") is not None and _rate(r)]
    series = list(dict.fromkeys(r["series"] for r in rows))
    if not series:
        return False
    impls = _impls(rows)
    roofs = {r["roof"] for r in rows if r.get("roof")}
    columns = min(3, len(series))
    lines = math.ceil(len(series) / columns)
    fig, axes = plt.subplots(lines, columns, figsize=(5.2 * columns, 3.8 * lines), squeeze=False)
    for ax, name in zip(axes.flat, series):
        for k, impl in enumerate(impls):
            points = sorted((r["size"], _rate(r)) for r in rows if r["series"] == name and r["impl"] == impl)
            if not points:
                continue
            xs, ys = zip(*points)
            if impl in roofs:
                ax.plot(xs, ys, "k--", linewidth=1.2, label=f"{impl} (roof)")
            else:
                ax.plot(
                    xs,
                    ys,
                    marker="o",
                    markersize=3,
                    linewidth=2.2 if impl == "ours" else 1.2,
                    color=f"C{k}",
                    label=impl,
                    zorder=3 if impl == "ours" else 2,  # on top where the lines meet
                )
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel(chunk.get("size_label", "size"), fontsize=8)
        ax.set_ylabel(_unit(rows), fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, which="major", linewidth=0.4, alpha=0.5)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(series) :]:
        ax.set_visible(False)
    fig.suptitle(f"{chunk['op']} on {chunk['meta']['device']}: achieved rate, L2 flushed before each run", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def write(out_dir: Path, charts: list[str] | None = None) -> list[Path]:
    """Rebuild sweep.md from every chunk in out_dir, and the charts of `charts` (default: every op's;
    the others' PNG files are kept as they are)."""
    chunks = load_chunks(out_dir)
    if not chunks:
        raise FileNotFoundError(f"no sweep results (<op>.json) in {out_dir}")
    written, linked = [], {}
    for chunk in chunks:
        path = out_dir / f"{chunk['op']}.png"
        if (charts is None or chunk["op"] in charts) and chart(chunk, path):
            written.append(path)
        if path.is_file():
            linked[chunk["op"]] = path.name
    report = out_dir / "sweep.md"
    report.write_text(markdown(chunks, linked))
    return [report, *written]


if __name__ == "__main__":
    import sys

    for written in write(Path(sys.argv[1])):
        print(f"wrote {written}")
