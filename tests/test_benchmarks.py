"""The benchmark sweep's machinery (template/benchmarks/: sweep, targets, host, sweep_report) with
made-up timers and rows, and every bench module's sweep walked on the meta device: no GPU needed.

The bench modules of examples/ and of a generated project import their ops, which needs a build;
here those imports get stand-ins, and a fake timer never calls what it times.
"""
from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch

from helpers import REPO, SKELETON_OPS, add_skeleton_ops, opgen

sys.path.insert(0, str(REPO / "template"))  # the template's benchmarks/ package, as a project gets it

from benchmarks import clocks, host, sweep, sweep_report, targets  # noqa: E402
from benchmarks.harness import Bench, round_noise  # noqa: E402
from benchmarks.sweep import Point  # noqa: E402
from benchmarks.targets import Target  # noqa: E402


def has_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


class FakeTimer:
    """A callable's `fake_ms` (else `ms`), counting the calls; it never calls what it times."""

    def __init__(self, ms: float = 1.0):
        self.ms, self.calls = ms, 0

    def __call__(self, fn) -> float:
        self.calls += 1
        return getattr(fn, "fake_ms", self.ms)


def timed(ms: float):
    """A callable that the fake timers say takes `ms`."""

    def fn():
        return None

    fn.fake_ms = ms
    return fn


# ---- declaring a sweep ------------------------------------------------------------------------


def test_powers_of_two_include_both_ends():
    assert sweep.powers_of_two(10, 28, 2) == [1 << e for e in range(10, 29, 2)]
    assert sweep.powers_of_two(0, 5, 2) == [1, 4, 16, 32]
    assert sweep.size_name(1 << 20) == "2^20" and sweep.size_name(1000) == "1000" and sweep.size_name(1) == "2^0"


def test_elementwise_points_cover_sizes_dtypes_misaligned_views_and_odd_sizes():
    points = sweep.elementwise_points()
    sweep.check_points(points)
    by_series = {}
    for p in points:
        by_series.setdefault(p.series, []).append(p)
    assert list(by_series) == ["float32", "bfloat16", "float16", "float32 misaligned", "float32 odd sizes"]
    assert [p.size for p in by_series["float16"]] == [1 << e for e in range(10, 29, 2)]
    assert all(p.args == {"dtype": torch.float32, "misaligned": True} for p in by_series["float32 misaligned"])
    assert [p.size for p in by_series["float32 odd sizes"]] == list(sweep.ODD_SIZES)
    assert {p.size for p in points if p.key} == {1 << 28}
    small = sweep.elementwise_points((torch.float64,), lo=4, hi=12, step=4)
    assert [p.size for p in small if p.series == "float64"] == [16, 256, 4096]
    assert [p.size for p in small if p.series == "float64 odd sizes"] == [999]  # none past the largest size


def test_quick_keeps_each_lines_ends_and_its_key_points():
    points = sweep.line("a", [1, 2, 4, 8, 16], key=[4]) + sweep.line("b", [3, 5, 7])
    assert [(p.series, p.size) for p in sweep.select(points, quick=True)] == [
        ("a", 1), ("a", 4), ("a", 16), ("b", 3), ("b", 7)]
    assert sweep.select(points, quick=False) == points


@pytest.mark.parametrize(("points", "message"), [
    ([], "no points"),
    ([Point("a", 1), Point("a", 1)], "twice"),
    ([Point("", 1)], "not a well-formed Point"),
    ([Point("a", -1)], "not a well-formed Point"),
    ([("a", 1)], "not a well-formed Point"),
])
def test_malformed_sweeps_are_refused(points, message):
    with pytest.raises(ValueError, match=message):
        sweep.check_points(points)


@pytest.fixture
def on_cpu(monkeypatch):
    monkeypatch.setattr(sweep, "DEVICE", "cpu")


def test_tensor_makes_misaligned_views_and_integer_ranges(on_cpu):
    x = sweep.tensor((4, 5), torch.float32, misaligned=True)
    assert x.shape == (4, 5) and x.storage_offset() == 1 and x.is_contiguous() and x.device.type == "cpu"
    assert x.data_ptr() % 8 == 4  # one float past an aligned start: no vector loads
    volume = sweep.tensor((16, 16, 16), torch.uint16, high=4096)
    assert volume.dtype == torch.uint16 and 0 <= int(volume.int().min()) and int(volume.int().max()) < 4096
    assert sweep.tensor(7).shape == (7,) and sweep.tensor(0, torch.bfloat16).numel() == 0


# ---- measuring a point ------------------------------------------------------------------------


def test_compare_in_a_sweep_stamps_the_point_and_times_a_copy_roof_once_per_size(on_cpu):
    timer = FakeTimer(ms=0.5)
    bench = Bench(timer=timer, device="cpu")
    bench.point = Point("float32", 1 << 20)
    rows = bench.compare("op", "n=2^20", bytes_moved=3 << 22, ours=timed(1.0), eager=timed(2.0), compile_eager=False)
    assert [r.impl for r in rows] == ["ours", "eager", "copy"]
    ours, eager, copy = rows
    assert (ours.series, ours.size, ours.roof) == ("float32", 1 << 20, "copy")
    assert ours.roofline == pytest.approx(0.5) and eager.roofline == pytest.approx(0.25) and copy.roofline == 1.0
    assert ours.gbps == pytest.approx((3 << 22) / 1.0 / 1e6) and ours.speedup_vs_eager == 2.0
    bench.compare("op", "again", bytes_moved=3 << 22, ours=timed(1.0))
    assert timer.calls == 4  # ours, eager, the copy, ours: the copy of those bytes is not timed twice
    assert len(bench.rows) == 5


def test_compare_with_a_named_roof_takes_the_rate_against_it():
    bench = Bench(timer=FakeTimer(), point=Point("float32 square", 64))
    rows = bench.compare("gemm", "4x4x4", flops=128, roof="cublas", ours=timed(2.0), cublas=timed(1.5))
    assert {r.impl: r.roofline for r in rows} == {"ours": 0.75, "cublas": 1.0}
    assert rows[0].tflops == pytest.approx(128 / 2.0 / 1e9)
    with pytest.raises(ValueError, match="roof='nope' names no timed callable"):
        bench.compare("gemm", "4x4x4", flops=128, roof="nope", ours=timed(2.0))


def test_a_failing_variant_leaves_the_points_other_rows_only_in_a_sweep():
    def broken(fn):
        if getattr(fn, "fake_ms", None) is None:
            raise RuntimeError("compile failed\nwith details")
        return fn.fake_ms

    bench = Bench(timer=broken, point=Point("s", 1))
    rows = bench.compare("op", "c", ours=timed(1.0), other=lambda: None)
    assert [r.impl for r in rows] == ["ours"]
    assert bench.notes == ["op | c: other failed: RuntimeError: compile failed"]
    bench.point = None
    with pytest.raises(RuntimeError, match="compile failed"):
        bench.compare("op", "c", ours=timed(1.0), other=lambda: None)


def test_rounds_take_turns_and_keep_each_callables_fastest_round():
    order = []
    ours_rounds, eager_rounds = iter([1.5, 1.0, 1.2]), iter([2.0, 2.0, 2.2])

    def ours():
        return None

    def eager():
        return None

    def timer(fn):
        order.append(fn.__name__)
        return next(ours_rounds if fn is ours else eager_rounds)

    bench = Bench(timer=timer, point=Point("float32", 64), rounds=3)
    rows = {r.impl: r for r in bench.compare("op", "n=64", ours=ours, eager=eager, compile_eager=False)}
    assert order == ["ours", "eager"] * 3  # turns, not one callable's rounds back to back
    assert rows["ours"].ms == 1.0 and rows["ours"].rounds_ms == [1.5, 1.0, 1.2]
    assert rows["eager"].ms == 2.0 and rows["eager"].rounds_ms == [2.0, 2.0, 2.2]
    assert rows["ours"].speedup_vs_eager == 2.0


def test_the_noise_comes_from_the_rounds_kept_not_from_a_disturbed_one():
    assert round_noise([1.0, 1.01, 5.0]) == pytest.approx(0.01)  # the slowest of three may be disturbed
    assert round_noise([1.3, 1.0, 1.2, 9.0, 1.1]) == pytest.approx(0.3)
    assert round_noise([1.0, 1.5]) == pytest.approx(0.5)  # of two, neither can be told disturbed
    assert round_noise([1.0]) is None and round_noise(None) is None  # one round tells no noise
    ours_rounds, copy_rounds = iter([1.0, 1.01, 5.0]), iter([0.5, 0.52, 0.51])

    def timer(fn):
        return next(copy_rounds if getattr(fn, "fake_ms", None) is None else ours_rounds)

    bench = Bench(timer=timer, point=Point("float32", 64), rounds=3, device="cpu")
    ours, copy = bench.compare("op", "n=64", bytes_moved=128, ours=timed(1.0))
    assert ours.rounds_ms == [1.0, 1.01, 5.0] and round_noise(ours.rounds_ms) == pytest.approx(0.01)
    assert copy.impl == "copy" and copy.rounds_ms == [0.5, 0.52, 0.51] and copy.ms == 0.5  # the roof's rounds too


def test_a_variant_failing_in_a_later_round_is_dropped_from_the_point():
    calls = {"flaky": 0}

    def flaky():
        return None

    def timer(fn):
        if fn is flaky:
            calls["flaky"] += 1
            if calls["flaky"] == 2:
                raise RuntimeError("out of memory")
        return 1.0

    bench = Bench(timer=timer, point=Point("s", 1), rounds=3)
    rows = bench.compare("op", "c", ours=lambda: None, flaky=flaky)
    assert [r.impl for r in rows] == ["ours"] and calls["flaky"] == 2
    assert bench.notes == ["op | c: flaky failed: RuntimeError: out of memory"]


# ---- one op's run, chunks, the report -----------------------------------------------------------


def fake_module(name: str, ours_ms: float, slow_series_ms: float | None = None) -> types.ModuleType:
    """A bench module measured on CPU tensors: its eager takes 1 ms, its compile 1.2 ms, ours `ours_ms`."""
    module = types.ModuleType(f"bench_{name}")
    module.SIZE_LABEL = "elements"
    module.SWEEP = [*sweep.line("float32", [16, 64, 256], key=[256]),
                    *sweep.line("float32 misaligned", [256], misaligned=True)]
    module.HOST_NATIVE = "torch.add"
    module.TARGETS = [targets.beats_eager_and_compile(limit="what limits it"),
                      targets.near_copy_when_misaligned("float32 misaligned", min_size=256),
                      targets.host_within(2.0, "torch.add")]

    def measure(bench, size, misaligned=False):
        x = sweep.tensor(size, misaligned=misaligned)
        slow = misaligned and slow_series_ms is not None
        bench.compare(name, f"n={size}{' misaligned' if misaligned else ''}", bytes_moved=2 * x.nbytes,
                      ours=timed(slow_series_ms if slow else ours_ms), eager=timed(1.0), compile_eager=False,
                      compile=timed(1.2))  # a stand-in: torch.compile on CPU tensors takes seconds

    module.measure = measure
    module.host_calls = lambda numel: {"ours": timed(3.0), "raw": timed(2.0), "native": timed(1.0)}
    return module


def host_timer(fns: dict) -> dict:
    return {name: fn.fake_ms for name, fn in fns.items()}


FAKE_META = {"device": "Fake GPU", "torch": "2.x", "timer": "fake", "warmup_ms": 1, "rep_ms": 2, "l2_flushed": True,
             "date": "today"}


def run_fake(name, out, ours_ms=0.5, slow_series_ms=None, quick=False) -> dict:
    bench = Bench(timer=FakeTimer(ms=0.6), device="cpu", rounds=3)
    return sweep.run(name, fake_module(name, ours_ms, slow_series_ms), quick=quick, bench=bench, meta=FAKE_META,
                     host_timer=host_timer, out_dir=out)


def test_sweep_runs_in_chunks_and_the_report_covers_every_chunk(tmp_path, on_cpu):
    first = run_fake("op_a", tmp_path)
    assert first["points"] == {"measured": 4, "selected": 4, "declared": 4} and first["complete"]
    assert {r["series"] for r in first["rows"]} == {"float32", "float32 misaligned"}
    assert [t["metric"] for t in first["targets"]] == ["vs_best", "roof", "host"]
    run_fake("op_b", tmp_path, ours_ms=2.0, quick=True)  # a second command, another op
    (tmp_path / "notes.json").write_text("[1, 2]")  # not a chunk: ignored
    chunks = sweep.load_chunks(tmp_path)
    assert [c["op"] for c in chunks] == ["op_a", "op_b"]
    assert chunks[1]["points"] == {"measured": 3, "selected": 3, "declared": 4} and chunks[1]["quick"]
    written = sweep_report.write(tmp_path)
    text = (tmp_path / "sweep.md").read_text()
    assert written[0] == tmp_path / "sweep.md"
    assert "## op_a" in text and "## op_b" in text
    assert "Quick run (each line's ends and key points only) for: op_b" in text
    assert "L2 flushed before every timed run" in text and "fake (warm-up 1 ms, 2 ms of timed runs)" in text
    run_fake("op_b", tmp_path, ours_ms=0.25)  # measured again: its chunk is replaced
    chunks = sweep.load_chunks(tmp_path)
    assert len(chunks) == 2 and not chunks[1]["quick"] and chunks[1]["rows"][0]["ms"] == 0.25


def test_nvidia_smi_clock_lines_parse_and_what_it_cannot_read_is_none():
    assert clocks.parse("1755, 1980, 61, 512.34\n") == {"sm_mhz": 1755, "max_sm_mhz": 1980, "temperature_c": 61,
                                                         "power_w": 512.34}
    assert clocks.parse("1980, 1980, 40, [N/A]") == {"sm_mhz": 1980, "max_sm_mhz": 1980, "temperature_c": 40,
                                                       "power_w": None}
    assert clocks.parse("[N/A], 1980, 40, 100") is None
    assert clocks.parse("1980, 1980, 40, 100\n1980, 1980, 41, 100") is None  # two GPUs answered: which?
    assert clocks.parse("") is None


def test_the_report_shows_the_sm_clock_at_each_ops_start_and_end(tmp_path, on_cpu, monkeypatch):
    readings = iter([{"sm_mhz": 1980, "max_sm_mhz": 1980, "temperature_c": 40, "power_w": 100.0},
                     {"sm_mhz": 1755, "max_sm_mhz": 1980, "temperature_c": 66, "power_w": 690.0}])
    monkeypatch.setattr(clocks, "read", lambda: next(readings))
    chunk = run_fake("op_a", tmp_path)
    assert chunk["clocks"]["start"]["sm_mhz"] == 1980 and chunk["clocks"]["end"]["sm_mhz"] == 1755
    text = sweep_report.markdown([chunk], {})
    assert "its most 1980 MHz: op_a 1980 to 1755 MHz (40 to 66 C)" in text
    monkeypatch.setattr(clocks, "read", lambda: None)  # no nvidia-smi: no clock line
    assert "SM clock" not in sweep_report.markdown([run_fake("op_a", tmp_path)], {})


def test_an_interrupted_sweep_keeps_the_points_it_measured(tmp_path, on_cpu):
    module = fake_module("op_a", 0.5)
    measure = module.measure

    def measure_until_the_time_limit(bench, size, **args):
        if size == 256:
            raise SystemExit("killed by the command's time limit")
        measure(bench, size, **args)

    module.measure = measure_until_the_time_limit
    with pytest.raises(SystemExit):
        sweep.run("op_a", module, bench=Bench(timer=FakeTimer(), device="cpu"), out_dir=tmp_path, meta=FAKE_META)
    (chunk,) = sweep.load_chunks(tmp_path)
    assert not chunk["complete"] and chunk["points"]["measured"] == 2 and len(chunk["rows"]) == 2 * 4
    assert not list(tmp_path.glob("*.partial"))
    assert "**Interrupted** before the end (no host overhead measured): op_a (2 of 4 points)." in (
        sweep_report.markdown([chunk], {}))


def test_worst_point_per_op_is_the_lowest_ratio_and_the_lowest_share_of_the_roof(tmp_path, on_cpu):
    chunk = run_fake("op_a", tmp_path, ours_ms=0.5, slow_series_ms=4.0)
    worst = sweep_report.worst_points(chunk)
    assert worst["vs_best"] == pytest.approx(0.25) and worst["vs_best_case"] == "n=256 misaligned"
    assert worst["roof"] == pytest.approx(0.6 / 4.0) and worst["roof_case"] == "n=256 misaligned"
    table = sweep_report.markdown([chunk], {})
    assert "| op_a | 0.25x | n=256 misaligned | 15.0% | n=256 misaligned |" in table


def test_targets_are_met_or_missed_with_the_worst_value_and_the_limit(tmp_path, on_cpu):
    good = run_fake("good", tmp_path, ours_ms=0.5)
    bad = run_fake("bad", tmp_path, ours_ms=0.5, slow_series_ms=4.0)
    results = {(r["op"], r["target"]["metric"]): r for r in targets.evaluate_all([good, bad])}
    assert results["good", "vs_best"]["status"] == "met" and results["good", "vs_best"]["value"] == 2.0
    assert results["good", "vs_best"]["points"] == 4
    assert results["good", "roof"]["status"] == "met" and results["good", "roof"]["points"] == 1  # min_size 256
    assert results["bad", "vs_best"]["status"] == "missed" and results["bad", "vs_best"]["case"] == "n=256 misaligned"
    assert results["bad", "roof"]["status"] == "missed" and results["bad", "roof"]["value"] == pytest.approx(0.15)
    host_result = results["good", "host"]  # ours 3 us against torch.add's 1 us: 3x, over the 2x allowed
    assert host_result["status"] == "missed" and host_result["value"] == pytest.approx(1 / 3)
    text = sweep_report.markdown([good, bad], {})
    assert "| bad | at every point: ours >= 1.0x the best of eager and torch.compile | >= 1x best of eager, compile " \
           "| 0.25x (n=256 misaligned), 4 points | **missed**: what limits it |" in text
    assert "| good | per-call host time at one element within 2x of torch.add | <= 2x torch.add " \
           "| 3.00x (ours 3.0 us, torch.add 1.0 us) | **missed** |" in text
    assert "| good | misaligned inputs (float32 misaligned, size >= 2^8): >= 90% of copy bandwidth " \
           "| >= 90% of roof | 120.0% (n=256 misaligned) | met |" in text


def test_target_metrics_against_another_impl_and_points_nobody_measured():
    rows = [{"op": "s", "case": c, "impl": i, "ms": ms, "series": "float32", "size": size, "roofline": None}
            for c, size, i, ms in [("1024", 1024, "ours", 1.0), ("1024", 1024, "eager", 2.5),
                                   ("64", 64, "ours", 1.0), ("64", 64, "eager", 0.5)]]
    chunk = {"op": "s", "rows": rows, "host": []}
    at_1024 = Target("rows of 1024: >= 2x torch.sort", "vs:eager", 2.0, {"series": "float32", "size": 1024}).as_dict()
    everywhere = Target("every row length", "vs:eager", 1.0).as_dict()
    elsewhere = Target("a series not swept", "vs:eager", 1.0, {"series": ["bfloat16", "float16"]}).as_dict()
    assert targets.evaluate(at_1024, chunk)["status"] == "met"
    assert targets.evaluate(everywhere, chunk) | {"target": None} == {
        "op": "s", "target": None, "value": 0.5, "case": "64", "points": 2, "status": "missed",
        "timed_status": "missed", "noise": 0.0, "missing": {}, "missing_why": {}, "noise_unknown": 2}
    assert targets.evaluate(elsewhere, chunk)["status"] == "not measured"
    assert targets.evaluate(Target("host", "host", 0.5).as_dict(), chunk)["status"] == "not measured"
    with pytest.raises(ValueError, match="unknown target metric 'fastest'"):
        Target("x", "fastest", 1.0)


def point_rows(case: str, size: int = 8, series: str = "f", **rounds: list[float]) -> list[dict]:
    """A point's rows as a chunk holds them: impl -> its rounds' ms; the fastest is the row's ms."""
    return [{"op": "s", "case": case, "impl": impl, "ms": min(ms), "series": series, "size": size, "rounds_ms": ms}
            for impl, ms in rounds.items()]


def vs_best(*points: list[dict], notes=()) -> dict:
    """The chunk of `points` checked against "at every point: ours >= the best of eager and compile"."""
    chunk = {"op": "s", "rows": [row for rows in points for row in rows], "host": [], "notes": list(notes)}
    return targets.evaluate(targets.beats_eager_and_compile().as_dict(), chunk)


OURS_1PCT = [1.0, 1.01, 1.5]  # ours: 1% between the rounds kept, the third one disturbed


def test_a_point_short_by_less_than_its_kept_rounds_noise_is_a_tie_and_by_more_is_missed():
    clear = point_rows("big", 1024, ours=[1.0] * 3, eager=[1.2] * 3, compile=[1.3] * 3)
    tie = vs_best(clear, point_rows("small", ours=OURS_1PCT, eager=[0.995] * 3, compile=[2.0] * 3))
    assert tie["status"] == "within noise" and tie["case"] == "small" and tie["points"] == 2
    assert tie["value"] == pytest.approx(0.995) and tie["noise"] == pytest.approx(0.01)
    text = sweep_report.targets_table([tie], [{"op": "s"}])[-1]
    assert "| 0.99x (small), 2 points | tie within timing noise (1.0% there) |" in text
    # 3% short: the disturbed round's 50% would have called it a tie; the rounds kept do not
    missed = vs_best(clear, point_rows("small", ours=OURS_1PCT, eager=[0.97] * 3, compile=[2.0] * 3))
    assert missed["status"] == "missed" and missed["value"] == pytest.approx(0.97)


def test_a_point_over_by_less_than_its_noise_is_a_tie_not_met_and_clearly_over_is_met():
    over = vs_best(point_rows("small", ours=OURS_1PCT, eager=[1.005] * 3, compile=[1.1] * 3))
    assert over["status"] == "within noise" and over["value"] == pytest.approx(1.005)
    assert vs_best(point_rows("small", ours=OURS_1PCT, eager=[1.05] * 3, compile=[1.1] * 3))["status"] == "met"
    # compile's noise does not count where eager is the faster baseline, the one compared
    noisy_compile = point_rows("small", ours=[1.0] * 3, eager=[1.005] * 3, compile=[1.1, 1.3, 1.3])
    assert vs_best(noisy_compile)["status"] == "met"
    # the worst status decides, not the lowest value: a tie at 1.005 outweighs a clear 1.002
    steady = point_rows("steady", ours=[1.0] * 3, eager=[1.002] * 3, compile=[1.1] * 3)
    mixed = vs_best(steady, point_rows("noisy", 16, ours=OURS_1PCT, eager=[1.005] * 3, compile=[1.1] * 3))
    assert mixed["status"] == "within noise" and mixed["case"] == "noisy"


def test_a_baseline_not_timed_makes_the_target_incomplete_not_met():
    full = point_rows("a", 16, ours=[1.0] * 3, eager=[1.5] * 3, compile=[1.4] * 3)
    eager_only = point_rows("b", 32, ours=[1.0] * 3, eager=[1.5] * 3)
    neither = point_rows("c", 64, ours=[1.0] * 3)
    note = "s | b: compile failed: BackendCompilerFailed: no compiler"
    result = vs_best(full, eager_only, neither, point_rows("d", 128, ours=[1.0] * 3, eager=[1.5] * 3), notes=[note])
    assert result["status"] == "incomplete" and result["timed_status"] == "met" and result["points"] == 4
    assert result["missing"] == {"compile": 3, "eager": 1}
    assert result["missing_why"] == {"compile": ["BackendCompilerFailed: no compiler"]}
    text = sweep_report.targets_table([result], [{"op": "s"}])[-1]
    assert "| **incomplete**: compile not timed at 3 of 4 points (1 failed: BackendCompilerFailed: no compiler), " \
           "eager not timed at 1 of 4 points; met where timed |" in text
    # eager alone can only flatter ours: a miss where compile is missing still stands, and says what is missing
    slow = vs_best(full, point_rows("b", 32, ours=[1.0] * 3, eager=[0.5] * 3))
    assert slow["status"] == "missed" and slow["missing"] == {"compile": 1}
    assert "| **missed**; compile not timed at 1 of 2 points |" in sweep_report.targets_table([slow], [{"op": "s"}])[-1]


def test_a_compared_row_missing_at_a_point_is_counted_for_every_metric():
    rows = point_rows("a", 16, ours=[1.0] * 3, eager=[2.0] * 3) + point_rows("b", 32, ours=[1.0] * 3)
    rows[0].update(roof="eager", roofline=2.0)  # ours at point a: its roof is the eager row; point b names none
    chunk = {"op": "s", "rows": rows, "host": [], "notes": []}
    against_eager = targets.evaluate(Target("x", "vs:eager", 1.0).as_dict(), chunk)
    assert against_eager["status"] == "incomplete" and against_eager["missing"] == {"eager": 1}
    assert against_eager["points"] == 2 and against_eager["value"] == 2.0
    roof = targets.evaluate(Target("y", "roof", 0.9).as_dict(), chunk)
    assert roof["status"] == "incomplete" and roof["missing"] == {"roof": 1}  # point b names no roof


def test_an_old_chunks_row_without_per_round_times_gets_no_tie_allowance():
    old = [{"op": "s", "case": "small", "impl": impl, "ms": ms, "series": "f", "size": 8, "spread": 0.5}
           for impl, ms in [("ours", 1.0), ("eager", 0.995), ("compile", 2.0)]]  # 0.5% short, all-rounds spread 50%
    result = vs_best(old)
    assert result["status"] == "missed" and result["noise"] == 0.0 and result["noise_unknown"] == 1
    assert vs_best([dict(r, ms=r["ms"] * 1.01) if r["impl"] == "eager" else r for r in old])["status"] == "met"
    text = sweep_report.targets_table([result], [{"op": "s"}])[-1]
    assert text.endswith("| **missed** (timing noise unknown: no tie allowance) |")
    chunk = {"op": "s", "rows": old, "meta": {"rounds": 3}}
    assert "have unknown timing noise, counted as 0" in sweep_report._rounds_text({"s": chunk["meta"]}, [chunk])
    # a row with one round tells no noise either
    one_round = vs_best(point_rows("small", ours=[1.0], eager=[0.995], compile=[2.0]))
    assert one_round["status"] == "missed" and one_round["noise_unknown"] == 1


@pytest.mark.skipif(not has_matplotlib(), reason="matplotlib is not installed")
def test_each_op_gets_a_chart(tmp_path, on_cpu):
    run_fake("op_a", tmp_path)
    written = sweep_report.write(tmp_path)
    chart = tmp_path / "op_a.png"
    assert chart in written and chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and chart.stat().st_size > 10_000
    assert "![op_a](op_a.png)" in (tmp_path / "sweep.md").read_text()
    run_fake("op_b", tmp_path)  # the next op of the command: only its chart is drawn, op_a's is kept
    assert sweep_report.write(tmp_path, charts=["op_b"]) == [tmp_path / "sweep.md", tmp_path / "op_b.png"]
    assert "![op_a](op_a.png)" in (tmp_path / "sweep.md").read_text()


def test_the_report_says_how_torch_compile_was_timed(tmp_path, on_cpu, monkeypatch):
    chunk = run_fake("op_a", tmp_path)
    assert [entry[:2] for entry in chunk["timeline"]] == [["float32", 16], ["float32", 64], ["float32", 256],
                                                         ["float32 misaligned", 256]]
    chunk["meta"] = sweep.run_meta(5, 25, compile_per_point=True)
    assert sweep.COMPILE_PER_POINT in sweep_report.markdown([chunk], {})
    chunk["meta"] = sweep.run_meta(5, 25, compile_per_point=False)
    assert sweep.COMPILE_PER_LINE in sweep_report.markdown([chunk], {})
    import torch._inductor.config

    monkeypatch.setattr(torch._inductor.config, "compile_threads", torch._inductor.config.compile_threads)
    monkeypatch.setattr(torch._dynamo.config, "recompile_limit", torch._dynamo.config.recompile_limit)
    monkeypatch.setattr(torch._dynamo.config, "accumulated_recompile_limit",
                        torch._dynamo.config.accumulated_recompile_limit)
    sweep.configure_compile()
    assert torch._inductor.config.compile_threads == 1 and torch._dynamo.config.recompile_limit >= 256


def test_report_without_chunks_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="no sweep results"):
        sweep_report.write(tmp_path)


# ---- host overhead ----------------------------------------------------------------------------


def test_host_overhead_rows_and_what_a_call_is_made_of():
    made_for = []

    def host_calls(numel):
        made_for.append(numel)
        return {"ours": timed(30.0 + numel), "raw": timed(20.0 + numel), "native": timed(8.0 + 2 * numel)}

    def timer(fns):  # inference_mode skips the autograd layer: 5 us less
        return {name: fn.fake_ms - (5.0 if torch.is_inference_mode_enabled() else 0.0) for name, fn in fns.items()}

    rows = host.measure(host_calls, timer)
    assert made_for == [1, 0] and len(rows) == 12
    assert host.lookup(rows, "ours") == 31.0 and host.lookup(rows, "native", "empty", "inference_mode") == 3.0
    assert host.breakdown(rows, "raw") == {"autograd layer": 5.0, "launch": 1.0, "dispatch, checks, allocation": 15.0}
    chunk = {"op": "x", "host": rows, "host_native": "torch.add", "rows": []}
    line = sweep_report.host_table([chunk])[2]
    assert line == "| x | 31.0 | 21.0 | torch.add | 10.0 | 3.10x | 10.0 | 5.0 | 1.0 | 15.0 |"


def test_host_rows_record_a_call_that_raises():
    def host_calls(numel):
        def refuse():
            raise ValueError("x must not be empty")

        return {"ours": refuse if numel == 0 else timed(1.0)}

    rows = host.measure(host_calls, host_timer)
    empty = [r for r in rows if r["input"] == "empty"]
    assert len(empty) == 2 and all(r["error"] == "ValueError: x must not be empty" and "us" not in r for r in empty)
    assert [r["us"] for r in rows if r["input"] == "1 element"] == [1.0, 1.0]


def test_host_callables_take_turns_and_each_gets_its_median():
    order = []
    fns = {"ours": lambda: order.append("ours"), "native": lambda: order.append("native")}
    times = host.interleaved_us(fns, calls=3, repeats=4, sync=lambda: None)
    assert set(times) == {"ours", "native"} and all(t >= 0 for t in times.values())
    timed_calls = order[40:]  # after 20 warm-up calls of each
    assert timed_calls == (["ours"] * 3 + ["native"] * 3) * 4
    import gc

    assert gc.isenabled()


# ---- every bench module's sweep, walked on the meta device ---------------------------------------

DRY_RUN = """
import importlib, json, sys, types
package, ops = sys.argv[1], sys.argv[2:]


class Stub(types.ModuleType):
    # Stands in for the op modules (they need a build): any name is a function; SPEC is a blank op's.
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name == "SPEC":
            return types.SimpleNamespace(args={"x": object()}, tensor_args=["x"], out=None, op=lambda **k: None)
        return lambda *args, **kwargs: None


for name in [package, f"{package}.ops", *(f"{package}.ops.{op}" for op in ops)]:
    sys.modules[name] = Stub(name)
import ast, importlib.util
from pathlib import Path
from benchmarks import derived, sweep, targets
from benchmarks.harness import Bench

loader = importlib.util.spec_from_file_location("project_build", Path(package) / "_build.py")
build = importlib.util.module_from_spec(loader)
loader.loader.exec_module(build)


def bench_module(op):
    # A bench_<op>.py, or the benchmark made from a declared op's SPEC: here from its declaration.
    if Path(f"benchmarks/bench_{op}.py").is_file():
        return importlib.import_module(f"benchmarks.bench_{op}")
    declared = build.declared_ops()[op]
    m = build.derivation().model.build(op, declared.kind, declared.schema, declared.with_out)
    scalars = {a.name: ast.literal_eval(m.sample_scalars[a.name]) for a in m.scalars}
    call = lambda **kwargs: None
    spec = types.SimpleNamespace(name=op, kind=declared.kind, tensor_args=[a.name for a in m.tensors],
                                 args={**{a.name: None for a in m.tensors}, **scalars},
                                 out=m.out.name if m.out else None, function=call, reference=call, op=call)
    return derived.from_spec(spec)

sweep.DEVICE = "meta"  # shapes and strides without memory: a 2^28-element point costs nothing
summary = {}
for op in ops:
    module = bench_module(op)
    if not hasattr(module, "SWEEP"):
        summary[op] = None
        continue
    bench = Bench(timer=lambda fn: 1.0, device="meta")
    chunk = sweep.run(op, module, bench=bench, meta={}, host_timer=lambda fns: {name: 10.0 for name in fns})
    json.dumps(chunk)  # what write_chunk saves
    ours = [r for r in chunk["rows"] if r["impl"] == "ours"]
    summary[op] = {
        "points": chunk["points"], "quick": len(sweep.select(sweep.points_of(module), True)),
        "ours": len(ours), "cases": len({r["case"] for r in ours}), "notes": chunk["notes"],
        "impls": sorted({r["impl"] for r in chunk["rows"]}), "roofs": sorted({str(r["roof"]) for r in ours}),
        "series": sorted({r["series"] for r in ours}), "size_label": chunk["size_label"],
        "host": sorted((r["impl"], r["input"], r["mode"], "us" in r) for r in chunk["host"]),
        "targets": [(r["target"]["name"], r["status"]) for r in targets.evaluate_all([chunk])],
    }
print(json.dumps(summary))
"""


def dry_run(project: Path, package: str, ops: list[str]) -> dict:
    result = subprocess.run([sys.executable, "-c", DRY_RUN, package, *ops], cwd=project, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def check_dry_run(op: str, summary: dict) -> None:
    """Every declared point measured once, under its own case name, with a roof; every target finds points."""
    assert summary["points"]["measured"] == summary["points"]["declared"] == summary["ours"], op
    assert summary["cases"] == summary["ours"], f"{op}: two points share a case name"
    assert not summary["notes"], (op, summary["notes"])
    assert "None" not in summary["roofs"], f"{op}: a point without a roof"
    assert {"ours", "eager"} <= set(summary["impls"]), op
    assert len(summary["host"]) == 12, f"{op}: host calls at one element and empty, each mode"
    # Without a build, only the torch.ops call (raw) cannot run.
    assert all(timed for impl, _, _, timed in summary["host"] if impl != "raw"), (op, summary["host"])
    assert summary["targets"], f"{op} declares no targets"
    unmatched = [name for name, status in summary["targets"] if status == "not measured"]
    assert not unmatched, f"{op}: targets that select no point: {unmatched}"
    assert summary["quick"] < summary["ours"] or summary["ours"] <= 20, f"{op}: --quick keeps every point"


EXAMPLE_OPS = sorted(p.stem[len("bench_"):] for p in (REPO / "examples/benchmarks").glob("bench_*.py"))  # every op has one


def test_every_example_sweep_walks_through_on_the_meta_device():
    summaries = dry_run(REPO / "examples", "opgen_examples", EXAMPLE_OPS)
    assert summaries.pop("custom_add") is None  # the CPU-only op: nothing to sweep
    for op, summary in summaries.items():
        check_dry_run(op, summary)
    assert sum(s["ours"] for s in summaries.values()) <= 400, "bound the points: the full sweep must stay short"
    elementwise = ["vector_add", "scale", "fused_relu_scale", "gelu_approx"]
    for op in elementwise:
        assert summaries[op]["series"] == ["bfloat16", "float16", "float32", "float32 misaligned",
                                           "float32 odd sizes"], op
        assert summaries[op]["roofs"] == ["copy"], op
    assert summaries["gemm"]["roofs"] == ["eager"] and summaries["moe"]["roofs"] == ["dense_bound"]
    assert {"bfloat16", "float16", "float64", "int32", "int64"} <= set(summaries["bitonic_sort"]["series"])
    assert any("misaligned" in s for s in summaries["normalize_volume"]["series"])
    assert any("misaligned" in s for s in summaries["rgb_to_gray"]["series"])
    moe_targets = dict(summaries["moe"]["targets"])
    assert "E=8 top-2 and E=64 top-8 (T=4096, bfloat16): >= 0.8x the dense-GEMM bound" in moe_targets


def test_generated_bench_files_declare_a_sweep_that_walks_through(project):
    add_skeleton_ops(project)
    opgen(project, "new", "row_norm", "--kind", "rowwise")
    ops = sorted([*SKELETON_OPS, "row_norm"])  # the blank ones from their bench_<op>.py, the declared ones from their SPEC
    assert sorted(p.stem[len("bench_"):] for p in (project / "benchmarks").glob("bench_*.py")) == ["my_blank", "two_outs"]
    summaries = dry_run(project, "my_ops", ops)
    for op, summary in summaries.items():
        check_dry_run(op, summary)
    assert summaries["gelu_approx"]["series"] == ["bfloat16", "float16", "float32", "float32 misaligned",
                                                  "float32 odd sizes"]
    assert summaries["gelu_approx"]["size_label"] == "elements"
    assert summaries["row_sumsq"]["series"] == ["bfloat16", "float16", "float32", "float32 odd rows"]
    assert summaries["row_sumsq"]["size_label"].startswith("row length")
    assert summaries["row_norm"]["series"] == ["bfloat16", "float16", "float32", "float32 odd rows"]
    assert summaries["row_norm"]["size_label"].startswith("row length")
    # The row-wise kind's bandwidth target, on bfloat16 rows of 1024 elements and up (timed alike here: met).
    assert dict(summaries["row_norm"]["targets"])["bfloat16, size >= 1024: >= 90% of copy bandwidth"] == "met"
    assert summaries["my_blank"]["series"] == ["float32"]
    assert summaries["fma3"]["series"] == summaries["add_into"]["series"] == summaries["gelu_approx"]["series"]
