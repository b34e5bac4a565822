"""Targets: what a bench module promises about its op, as data (its TARGETS list), checked against
the sweep's rows by evaluate(). They travel in each op's JSON chunk, so a report rebuilt from the
chunks alone (no GPU, no built ops) still checks them.

A target's metric, taken at every point it selects:
    "vs_best"     ours against the faster of eager and torch.compile: best ms / our ms
    "vs:<impl>"   ours against another timed callable of the point: its ms / our ms
    "roof"        our rate over the point's roof (the copy of the same bytes, cuBLAS, a bound row)
    "host"        per-call host time at one element: the native op's / ours (benchmarks/host.py)

Each point is judged against the target with its timing noise n: the larger noise of the two rows
compared there (benchmarks/harness.py, round_noise: from the rounds each row keeps). A band as wide
as the noise on either side of the target is a tie:
    met           value >= at_least * (1 + n): clear of the target by the noise
    missed        value * (1 + n) < at_least: short of it by more than the noise
    within noise  in between: the timings cannot tell it from the target
A target takes the worst status of its points (missed, then within noise, then met) and reports the
lowest value among the points with that status, and the noise there. A row without per-round times
(a chunk written before rows kept them, or one round) has unknown noise, counted as 0: no tie
allowance; `noise_unknown` counts those points. "host" targets have no noise: met or missed.

A point where a row the metric needs is missing (vs_best: eager or torch.compile failed or was not
timed; vs:<impl> and roof: that row) is counted in `missing`, by row, with the reasons the chunk's
notes give. vs_best then takes the baseline that was timed, which can only flatter ours: a miss
stands, but no target with missing rows is met or within noise: its status is "incomplete".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import NamedTuple

from . import host
from .harness import round_noise

METRICS = ("vs_best", "roof", "host")
BASELINES = ("eager", "compile")
STATUSES = ("met", "within noise", "missed")  # a point's, from best to worst


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


def near_copy(series: str, min_size: int, at_least: float = 0.9, limit: str = "", points: str = "") -> Target:
    """The rate of a memory-bound op against a copy of the same bytes (its roof), at sizes >= min_size
    of `series`; `points` names them in the target (default: the series and the size)."""
    points = points or f"{series}, size >= {min_size}"
    return Target(
        f"{points}: >= {at_least:.0%} of copy bandwidth", "roof", at_least, {"series": series}, min_size, limit
    )


def near_copy_when_misaligned(series: str, min_size: int = 1 << 24, at_least: float = 0.9, limit: str = "") -> Target:
    size = f"2^{min_size.bit_length() - 1}" if min_size & (min_size - 1) == 0 else str(min_size)
    return near_copy(series, min_size, at_least, limit, points=f"misaligned inputs ({series}, size >= {size})")


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
    baselines = [impls[name] for name in BASELINES if name in impls]
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


def missing_rows(metric: str, impls: dict[str, dict]) -> list[str]:
    """The rows the metric needs at one point that are not there: both baselines for vs_best."""
    ours = impls["ours"]
    if metric == "vs_best":
        return [name for name in BASELINES if name not in impls]
    if metric == "roof":
        return [] if ours.get("roofline") is not None else [ours.get("roof") or "roof"]
    return [] if metric[3:] in impls else [metric[3:]]


def point_noise(metric: str, impls: dict[str, dict]) -> tuple[float, bool]:
    """The larger timing noise of the two rows compared at a point, and whether both rows tell theirs
    (one that does not counts 0: no tie allowance)."""
    rows = [impls.get("ours"), _compared(metric, impls)]
    noises = [round_noise(row.get("rounds_ms")) if row is not None else None for row in rows]
    return max((n for n in noises if n is not None), default=0.0), None not in noises


def judge(value: float, at_least: float, noise: float) -> str:
    """One point's status: clear of the target by its noise, short of it by more, or a tie."""
    if value >= at_least * (1 + noise):
        return "met"
    if value * (1 + noise) < at_least:
        return "missed"
    return "within noise"


def _failure(notes: list[str], op: str, case: str, impl: str) -> str | None:
    """Why impl has no row at this point, where a note of the harness says it failed."""
    prefix = f"{op} | {case}: {impl} failed: "
    return next((note[len(prefix) :] for note in notes if note.startswith(prefix)), None)


class Judged(NamedTuple):
    status: str  # one of STATUSES
    value: float
    case: str
    noise: float | None


def _host_point(chunk: dict, target: dict, result: dict) -> list[Judged]:
    """The one host point, if both host times were measured: no rounds, so no noise."""
    rows = chunk.get("host", [])
    ours, native = host.lookup(rows, "ours"), host.lookup(rows, "native")
    if not (ours and native):
        return []
    result["points"] = 1
    case = f"ours {ours:.1f} us, {chunk.get('host_native')} {native:.1f} us"
    return [Judged(judge(native / ours, target["at_least"], 0.0), native / ours, case, None)]


def _judged_points(chunk: dict, target: dict, result: dict) -> list[Judged]:
    """Every point the target selects that has a value, judged; counts into result the points
    selected, the rows missing at them (and why) and the points whose noise is unknown."""
    metric, judged = target["metric"], []
    for case, impls in by_case(chunk["rows"]).items():
        ours = impls.get("ours")
        if ours is None or not _matches(ours, target.get("where") or {}, target.get("min_size")):
            continue
        result["points"] += 1
        for name in missing_rows(metric, impls):
            result["missing"][name] = result["missing"].get(name, 0) + 1
            why = _failure(chunk.get("notes", []), chunk["op"], case, name)
            if why is not None:
                result["missing_why"].setdefault(name, []).append(why)
        value = point_value(metric, impls)
        if value is None:
            continue
        noise, known = point_noise(metric, impls)
        result["noise_unknown"] += not known
        judged.append(Judged(judge(value, target["at_least"], noise), value, case, noise))
    return judged


def evaluate(target: dict, chunk: dict) -> dict:
    """The target checked against one op's chunk (the module's docstring says how): {"op", "target",
    "status" ("met", "within noise", "missed", "incomplete" or "not measured"), "timed_status" (what
    the points with a value give), "value", "case" and "noise" (the lowest value among the points of
    that status, and where), "points" (selected), "missing" (rows missing at them: {"compile": 3}),
    "missing_why" (the notes' reasons: {"compile": [...]}), "noise_unknown" (points without
    per-round times)}."""
    result = {
        "op": chunk["op"],
        "target": target,
        "value": None,
        "case": None,
        "points": 0,
        "status": "not measured",
        "timed_status": None,
        "noise": None,
        "missing": {},
        "missing_why": {},
        "noise_unknown": 0,
    }
    judge_points = _host_point if target["metric"] == "host" else _judged_points
    judged = judge_points(chunk, target, result)
    if judged:
        status = max((point.status for point in judged), key=STATUSES.index)
        shown = min((point for point in judged if point.status == status), key=lambda point: point.value)
        result.update(status=status, timed_status=status, value=shown.value, case=shown.case, noise=shown.noise)
    if result["missing"] and result["status"] != "missed":
        result["status"] = "incomplete"  # a point not timed may fall short: only a miss stands
    return result


def evaluate_all(chunks: list[dict]) -> list[dict]:
    return [evaluate(target, chunk) for chunk in chunks for target in chunk.get("targets", [])]
