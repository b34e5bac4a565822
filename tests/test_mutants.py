"""Mutation testing: each mutant in tests/mutants.py (a realistic bug in a CPU kernel of examples/ or of
a generated project) must be caught by the op's own tests.

For each mutant the project is copied to a scratch folder, the mutant applied there, only its ops
JIT-built (OPGEN_JIT, CPU only, a private TORCH_EXTENSIONS_DIR so no build is shared), and the op's
tests run: tests/test_<op>.py and the conformance suite filtered to the op, stopping at the first
failure. A mutant that does not compile is broken, not caught; one whose tests all pass survived, and
either fails here. Each (project, ops) is first run unmutated, and must pass, or every mutant of it
would look caught. The jobs run two at a time (a one-op build compiles one file on one core); the
end of the session lists each mutant with the test that caught it, and the wall time.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import REPO, copy_project, opgen
from mutants import EXAMPLES, GENERATED, GENERATED_OPS, MUTANTS, Edit, Mutant

PARALLEL_JOBS = 2
JOB_TIMEOUT_S = 1200
# Build outputs of a developer's checkout are not copied (a stale _C must not stand in for the JIT build).
NOT_COPIED = shutil.ignore_patterns("build", "*.so", "__pycache__", "*.egg-info", ".pytest_cache", ".hypothesis",
                                    "_build_info.json", ".git")
BASELINES = sorted({(m.project, m.ops) for m in MUTANTS})


def has_compiler() -> bool:
    return shutil.which(os.environ.get("CXX", "c++")) is not None  # what torch.utils.cpp_extension calls


needs_compiler = pytest.mark.skipif(not has_compiler(),
                                    reason="no C++ compiler (c++, or $CXX): the mutants cannot be built")


class StaleMutant(Exception):
    pass


def mutated(text: str, edits: list[Edit]) -> str:
    """text with each edit applied in turn; each find text must occur exactly once."""
    for edit in edits:
        count = text.count(edit.find)
        if count != 1:
            raise StaleMutant(f"{edit.path}: the text to find occurs {count} times (must be once), "
                              f"update the mutant in tests/mutants.py:\n{edit.find}")
        text = text.replace(edit.find, edit.replace)
    return text


def apply_edits(project: Path, edits: tuple[Edit, ...]) -> None:
    for path in dict.fromkeys(edit.path for edit in edits):
        file = project / path
        file.write_text(mutated(file.read_text(), [edit for edit in edits if edit.path == path]))


@dataclass(frozen=True)
class Job:
    name: str
    project: str  # EXAMPLES or GENERATED
    ops: tuple[str, ...]
    edits: tuple[Edit, ...] = ()


@dataclass(frozen=True)
class Outcome:
    built: bool
    passed: bool  # every selected test passed
    first_failure: str | None  # the id of the test that stopped the run
    summary: str  # pytest's closing line, or why there is none
    log: str
    seconds: float
    finished_at: float


def baseline_job(project: str, ops: tuple[str, ...]) -> Job:
    return Job(f"baseline {project}: {','.join(ops)}", project, ops)


def mutant_job(m: Mutant) -> Job:
    return Job(m.id, m.project, m.ops, m.edits)


def job_env(project: Path, ops: tuple[str, ...], extensions: Path) -> dict[str, str]:
    # One share of the cores per job: OpenMP threads that outnumber the cores spin against each other.
    threads = os.environ.get("OMP_NUM_THREADS") or str(max(1, (os.cpu_count() or 1) // PARALLEL_JOBS))
    # The copy's package first on the path, before any installed one (examples/ installed editable).
    path = os.pathsep.join(p for p in (str(project), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, "OPGEN_JIT": ",".join(ops), "OPGEN_CPU_ONLY": "1",
            "TORCH_EXTENSIONS_DIR": str(extensions), "MAX_JOBS": os.environ.get("MAX_JOBS", "2"),
            "OMP_NUM_THREADS": threads}


def built_from(project: Path, extensions: Path, ops: tuple[str, ...]) -> bool:
    """Whether each op's JIT library (<package>_jit_<op>.so, see the project's jit.py) was built, from
    the sources of `project` (its build.ninja names them)."""
    for op in ops:
        libraries = list(extensions.rglob(f"*_jit_{op}.so"))
        ninja = libraries[0].parent / "build.ninja" if libraries else None
        if ninja is None or not ninja.is_file() or str(project / "csrc") not in ninja.read_text():
            return False
    return True


def first_failure(output: str) -> str | None:
    """The test id of pytest's first FAILED/ERROR line (the short summary, -rfE), if any."""
    for line in output.splitlines():
        match = re.match(r"(?:FAILED|ERROR) (\S+::.+?)(?: - .*)?$", line)
        if match:
            return match.group(1)
    return None


# Left out of the runs (baselines and mutants alike): these bugs are in a kernel's math, which the
# comparisons with the reference catch. The > 2**31-element case is not about them and takes seconds
# and gigabytes an op; torch.compile, opcheck and AOTInductor check the glue, the same with or without
# a mutant, and took over half of a run's time.
NOT_IN_MUTANT_RUNS = "not 2_to_the_31 and not aoti and not compile and not opcheck"


def run_job(job: Job, source: Path, workdir: Path) -> Outcome:
    started = time.monotonic()
    project = workdir / "project"
    shutil.copytree(source, project, ignore=NOT_COPIED)
    apply_edits(project, job.edits)
    extensions = workdir / "torch_extensions"
    # An op's own tests, where it has them (a declared op's standard checks are all in the suite).
    tests = [f"tests/test_{op}.py" for op in job.ops if (project / f"tests/test_{op}.py").is_file()]
    tests += ["tests/test_opgen_conformance.py"]
    # Importing the package builds the ops (OPGEN_JIT): a compile error fails collection and leaves
    # no library, which makes a broken mutant, not a caught one.
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-rfE", *tests,
               "-k", f"({' or '.join(job.ops)}) and {NOT_IN_MUTANT_RUNS}"]
    run = subprocess.run(command, check=False, cwd=project, env=job_env(project, job.ops, extensions),
                         capture_output=True, text=True, timeout=JOB_TIMEOUT_S)
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else f"pytest exited {run.returncode}"
    return Outcome(built_from(project, extensions, job.ops), run.returncode == 0, first_failure(run.stdout), summary,
                   run.stdout + run.stderr, time.monotonic() - started, time.monotonic())


def generated_project(root: Path, template_repo: Path) -> Path:
    project = copy_project(template_repo, root / "my_ops")
    for op, args in GENERATED_OPS.items():
        opgen(project, "new", op, *args)
    return project


class MutationReport:
    """Prints, at the end of the session, each mutant with what caught it, and the wall time."""

    def __init__(self, started: float):
        self.started = started
        self.lines: list[str] = []
        self.finished_at = started

    def record(self, name: str, result: str, outcome: Outcome) -> None:
        line = f"{name}: {result} ({outcome.seconds:.0f} s)"
        print(line)
        self.lines.append(line)
        self.finished_at = max(self.finished_at, outcome.finished_at)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        terminalreporter.write_sep("-", "mutation testing")
        for line in self.lines:
            terminalreporter.write_line(line)
        terminalreporter.write_line(f"{len(self.lines)} runs, {PARALLEL_JOBS} at a time: "
                                    f"{self.finished_at - self.started:.0f} s wall")


def selected_jobs(items) -> list[Job]:
    """The jobs the selected tests of this module need: each mutant's, and its baseline's."""
    params = [item.callspec.params for item in items
              if item.path == Path(__file__) and "runs" in getattr(item, "fixturenames", ())]
    mutants = [p["mutant"] for p in params if "mutant" in p]
    baselines = {p["baseline"] for p in params if "baseline" in p} | {(m.project, m.ops) for m in mutants}
    return [baseline_job(*b) for b in sorted(baselines)] + [mutant_job(m) for m in mutants]


@pytest.fixture(scope="module")
def runs(request, tmp_path_factory, template_repo):
    """({job name: Future[Outcome]}, the report): the jobs of the selected tests, all submitted at once."""
    report = MutationReport(time.monotonic())
    request.config.pluginmanager.register(report, "opgen-mutation-report")
    jobs = selected_jobs(request.session.items)
    sources = {EXAMPLES: REPO / "examples"}
    if any(job.project == GENERATED for job in jobs):
        sources[GENERATED] = generated_project(tmp_path_factory.mktemp("generated"), template_repo)
    scratch = tmp_path_factory.mktemp("mutants")
    with ThreadPoolExecutor(PARALLEL_JOBS) as pool:
        futures = {job.name: pool.submit(run_job, job, sources[job.project], scratch / re.sub(r"\W+", "_", job.name))
                   for job in jobs}
        yield futures, report
        for future in futures.values():
            future.cancel()


def log_tail(outcome: Outcome) -> str:
    return outcome.log[-6000:]


@pytest.mark.parametrize("mutant", [m for m in MUTANTS if m.project == EXAMPLES], ids=lambda m: m.id)
def test_examples_mutant_applies_to_the_current_sources(mutant: Mutant):
    """A stale mutant of examples/ (its text changed or gone) fails here, naming the file, without a
    build; a generated project's mutants are checked as they are applied."""
    for path in dict.fromkeys(edit.path for edit in mutant.edits):
        text = (REPO / EXAMPLES / path).read_text()
        assert mutated(text, [edit for edit in mutant.edits if edit.path == path]) != text


def baseline_verdict(outcome: Outcome) -> tuple[bool, str]:
    if not outcome.built:
        return False, "does not build"
    if not outcome.passed:
        return False, f"FAILS, first {outcome.first_failure} ({outcome.summary})"
    return True, f"passes ({outcome.summary})"


def mutant_verdict(outcome: Outcome) -> tuple[bool, str]:
    """(caught, what to report): caught means it built and a test failed."""
    if not outcome.built:
        return False, "BROKEN: does not compile"
    if outcome.passed:
        return False, f"SURVIVED ({outcome.summary})"
    if not outcome.first_failure:
        return False, f"BROKEN: the run failed without a failing test ({outcome.summary})"
    return True, f"caught by {outcome.first_failure}"


@pytest.mark.slow
@needs_compiler
@pytest.mark.parametrize("baseline", BASELINES, ids=lambda b: f"{b[0]}-{'-'.join(b[1])}")
def test_unmutated_baseline_passes(baseline, runs):
    futures, report = runs
    job = baseline_job(*baseline)
    outcome = futures[job.name].result()
    ok, verdict = baseline_verdict(outcome)
    report.record(job.name, verdict, outcome)
    assert ok, f"{job.name} {verdict}: every mutant of it would look caught\n{log_tail(outcome)}"


@pytest.mark.slow
@needs_compiler
@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.id)
def test_mutant_is_caught(mutant: Mutant, runs):
    futures, report = runs
    baseline = futures[baseline_job(mutant.project, mutant.ops).name].result()
    assert baseline_verdict(baseline)[0], f"{mutant.id}: cannot judge, the unmutated {','.join(mutant.ops)} fails"
    try:
        outcome = futures[mutant.id].result()
    except StaleMutant as error:
        pytest.fail(f"stale mutant {mutant.id}: {error}")
    caught, verdict = mutant_verdict(outcome)
    report.record(f"{mutant.id} [{mutant.bug}]", verdict, outcome)
    assert caught, f"mutant {mutant.id} ({mutant.bug}): {verdict}\n{log_tail(outcome)}"
