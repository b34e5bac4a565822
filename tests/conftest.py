"""Fixtures: a committed snapshot of the template (copier needs git), and generated projects."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from helpers import git, make_template_repo  # noqa: E402

# Other packages' test files, run inside the projects they are ported to (tests/activation_port.py), not here.
collect_ignore = ["upstream"]


@pytest.fixture(scope="session", autouse=True)
def copier_settings_without_trust(tmp_path_factory):
    """copier reads no user settings here: a `trust` list there would hide a template that needs
    `--trust`, which this one must not (it runs no tasks, migrations or Jinja extensions)."""
    settings = tmp_path_factory.mktemp("copier-settings") / "settings.yml"
    settings.write_text("{}\n")
    patch = pytest.MonkeyPatch()
    patch.setenv("COPIER_SETTINGS_PATH", str(settings))
    yield settings
    patch.undo()


@pytest.fixture(scope="session")
def template_repo(tmp_path_factory) -> Path:
    """copier.yml + template/ of this checkout, committed and tagged v1 in a scratch git repo."""
    return make_template_repo(tmp_path_factory.mktemp("template-repo"))


@pytest.fixture
def project(tmp_path, template_repo) -> Path:
    """A freshly generated project with default answers, committed to git."""
    from helpers import copy_project

    return copy_project(template_repo, tmp_path / "my_ops")


@pytest.fixture(scope="session")
def stable_cpu_wheel(tmp_path_factory, template_repo) -> tuple[Path, Path]:
    """(project, wheel): a `stable` project with the skeleton ops and its CPU-only abi3 wheel, built once."""
    from helpers import build_wheel

    return build_wheel(tmp_path_factory, template_repo, "stable")


@pytest.fixture(scope="session")
def variants_build(tmp_path_factory, template_repo):
    """A stable project with one element-wise op, and what `python <package>/_variants.py` made of it
    here: (project, dist folder, the command's log). Shared by tests/test_variants.py and
    tests/test_kernels_layout.py, so the variants are built once."""
    from helpers import copy_project, opgen, run

    root = tmp_path_factory.mktemp("variants")
    project = copy_project(template_repo, root / "var_ops", project_name="var-ops", package_name="var_ops")
    opgen(project, "new", "gelu_approx", "--kind", "elementwise")
    env = {"MAX_JOBS": os.environ.get("MAX_JOBS", "2"), "TORCH_CUDA_ARCH_LIST": "9.0"}
    result = run([sys.executable, "var_ops/_variants.py", "--out", str(root / "dist")], cwd=project, env=env)
    return project, root / "dist", result.stdout + result.stderr


def pytest_report_header(config):
    import torch

    nvcc = shutil.which("nvcc")
    return f"torch {torch.__version__} (CUDA {torch.version.cuda}), nvcc {nvcc}, GPU {torch.cuda.is_available()}"


__all__ = ["git", "subprocess"]
