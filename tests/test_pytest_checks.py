"""check_pytest_run, which judges a generated project's (or examples') pytest run: it must fail a run
where CPU tests skipped, whatever reason they give, and pass one where only the CUDA tests did."""
from __future__ import annotations

import sys

import pytest

from helpers import REPO, check_pytest_run, expected_skips_with, run_collecting, skip_reasons

NO_GPU = expected_skips_with(gpus=0, major=0)
ONE_HOPPER = expected_skips_with(gpus=1, major=9)
NO_CUDA = "no CUDA device here: CUDA kernels are tested on a GPU machine"
ONE_GPU = "fewer than 2 CUDA devices here: device-guard tests run on a multi-GPU machine"
CONFORMANCE = "tests/test_opgen_conformance.py"
OPS = ["gelu_approx", "row_sumsq", "fma3"]


def conformance_ids(device: str) -> list[str]:
    """A conformance suite's node ids on one device (a few checks of three ops)."""
    checks = ["test_matches_reference", "test_gradcheck", "test_opcheck", "test_layouts"]
    return [f"{CONFORMANCE}::{check}[{op}-{device}-float32]" for check in checks for op in OPS]


CPU_TESTS = conformance_ids("cpu") + ["tests/test_opgen_package.py::test_imports"]
# The tests with a skip condition (the CUDA cases, the device-guard and the past-2**31 tests).
CONDITIONAL = (conformance_ids("cuda")
               + [f"{CONFORMANCE}::test_runs_on_the_inputs_device[{op}-cuda-float32]" for op in OPS]
               + [f"{CONFORMANCE}::test_more_than_2_to_the_31_elements[{op}-cuda-float16]" for op in OPS])
COLLECTED = CPU_TESTS + CONDITIONAL
CPU_CASES = len(conformance_ids("cpu"))


def check(output: str, expected: list) -> None:
    check_pytest_run(output, COLLECTED, CONDITIONAL, expected)


def pytest_output(passed: int, skips: dict[str, int], failed: int = 0, reason_lines: bool = True) -> str:
    """What `pytest -q -rs` prints: progress, the SKIPPED lines, the closing line."""
    lines = ["." * passed + "s" * sum(skips.values()) + "F" * failed + "    [100%]",
             "=========================== short test summary info ============================"]
    if reason_lines:
        lines += [f"SKIPPED [{n}] {CONFORMANCE}:{100 + i}: {reason}" for i, (reason, n) in enumerate(skips.items())]
    lines += [f"FAILED {CONFORMANCE}::test_opcheck[fma3-cpu-float32] - AssertionError"] * failed
    skipped = sum(skips.values())
    counts = [f"{failed} failed"] * bool(failed) + [f"{passed} passed"] + [f"{skipped} skipped"] * bool(skipped)
    return "\n".join(lines + [f"{', '.join(counts)} in 12.34s"]) + "\n"


def test_a_cpu_run_where_only_the_cuda_tests_skip_passes():
    skips = {NO_CUDA: len(CONDITIONAL) - 3, ONE_GPU: 3}  # the device-guard tests give the two-GPU reason
    check(pytest_output(len(CPU_TESTS), skips), NO_GPU)


def test_cpu_conformance_cases_skipped_for_another_reason_fail_naming_it():
    reason = "gen_ops._C is not built: pip install --no-build-isolation -e ."
    output = pytest_output(len(CPU_TESTS) - CPU_CASES, {NO_CUDA: len(CONDITIONAL), reason: CPU_CASES})
    with pytest.raises(AssertionError, match=f"{CPU_CASES} skipped for an unexpected reason: {reason}"):
        check(output, NO_GPU)


def test_cpu_conformance_cases_skipped_as_if_they_needed_cuda_fail():
    output = pytest_output(len(CPU_TESTS) - CPU_CASES, {NO_CUDA: len(CONDITIONAL) + CPU_CASES})
    with pytest.raises(AssertionError) as failure:
        check(output, NO_GPU)
    assert f"but only {len(CONDITIONAL)} collected tests may be" in str(failure.value)
    assert (f"{len(CPU_TESTS) - CPU_CASES} passed, fewer than the {len(CPU_TESTS)} collected tests that no "
            "expected skip is for") in str(failure.value)


def test_half_the_cpu_tests_missing_from_the_run_fail():
    """Collected but neither passed nor skipped (deselected, say): the floor comes from the collection."""
    with pytest.raises(AssertionError, match="passed, fewer than the"):
        check(pytest_output(len(CPU_TESTS) // 2, {NO_CUDA: len(CONDITIONAL)}), NO_GPU)


def test_skips_without_reason_lines_fail():
    with pytest.raises(AssertionError, match=r"but 0 in SKIPPED lines \(-rs\)"):
        check(pytest_output(len(CPU_TESTS), {NO_CUDA: len(CONDITIONAL)}, reason_lines=False), NO_GPU)


def test_a_failure_fails():
    with pytest.raises(AssertionError, match="1 failed"):
        check(pytest_output(len(CPU_TESTS) - 1, {NO_CUDA: len(CONDITIONAL)}, failed=1), NO_GPU)


def test_on_one_gpu_only_the_two_gpu_and_memory_skips_are_expected_for_their_tests():
    check(pytest_output(len(COLLECTED) - 5, {ONE_GPU: 3, "needs a CUDA device with 35 GiB": 2}), ONE_HOPPER)
    with pytest.raises(AssertionError, match=f"unexpected reason: {NO_CUDA}"):
        check(pytest_output(len(CPU_TESTS), {NO_CUDA: len(CONDITIONAL)}), ONE_HOPPER)
    # With a GPU, the CUDA tests must run: only the two-GPU and past-2**31 ones may be missing.
    with pytest.raises(AssertionError, match=f"fewer than the {len(COLLECTED) - 6} collected tests"):
        check(pytest_output(len(CPU_TESTS), {}), ONE_HOPPER)
    with pytest.raises(AssertionError, match="skipped for '\\^fewer than 2 CUDA devices', but only 3 collected"):
        check(pytest_output(len(CPU_TESTS), {ONE_GPU: len(CONDITIONAL)}), ONE_HOPPER)


def test_a_check_without_a_case_is_expected_but_not_a_suite_without_ops():
    """A conformance check that applies to no op here has no case (an empty parameter set, which pytest
    skips); test_matches_reference applies to every op: an empty one means the suite found no op."""
    empty = "got empty parameter set for (spec, device, dtype, shape)"
    layouts = ("contiguous", "strided")
    out_checks = [f"{CONFORMANCE}::test_writes_out_in_any_layout[NOTSET-{layout}]" for layout in layouts]
    check_pytest_run(pytest_output(len(CPU_TESTS), {NO_CUDA: len(CONDITIONAL), empty: 2}), COLLECTED + out_checks,
                     CONDITIONAL + out_checks, NO_GPU)
    no_ops = out_checks + [f"{CONFORMANCE}::test_matches_reference[NOTSET-{layout}]" for layout in layouts]
    with pytest.raises(AssertionError, match="4 skipped for '\\^got empty parameter set for', but only 2"):
        check_pytest_run(pytest_output(1, {empty: 4}), no_ops + CPU_TESTS[-1:], no_ops, NO_GPU)


def test_the_expected_reasons_are_the_templates():
    """The reasons above are the ones the generated tests give (a reworded reason must be re-expected)."""
    testing = (REPO / "template/tests/opgen_testing.py.jinja").read_text()
    assert f'reason="{NO_CUDA}"' in testing
    assert ONE_GPU.split(": ")[1] in testing and ONE_GPU.split(": ")[0] in testing
    assert 'reason=f"needs a CUDA device with {gib} GiB"' in testing


def test_real_pytest_skip_lines_are_read(tmp_path):
    (tmp_path / "test_some.py").write_text(
        "import pytest\n"
        f"cuda = pytest.mark.skipif(True, reason={NO_CUDA!r})\n"
        "@pytest.mark.parametrize('device', ['cpu', pytest.param('cuda', marks=cuda)])\n"
        "@pytest.mark.parametrize('n', [1, 2])\n"
        "def test_op(device, n):\n    pass\n"
        "@pytest.mark.skipif(True, reason='needs a CUDA device with 24 GiB')\n"
        "def test_offsets_past_two_to_the_31():\n    pass\n")
    pytest_run = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_some.py"]
    output, collected, conditional = run_collecting(pytest_run, tmp_path)
    assert len(collected) == 5 and len(conditional) == 3
    assert skip_reasons(output) == {NO_CUDA: 2, "needs a CUDA device with 24 GiB": 1}
    check_pytest_run(output, collected, conditional, NO_GPU)
