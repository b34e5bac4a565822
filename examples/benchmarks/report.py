"""Writes benchmark rows as Markdown, JSON and a PNG chart."""
from __future__ import annotations

import json
from pathlib import Path

import torch

from .harness import Bench


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def markdown(bench: Bench) -> str:
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
    lines = [
        f"# Benchmarks on {device}",
        "",
        f"torch {torch.__version__}; measured device-to-device copy: {bench.copy_gbps:.0f} GB/s "
        "(bytes read + written). `roofline` is the achieved rate over that copy bandwidth "
        "(memory-bound ops) or over the measured cuBLAS rate (matmuls).",
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
    """Bar chart of roofline fraction per case and implementation; False if matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    cases = list(dict.fromkeys((r.op, r.case) for r in bench.rows if r.roofline is not None))
    impls = list(dict.fromkeys(r.impl for r in bench.rows if r.roofline is not None))
    fig, ax = plt.subplots(figsize=(max(8, 0.6 * len(cases) * len(impls)), 6))
    width = 0.8 / max(1, len(impls))
    for k, impl in enumerate(impls):
        values = {(r.op, r.case): 100 * r.roofline for r in bench.rows if r.impl == impl and r.roofline is not None}
        xs = [i + k * width for i in range(len(cases))]
        ax.bar(xs, [values.get(c, 0) for c in cases], width, label=impl)
    ax.axhline(100, color="black", linewidth=0.8)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(cases))])
    ax.set_xticklabels([f"{op}\n{case}" for op, case in cases], rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("% of measured copy bandwidth / cuBLAS rate")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def write(bench: Bench, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [out_dir / "report.md", out_dir / "report.json"]
    written[0].write_text(markdown(bench))
    meta = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "copy_gbps": bench.copy_gbps}
    written[1].write_text(json.dumps({"meta": meta, "rows": [r.as_dict() for r in bench.rows]}, indent=1))
    if chart(bench, out_dir / "report.png"):
        written.append(out_dir / "report.png")
    return written
