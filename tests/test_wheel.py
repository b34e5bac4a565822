"""Wheels across torch versions: a `stable` project's wheel, built against this venv's torch, is one
abi3 wheel that installs and passes the project's own tests under other torch versions; an `aten`
project's wheel refuses them at import with what to do.

The other torches are Python interpreters named in OPGEN_OTHER_TORCH_PYTHONS (os.pathsep-separated;
.ci/run sets it to venvs with torch 2.13 CPU and torch 2.10). The wheels are built CPU-only, since a
CPU-only torch cannot load CUDA kernels; the GPU machine runs a CUDA wheel under its own torch.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import WHEEL_PACKAGE as PACKAGE
from helpers import build_wheel, install_apart, run, run_project_tests

pytestmark = pytest.mark.slow


def other_torch_pythons() -> list[str]:
    return [p for p in os.environ.get("OPGEN_OTHER_TORCH_PYTHONS", "").split(os.pathsep) if p]


def torch_version(python: str) -> str:
    return run([python, "-c", "import torch; print(torch.__version__)"], cwd=Path.cwd()).stdout.strip()


@pytest.fixture(scope="session")  # session: it skips before the session-scoped wheel is built
def others():
    pythons = other_torch_pythons()
    if not pythons:
        pytest.skip("OPGEN_OTHER_TORCH_PYTHONS names no interpreter with another torch (.ci/run sets it)")
    import torch

    versions = {python: torch_version(python) for python in pythons}
    assert torch.__version__ not in versions.values(), "the other interpreters must run another torch"
    return versions


def test_stable_wheel_is_abi3_and_passes_its_tests_under_other_torches(others, stable_cpu_wheel, tmp_path):
    project, wheel = stable_cpu_wheel
    assert wheel.name.endswith("-0.1.0+cpu-cp310-abi3-linux_x86_64.whl"), wheel.name  # the variant labels the version
    for n, (python, version) in enumerate(others.items()):
        where, env = install_apart(python, wheel, project, tmp_path / f"torch{n}")
        print(f"torch {version}:", end=" ")
        run_project_tests(where, "tests", "--installed", python=python, env=env)


def test_aten_wheel_refuses_another_torch_with_what_to_do(tmp_path_factory, template_repo, others, tmp_path):
    import torch

    # One op: the refusal comes from loading the extension, whatever it holds.
    project, wheel = build_wheel(tmp_path_factory, template_repo, "aten", ops=("gelu_approx",))
    assert "abi3" not in wheel.name and "-0.1.0+cpu.torch" in wheel.name
    python, version = next(iter(others.items()))
    where, env = install_apart(python, wheel, project, tmp_path / "torch")
    code = f"try:\n    import {PACKAGE}\nexcept ImportError as e:\n    print(e)\n"
    message = run([python, "-c", code], cwd=where, env=env).stdout
    built = torch.__version__.split("+")[0]
    assert f"was built with torch {built}" in message and f"this is torch {version}" in message, message
    assert "pip install --no-build-isolation -e ." in message
