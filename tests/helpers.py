"""Helpers for the tests: template snapshots, copier runs, opgen runs, project builds."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OPGEN = [sys.executable, "-m", "opgen"]


# The ops a test project gets: one of each kind, and three written from schemas (several inputs and
# a scalar with an out= twin, an op writing into its first argument, a blank op with optional input
# and two results).
SKELETON_OPS = {
    "gelu_approx": ["--kind", "elementwise"],
    "row_sumsq": ["--kind", "reduction"],
    "my_blank": ["--kind", "blank"],
    "fma3": ["--schema", "(Tensor a, Tensor b, Tensor c, float alpha=0.5) -> Tensor", "--with-out"],
    "add_into": ["--schema", "(Tensor! out, Tensor a, Tensor b) -> ()"],  # vLLM's order and spelling
    "two_outs": ["--kind", "blank", "--schema", "(Tensor x, Tensor? w=None, *, float eps=1e-5) -> (Tensor, Tensor)"],
}


def add_skeleton_ops(project: Path, only: tuple[str, ...] | None = None) -> None:
    for op, args in SKELETON_OPS.items():
        if only is None or op in only:
            opgen(project, "new", op, *args)


WHEEL_PACKAGE = "wheel_ops"


def build_wheel(tmp_path_factory, template_repo: Path, torch_api: str,
                ops: tuple[str, ...] | None = None) -> tuple[Path, Path]:
    """A project (package WHEEL_PACKAGE) with the skeleton ops (or those named), and its CPU-only wheel."""
    root = tmp_path_factory.mktemp(f"wheel-{torch_api}")
    project = copy_project(template_repo, root / "project", project_name="wheel-ops", package_name=WHEEL_PACKAGE,
                           torch_api=torch_api)
    add_skeleton_ops(project, ops)
    run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w", str(root / "dist"),
         str(project)], cwd=project, env={"OPGEN_CPU_ONLY": "1", "MAX_JOBS": os.environ.get("MAX_JOBS", "2")})
    (wheel,) = (root / "dist").glob("*.whl")
    return project, wheel


def install_apart(python: str, wheel: Path, project: Path, dest: Path) -> tuple[Path, dict]:
    """The wheel in a folder of its own (dest/site) and the project's tests beside it (not its sources):
    (dest, the environment that puts the wheel on sys.path)."""
    site = dest / "site"
    dest.mkdir(parents=True)
    run([python, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)], cwd=dest)
    shutil.copytree(project / "tests", dest / "tests")
    for name in ("pyproject.toml", "conftest.py"):  # pytest settings, --installed
        shutil.copy(project / name, dest / name)
    return dest, {"PYTHONPATH": str(site)}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def make_template_repo(dest: Path) -> Path:
    shutil.copy(REPO / "copier.yml", dest / "copier.yml")
    shutil.copytree(REPO / "template", dest / "template")
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "template v1")
    git(dest, "tag", "v1")
    return dest


def copy_project(template: Path, dest: Path, **answers) -> Path:
    import copier

    copier.run_copy(str(template), str(dest), data=answers, defaults=True, quiet=True, vcs_ref="HEAD")
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "generated")
    return dest


def opgen(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([*OPGEN, *args], cwd=cwd, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"opgen {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under root (but .git), with its content."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}


def run(cmd: list[str], cwd: Path, env: dict | None = None, timeout: int = 3600) -> subprocess.CompletedProcess:
    result = subprocess.run(cmd, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True,
                            timeout=timeout)
    if result.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stdout[-8000:]}\n{result.stderr[-8000:]}")
    return result


def pip_install_editable(project: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "-v", "-e", str(project)],
               cwd=project, env=env)


def pytest_counts(output: str) -> dict[str, int]:
    """{'passed': N, 'failed': N, 'skipped': N, ...} from pytest's closing line."""
    tail = output.strip().splitlines()[-1] if output.strip() else ""
    return {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)", tail)}


# Which tests with a skip condition (a skipif or skip mark) may skip for a reason, by node id:
# any for want of a GPU; the device-guard tests for want of a second GPU; the tests past 2**31
# elements for want of GPU memory; the grouped-GEMM test for want of a Hopper GPU.
ANY_TEST = r""
TWO_GPU_TESTS = r"::test_runs_on_the_inputs_device\[|device_guard"
BIG_MEMORY_TESTS = r"2_to_the_31|two_to_the_31"
HOPPER_TESTS = r"grouped_gemm"
TAGS_TESTS = r"::test_registered_tags_match_the_declaration\["
# The suites of ports, mutants, CMake builds and upgraded projects leave out the AOTInductor check
# (one package of all a project's ops, 10-20 s on a CPU): what it tests is the Python glue, the same
# for every op of a kind and every build mode, which fresh projects (pip builds, wheels under other
# torches) and examples/ check.
NOT_AOTI = ("-k", "not aoti")
# A conformance check that applies to no op of the project (the out= checks where no op has out=,
# say) gets no case, which pytest skips; test_matches_reference applies to every op, so an empty one
# means the suite found no op.
EMPTY_CHECKS = r"test_opgen_conformance\.py::(?!test_matches_reference\[)\w+\[NOTSET"


@dataclass(frozen=True)
class ExpectedSkip:
    """A skip reason (a regex) a run may give, to at most as many tests as `tests` (a regex) matches
    among the collected tests that carry a skip condition."""

    reason: str
    tests: str


def expected_skips(python: str = sys.executable) -> list[ExpectedSkip]:
    """The skips a project's tests may take here, with the GPUs `python`'s torch sees."""
    return expected_skips_with(*cuda_devices(python))


def expected_skips_with(gpus: int, major: int) -> list[ExpectedSkip]:
    """The skips of a machine with `gpus` GPUs, the first of compute capability `major`.x."""
    empty_checks = ExpectedSkip(r"^got empty parameter set for", EMPTY_CHECKS)
    # (under a torch older than 2.12, which the stable wheel's tests run on too)
    no_tags = ExpectedSkip(r"^torch \S+'s stable ABI registers no tags", TAGS_TESTS)
    big_memory = ExpectedSkip(r"^needs (a CUDA device with [\d.]+ GiB$|[\d.]+ GiB of (cpu|cuda) memory)",
                              BIG_MEMORY_TESTS)
    two_gpus = ExpectedSkip(r"^fewer than 2 CUDA devices", TWO_GPU_TESTS)
    if gpus == 0:  # every CUDA test skips; the reason each gives depends on its marks
        return [ExpectedSkip(r"^no CUDA device here", ANY_TEST), two_gpus, big_memory, empty_checks, no_tags]
    skips = [big_memory, empty_checks, no_tags]  # the tests themselves compare the GiB they need with the GPU's
    if gpus < 2:
        skips.append(two_gpus)
    if major != 9:
        skips.append(ExpectedSkip(r"^the grouped-GEMM path is for Hopper", HOPPER_TESTS))
    return skips


def cuda_devices(python: str) -> tuple[int, int]:
    """(GPUs, the first one's compute capability major) as `python`'s torch sees them."""
    code = ("import torch\n"
            "n = torch.cuda.device_count() if torch.cuda.is_available() else 0\n"
            "print(n, torch.cuda.get_device_capability(0)[0] if n else 0)\n")
    gpus, major = run([python, "-c", code], cwd=Path.cwd()).stdout.split()
    return int(gpus), int(major)


def skip_reasons(output: str) -> Counter[str]:
    """{reason: tests} from the `SKIPPED [N] path:line: reason` lines that pytest -rs prints."""
    reasons: Counter[str] = Counter()
    for n, reason in re.findall(r"^SKIPPED \[(\d+)\] [^:\n]+:\d+: (.*)$", output, re.MULTILINE):
        reasons[reason.strip()] += int(n)
    return reasons


def check_pytest_run(output: str, collected: list[str], conditional: list[str], expected: list[ExpectedSkip]) -> None:
    """A project's `pytest -rs` run is sound: nothing failed; every skip gives an expected reason, for
    no more tests than the `conditional` ones (those with a skip condition) it is for; and every
    collected test that no expected skip is for passed."""
    counts, reasons = pytest_counts(output), skip_reasons(output)
    problems = [f"{counts[word]} {word}" for word in ("failed", "error", "errors") if counts.get(word)]
    if sum(reasons.values()) != counts.get("skipped", 0):
        problems.append(f"{counts.get('skipped', 0)} skipped, but {sum(reasons.values())} in SKIPPED lines (-rs)")
    for reason, n in reasons.items():
        if not any(re.search(skip.reason, reason) for skip in expected):
            problems.append(f"{n} skipped for an unexpected reason: {reason}")
    for skip in expected:
        taken = sum(n for reason, n in reasons.items() if re.search(skip.reason, reason))
        bound = sum(1 for test in conditional if re.search(skip.tests, test))
        if taken > bound:
            problems.append(f"{taken} skipped for {skip.reason!r}, but only {bound} collected tests may be")
    may_skip = [test for test in conditional if any(re.search(skip.tests, test) for skip in expected)]
    floor = len(collected) - len(may_skip)
    if counts.get("passed", 0) < floor:
        problems.append(f"{counts.get('passed', 0)} passed, fewer than the {floor} collected tests that "
                        "no expected skip is for")
    assert not problems, "\n".join(problems) + "\n" + output[-6000:]


def common_program_lines(source: Path, tmp_path: Path, *flags: str) -> list[list[str]]:
    """Compiles the C++ program `source` against examples/' csrc/common (plain C++, warnings as errors),
    runs it, and gives its output's lines split into words."""
    binary = tmp_path / source.stem
    subprocess.run(["c++", "-std=c++17", *flags, "-Wall", "-Werror", f"-I{REPO / 'examples' / 'csrc'}", str(source),
                    "-o", str(binary)], check=True, capture_output=True, text=True)
    output = subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout
    return [line.split() for line in output.splitlines()]


def load_module(path: Path, name: str):
    """The Python file at `path` imported as module `name` (a generated project's _build.py, say)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


PLUGINS = Path(__file__).resolve().parent / "plugins"


def run_collecting(pytest: list[str], cwd: Path, env: dict | None = None) -> tuple[str, list[str], list[str]]:
    """Runs the pytest command `pytest` with -rs: (its output, the node ids it collected, those of them
    with a skip condition: skipif marks, requires_cuda and the like, on them or their parameters, and
    skip marks, pytest's for an empty parameter set, say), read by plugins/collection_report.py."""
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "collected.json"
        path = os.pathsep.join(filter(None, [str(PLUGINS), (env or {}).get("PYTHONPATH", os.environ.get("PYTHONPATH"))]))
        env = {**(env or {}), "OPGEN_COLLECTION_REPORT": str(report), "PYTHONPATH": path}
        command = [*pytest[:3], "-p", "collection_report", *pytest[3:], "-rs"]
        output = run(command, cwd=cwd, env=env).stdout
        found = json.loads(report.read_text())
    return output, found["collected"], found["conditional"]


def run_project_tests(cwd: Path, *args: str, python: str = sys.executable, env: dict | None = None) -> str:
    """Runs a project's pytest (args: what to run) and checks the run against its collection and
    this machine's expected skips; prints the closing line and the skips by reason, returns the line."""
    pytest = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    output, collected, conditional = run_collecting(pytest, cwd, env)
    check_pytest_run(output, collected, conditional, expected_skips(python))
    closing = output.strip().splitlines()[-1]
    print(f"{closing} of {len(collected)} collected ({len(conditional)} with a skip condition); "
          f"skipped by reason: {dict(skip_reasons(output))}")
    return closing


def cuda_build_expected() -> bool:
    """Whether a generated project builds its .cu files here (torch with CUDA + a CUDA toolkit)."""
    import torch

    toolkit = os.environ.get("CUDA_HOME") or shutil.which("nvcc") or Path("/usr/local/cuda/bin/nvcc").is_file()
    return torch.version.cuda is not None and os.environ.get("OPGEN_CPU_ONLY", "0") in ("", "0") and bool(toolkit)
