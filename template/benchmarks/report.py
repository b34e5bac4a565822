"""Writes benchmark rows as Markdown, JSON and a PNG chart."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from .harness import Bench, Row

ONE_SHAPE_TIMER = (
    "CUDA events around back-to-back calls (at least 1 ms a sample), median of the samples after warm-up; "
    "L2 is not flushed, so the inputs are larger than L2 (`python -m benchmarks --sweep` flushes it)"
)


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def markdown(bench: Bench, meta: dict) -> str:
    lines = [
        f"# Benchmarks on {meta['device']}",
        "",
        f"torch {meta['torch']}; measured device-to-device copy: {meta['copy_gbps']:.0f} GB/s "
        "(bytes read + written). `roofline` is the achieved rate over that copy bandwidth "
        "(memory-bound ops) or over the measured cuBLAS rate (matmuls). "
        f"Timer: {meta.get('timer', ONE_SHAPE_TIMER)}.",
        *(["", meta["note"]] if meta.get("note") else []),
        "",
        "| op | case | impl | ms | GB/s | TFLOP/s | roofline | speedup vs eager |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in bench.rows:
        lines.append(
            f"| {r.op} | {r.case} | {r.impl} | {r.ms:.4f} | {_fmt(r.gbps, '.0f')} | {_fmt(r.tflops, '.1f')} "
            f"| {_fmt(r.roofline and 100 * r.roofline, '.1f')}{'%' if r.roofline else ''} "
            f"| {_fmt(r.speedup_vs_eager, '.2f')} |"
        )
    return "\n".join(lines) + "\n"


def chart(bench: Bench, path: Path) -> bool:
    """Horizontal bars: % of the roofline per case, one bar per implementation; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = [r for r in bench.rows if r.roofline is not None]
    cases = list(dict.fromkeys((r.op, r.case) for r in rows))
    impls = list(dict.fromkeys(r.impl for r in rows))
    height = 0.8 / max(1, len(impls))
    fig, ax = plt.subplots(figsize=(10, max(3.0, 0.22 * len(cases) * len(impls) + 1)))
    for k, impl in enumerate(impls):
        values = {(r.op, r.case): 100 * r.roofline for r in rows if r.impl == impl}
        ys = [i + k * height for i in range(len(cases))]
        ax.barh(ys, [values.get(c, 0) for c in cases], height, label=impl)
    ax.axvline(100, color="black", linewidth=0.8)
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(cases))])
    ax.set_yticklabels([f"{op}: {case}" for op, case in cases], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("% of measured copy bandwidth (memory-bound) or cuBLAS rate (matmul)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def run_meta(bench: Bench) -> dict:
    """Where and with what the rows were measured: this GPU, this torch, the measured copy rate."""
    return {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "copy_gbps": bench.copy_gbps,
        "timer": f"{ONE_SHAPE_TIMER}; {bench.reps} samples",
    }


def write(bench: Bench, out_dir: Path, meta: dict | None = None) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    meta = meta or run_meta(bench)
    written = [out_dir / "report.md", out_dir / "report.json"]
    written[0].write_text(markdown(bench, meta))
    written[1].write_text(json.dumps({"meta": meta, "rows": [r.as_dict() for r in bench.rows]}, indent=1))
    if chart(bench, out_dir / "report.png"):
        written.append(out_dir / "report.png")
    return written


CARD_START, CARD_END = "<!-- opgen:benchmarks -->", "<!-- /opgen:benchmarks -->"


def update_cards(bench: Bench, docs_dir: Path, meta: dict | None = None) -> list[Path]:
    """Put each measured op's rows into its doc card (docs/ops/<op>.md, between the benchmark markers)."""
    meta = meta or run_meta(bench)
    updated = []
    for op in dict.fromkeys(r.op for r in bench.rows):
        card = docs_dir / f"{op}.md"
        text = card.read_text() if card.is_file() else ""
        if CARD_START not in text or CARD_END not in text:
            continue
        table = markdown(Bench(rows=[r for r in bench.rows if r.op == op], _copy_gbps=bench.copy_gbps), meta)
        block = "\n".join(table.splitlines()[2:])  # the table and its note, without the report's title
        head, rest = text.split(CARD_START, 1)
        card.write_text(f"{head}{CARD_START}\n{block.strip()}\n{CARD_END}{rest.split(CARD_END, 1)[1]}")
        updated.append(card)
    return updated


def rewrite(json_path: Path) -> list[Path]:
    """Re-render report.md and report.png from a report.json (e.g. one copied off a GPU machine)."""
    data = json.loads(json_path.read_text())
    bench = Bench(rows=[Row(**row) for row in data["rows"]], _copy_gbps=data["meta"]["copy_gbps"])
    return write(bench, json_path.parent, data["meta"])


if __name__ == "__main__":
    import sys

    for written in rewrite(Path(sys.argv[1])):
        print(f"wrote {written}")
