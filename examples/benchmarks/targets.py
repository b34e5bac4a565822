"""Targets: what a bench module promises about its op, as data (its TARGETS list), checked against
the sweep's rows by evaluate(). They travel in each op's JSON chunk, so a report rebuilt from the
chunks alone (no GPU, no built ops) still checks them.

A target's metric, taken at every point it selects (its worst point decides):
    "vs_best"     ours against the faster of eager and torch.compile: best ms / our ms
    "vs:<impl>"   ours against another timed callable of the point: its ms / our ms
    "roof"        our rate over the point's roof (the copy of the same bytes, cuBLAS, a bound row)
    "host"        per-call host time at one element: the native op's / ours (benchmarks/host.py)

A point that falls short by less than its timing noise (timed in rounds: the larger spread between
the rounds of the two callables compared) cannot be told from a tie: where every point that falls
short does so within its noise, the target's status is "within noise", reported with the worst
point and that noise, not "met".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from . import host

METRICS = ("vs_best", "roof", "host")


@dataclass
class Target:
    name: str  # what is promised, as the report prints it
    metric: str  # one of METRICS or "vs:<impl>"
    at_least: float  # the metric's worst value must reach this
    where: dict = field(default_factory=dict)  # row fields selecting the points: {"series": "float32"}; a list: any of
    min_size: float | None = None  # and only points at least this large
    limit: str = ""  # what holds it back, printed when it is missed

    def __post_init__(self):
        if self.metric not in METRICS and not (self.metric.startswith("vs:") and len(self.metric) > 3):
            raise ValueError(f"unknown target metric {self.metric!r}: one of {', '.join(METRICS)} or 'vs:<impl>'")

    def as_dict(self) -> dict:
        return asdict(self)


def beats_eager_and_compile(limit: str = "", **where) -> Target:
    return Target(
        "at every point: ours >= 1.0x the best of eager and torch.compile", "vs_best", 1.0, where, limit=limit
    )


def near_copy_when_misaligned(series: str, min_size: int = 1 << 24, at_least: float = 0.9, limit: str = "") -> Target:
    size = f"2^{min_size.bit_length() - 1}" if min_size & (min_size - 1) == 0 else str(min_size)
    return Target(
        f"misaligned inputs ({series}, size >= {size}): >= {at_least:.0%} of copy bandwidth",
        "roof",
        at_least,
        {"series": series},
        min_size,
        limit,
    )


def host_within(factor: float = 2.0, native: str = "a native torch op", limit: str = "") -> Target:
    return Target(f"per-call host time at one element within {factor:g}x of {native}", "host", 1 / factor, limit=limit)


# ---- evaluation ------------------------------------------------------------------------------


def _matches(row: dict, where: dict, min_size) -> bool:
    for key, wanted in where.items():
        value = row.get(key)
        if isinstance(wanted, (list, tuple)):
            if value not in wanted:
                return False
        elif value != wanted:
            return False
    return min_size is None or (row.get("size") is not None and row["size"] >= min_size)


def by_case(rows: list[dict]) -> dict[str, dict[str, dict]]:
    """case -> impl -> row, cases in the order measured."""
    cases: dict[str, dict[str, dict]] = {}
    for row in rows:
        cases.setdefault(row["case"], {})[row["impl"]] = row
    return cases


def best_baseline(impls: dict[str, dict]) -> dict | None:
    """The faster of the eager and torch.compile rows at one point, or None where neither ran."""
    baselines = [impls[name] for name in ("eager", "compile") if name in impls]
    return min(baselines, key=lambda row: row["ms"]) if baselines else None


def best_baseline_ms(impls: dict[str, dict]) -> float | None:
    best = best_baseline(impls)
    return None if best is None else best["ms"]


def _compared(metric: str, impls: dict[str, dict]) -> dict | None:
    """The row ours is set against at one point: the faster of eager and compile, the roof, or the named impl."""
    if metric == "vs_best":
        return best_baseline(impls)
    if metric == "roof":
        return impls.get(impls["ours"].get("roof") or "")
    return impls.get(metric[3:])


def point_value(metric: str, impls: dict[str, dict]) -> float | None:
    """The metric at one point (impl -> row), or None where a row it needs is missing."""
    ours = impls.get("ours")
    if ours is None:
        return None
    if metric == "roof":
        return ours.get("roofline")
    other = _compared(metric, impls)
    return None if other is None else other["ms"] / ours["ms"]


def point_noise(metric: str, impls: dict[str, dict]) -> float:
    """How far the rounds of the two timings compared at a point moved (0 when timed once)."""
    rows = [impls.get("ours"), _compared(metric, impls)]
    return max((row.get("spread") or 0.0) for row in rows if row is not None)


def evaluate(target: dict, chunk: dict) -> dict:
    """{"op", "target", "value", "case", "points", "noise", "status" ("met", "within noise", "missed" or
    "not measured")}: the target's worst value over the points it selects, where, and the timing noise there."""
    result = {
        "op": chunk["op"],
        "target": target,
        "value": None,
        "case": None,
        "points": 0,
        "status": "not measured",
        "noise": None,
    }
    beyond_noise = 0  # points short of the target by more than their timing noise
    if target["metric"] == "host":
        ours, native = host.lookup(chunk.get("host", []), "ours"), host.lookup(chunk.get("host", []), "native")
        if ours and native:
            result.update(
                value=native / ours, case=f"ours {ours:.1f} us, {chunk.get('host_native')} {native:.1f} us", points=1
            )
    else:
        for case, impls in by_case(chunk["rows"]).items():
            ours = impls.get("ours")
            if ours is None or not _matches(ours, target.get("where") or {}, target.get("min_size")):
                continue
            value = point_value(target["metric"], impls)
            if value is None:
                continue
            noise = point_noise(target["metric"], impls)
            result["points"] += 1
            beyond_noise += value * (1 + noise) < target["at_least"]
            if result["value"] is None or value < result["value"]:
                result.update(value=value, case=case, noise=noise)
    if result["value"] is not None:
        if result["value"] >= target["at_least"]:
            result["status"] = "met"
        else:
            result["status"] = "within noise" if target["metric"] != "host" and not beyond_noise else "missed"
    return result


def evaluate_all(chunks: list[dict]) -> list[dict]:
    return [evaluate(target, chunk) for chunk in chunks for target in chunk.get("targets", [])]
