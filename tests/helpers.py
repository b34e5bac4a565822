"""Helpers for the tests: template snapshots, copier runs, opgen runs, project builds."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OPGEN = [sys.executable, "-m", "opgen"]


# The ops a test project gets: one of each kind, and three written from schemas (several inputs and
# a scalar with an out= twin, an op writing into its output, a blank op with optional input and two
# results).
SKELETON_OPS = {
    "gelu_approx": ["--kind", "elementwise"],
    "row_sumsq": ["--kind", "reduction"],
    "my_blank": ["--kind", "blank"],
    "fma3": ["--schema", "(Tensor a, Tensor b, Tensor c, float alpha=0.5) -> Tensor", "--with-out"],
    "add_into": ["--schema", "(Tensor a, Tensor b, Tensor(a!) out) -> ()"],
    "two_outs": ["--kind", "blank", "--schema", "(Tensor x, Tensor? w=None, *, float eps=1e-5) -> (Tensor, Tensor)"],
}


def add_skeleton_ops(project: Path) -> None:
    for op, args in SKELETON_OPS.items():
        opgen(project, "new", op, *args)


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


def cuda_build_expected() -> bool:
    """Whether a generated project builds its .cu files here (torch with CUDA + a CUDA toolkit)."""
    import torch

    toolkit = os.environ.get("CUDA_HOME") or shutil.which("nvcc") or Path("/usr/local/cuda/bin/nvcc").is_file()
    return torch.version.cuda is not None and os.environ.get("OPGEN_CPU_ONLY", "0") in ("", "0") and bool(toolkit)
