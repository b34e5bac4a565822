"""The four ways to build the ops (load_inline, load of the op files, the installed `_C`, CMake) and
a torch.compile'd model of several ops: each script in scripts/ runs in a fresh process and prints
its OK line. The first two compile C++ (CPU only unless a GPU is present) into a temporary
TORCH_EXTENSIONS_DIR, CMake every op into a temporary build folder, so they take a minute or more each."""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

PROJECT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 1800  # cold C++/CUDA builds on a small machine


@pytest.fixture(scope="module")
def extensions_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("torch_extensions")


def script_env(extensions_dir: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "OPGEN_JIT"}
    env["TORCH_EXTENSIONS_DIR"] = str(extensions_dir)
    # A fresh torch.compile cache: one made with an earlier build of the ops (another autograd formula,
    # say) was reused here once, calling a backward op with its old arguments.
    env["TORCHINDUCTOR_CACHE_DIR"] = str(extensions_dir / "inductor")
    if not torch.cuda.is_available():
        env["OPGEN_CPU_ONLY"] = "1"  # no GPU to run CUDA kernels on: don't spend minutes compiling them
    return env


def run_script(name: str, env: dict, *args: str) -> str:
    result = subprocess.run([sys.executable, f"scripts/{name}.py", *args], cwd=PROJECT, env=env, capture_output=True,
                            text=True, timeout=TIMEOUT_S)
    assert result.returncode == 0, f"scripts/{name}.py failed:\n{result.stdout}\n{result.stderr[-5000:]}"
    return result.stdout


@functools.cache
def installed_extension_error() -> str | None:
    """Why opgen_examples._C cannot be imported (checked in a clean process), or None."""
    env = {k: v for k, v in os.environ.items() if k != "OPGEN_JIT"}
    env["OPGEN_LIBRARY"] = "0"  # the package's own `_C`, not a CMake build in build/cmake
    result = subprocess.run([sys.executable, "-c", "import opgen_examples._C"], cwd=PROJECT, env=env,
                            capture_output=True, text=True, timeout=300)
    return None if result.returncode == 0 else (result.stderr.strip().splitlines() or ["?"])[-1]


def requires_installed_extension() -> None:
    error = installed_extension_error()
    if error is not None:
        pytest.skip(f"opgen_examples._C is not built (pip install --no-build-isolation -e .): {error}")


def devices_line() -> str:
    return "cpu, cuda" if torch.cuda.is_available() else "cpu"


def test_load_inline(extensions_dir):
    out = run_script("build_load_inline", script_env(extensions_dir))
    assert f"OK build_load_inline: torch.ops.inline_demo.vector_add == a + b on {devices_line()} " in out, out


def test_load_files(extensions_dir):
    out = run_script("build_load_files", script_env(extensions_dir))
    assert "OK build_load_files: csrc/vector_add compiled by cpp_extension.load;" in out, out
    assert f"== a + b on {devices_line()} " in out, out


def test_installed(extensions_dir):
    requires_installed_extension()
    out = run_script("build_installed", script_env(extensions_dir))
    assert "OK build_installed: opgen_examples._C loaded;" in out, out
    assert f"PyTorch on {devices_line()} for vector_add, scale, fused_relu_scale, gelu_approx" in out, out


def test_cmake(extensions_dir):
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not installed")
    out = run_script("build_cmake", script_env(extensions_dir), str(extensions_dir / "cmake"))
    assert re.search(r"OK build_cmake: _C\.\S+\.so built by CMake \((CUDA|CPU-only), 13 ops, compile_commands", out), out
    assert f"match PyTorch and errors reach Python on {devices_line()}" in out, out


def test_compiled_model(extensions_dir):
    requires_installed_extension()
    out = run_script("compiled_model", script_env(extensions_dir))
    assert f"matches eager PyTorch, forward and backward, on {devices_line()}" in out, out
