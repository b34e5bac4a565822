"""`python <package>/_variants.py`: one command builds a wheel of every variant this machine can build
(CPU-only, and one per CUDA major version with a toolkit here), each named by its variant as a PEP 440
local version label (0.1.0+cpu, 0.1.0+cu13) and saying so in its _build_info.json.

CUDA 12 cannot be built here: PyPI's nvidia-cuda-nvcc-cu12 wheels hold ptxas, not nvcc, and the
suite's torch is a CUDA 13 build (its cpp_extension refuses another CUDA major's nvcc). A stand-in
CUDA 12 toolkit checks that the listing finds it and says why it is skipped.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from helpers import copy_project, cuda_build_expected, load_module, run


def fake_toolkit(root: Path, version: str) -> Path:
    """A folder that looks like a CUDA toolkit whose nvcc says `version`."""
    (root / "bin").mkdir(parents=True)
    (root / "include").mkdir()
    (root / "include" / "cuda_runtime.h").write_text("")
    nvcc = root / "bin" / "nvcc"
    nvcc.write_text(f'#!/bin/sh\necho "Cuda compilation tools, release {version}, V{version}.0"\n')
    nvcc.chmod(0o755)
    return root


def torch_cuda_major() -> int | None:
    import torch

    return int(torch.version.cuda.split(".")[0]) if torch.version.cuda else None


def test_list_finds_each_cuda_major_and_says_why_one_is_skipped(project, tmp_path):
    toolkit = fake_toolkit(tmp_path / "cuda-12.9", "12.9")
    listing = run([sys.executable, "my_ops/_variants.py", "--list"], cwd=project, env={"CUDA_HOME": str(toolkit)}).stdout
    lines = {line.split()[0]: line for line in listing.splitlines()}
    assert lines["cpu"].split()[1] == "builds"
    assert f"nvcc 12.9 in {toolkit}" in lines["cu12"]
    if torch_cuda_major() is None:
        assert "has no CUDA" in lines["cu12"]
    else:
        assert "skipped: torch" in lines["cu12"] and "refuses nvcc 12.9" in lines["cu12"], lines["cu12"]
        assert "download.pytorch.org/whl/cu12" in lines["cu12"]
    if cuda_build_expected() and torch_cuda_major() == 13:
        assert lines["cu13"].split()[1] == "builds", listing
    # Asked for, a variant that cannot be built here is an error that says why.
    refused = subprocess.run([sys.executable, "my_ops/_variants.py", "--variants", "cu12"], cwd=project,
                             env={**os.environ, "CUDA_HOME": str(toolkit)}, capture_output=True, text=True)
    assert refused.returncode != 0 and "cannot build cu12: torch" in refused.stderr


@pytest.mark.parametrize("torch_api", ["stable", "aten"])
def test_version_labels_and_kernels_variant_names(tmp_path, template_repo, torch_api):
    project = copy_project(template_repo, tmp_path / "p", torch_api=torch_api)
    build = load_module(project / "my_ops" / "_build.py", f"labels_build_{torch_api}")
    assert (build.variant_name(None), build.variant_name("13.0"), build.variant_name("12.9")) == ("cpu", "cu13", "cu12")
    tail = "" if torch_api == "stable" else ".torch215"
    assert build.local_version(None, "2.15.0+cu130") == "cpu" + tail
    assert build.local_version("13.0", "2.15.0+cu130") == "cu13" + tail
    variants = load_module(project / "my_ops" / "_variants.py", f"labels_variants_{torch_api}")
    assert variants.kernel_name() == "my-ops"
    stable = {"runs_on_torch": ">=2.10", "built_with_torch": "2.15.0", "cuda": "13.0"}
    assert variants.kernels_variant_dir(stable) == "torch-stable-abi210-cu130-x86_64-linux"
    aten = {"runs_on_torch": "==2.15.0", "built_with_torch": "2.15.0", "cuda": None}
    assert variants.kernels_variant_dir(aten) == "torch215-cxx11-cpu-x86_64-linux"


def wheel_text(wheel: Path, suffix: str) -> str:
    with zipfile.ZipFile(wheel) as archive:
        return archive.read(next(n for n in archive.namelist() if n.endswith(suffix))).decode()


@pytest.mark.slow
def test_one_command_builds_every_variant_with_names_of_their_own(variants_build):
    project, dist, log = variants_build
    expected = {"cpu": None} | ({"cu13": "13.0"} if cuda_build_expected() and torch_cuda_major() == 13 else {})
    wheels = {w.name: w for w in dist.glob("*.whl")}
    assert sorted(wheels) == sorted(f"var_ops-0.1.0+{v}-cp310-abi3-linux_x86_64.whl" for v in expected), log[-3000:]
    for variant, cuda in expected.items():
        wheel = wheels[f"var_ops-0.1.0+{variant}-cp310-abi3-linux_x86_64.whl"]
        info = json.loads(wheel_text(wheel, "var_ops/_build_info.json"))
        assert info["variant"] == variant and info["runs_on_torch"] == ">=2.10"
        if cuda:  # the toolkit's nvcc, not torch.version.cuda
            assert info["cuda"] is not None and info["cuda"].split(".")[0] == cuda.split(".")[0]
            assert info["cuda_arch_list"] == "9.0"
        else:
            assert info["cuda"] is None
        metadata = wheel_text(wheel, ".dist-info/METADATA")
        assert f"Version: 0.1.0+{variant}\n" in metadata and "Requires-Dist: torch>=2.10" in metadata
        print(wheel.name, {k: info[k] for k in ("variant", "cuda", "runs_on_torch")})
    # The project's own build info (an editable install's) is not left behind by the wheels' builds.
    assert not (project / "var_ops" / "_build_info.json").exists()
