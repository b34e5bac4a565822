"""A build that cannot run on the torch it is imported under says why and what to install, before the
loader's bare error: each condition is fed to a generated project's checks (fake build info, torch
version, torch CUDA, loader message). Then an installed CPU wheel end to end: `python -m <package>`
lists its ops without pointing at sources it does not have, a build info that claims a CUDA this
torch lacks is refused on import, and `python -m pytest --installed` tests the wheel, not the sources.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from helpers import SKELETON_OPS, WHEEL_PACKAGE, copy_project, install_apart, run

PACKAGE = "err_ops"
STABLE_CPU = {"torch_api": "stable", "built_with_torch": "2.15.0", "runs_on_torch": ">=2.10", "cuda": None}
STABLE_CU13 = {**STABLE_CPU, "cuda": "13.0", "variant": "cu13"}
ATEN_CPU = {**STABLE_CPU, "torch_api": "aten", "runs_on_torch": "==2.15.0"}
NO_CUDART_13 = "libcudart.so.13: cannot open shared object file: No such file or directory"


@pytest.fixture(scope="module")
def ext(tmp_path_factory, template_repo) -> types.ModuleType:
    """A generated project's `_extension` module, loaded without the package's import (which loads `_C`)."""
    project = copy_project(template_repo, tmp_path_factory.mktemp("errors") / "project", project_name="err-ops")
    package = types.ModuleType(PACKAGE)
    package.__path__ = [str(project / PACKAGE)]
    sys.modules[PACKAGE] = package
    try:
        yield importlib.import_module(f"{PACKAGE}._extension")
    finally:
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


def test_a_build_for_another_cuda_major_is_named_before_loading(ext):
    assert ext.build_mismatch(STABLE_CU13, "2.10.0+cu128", "12.8") == (
        "err_ops._C cannot be loaded: it was built for CUDA 13 (it needs libcudart.so.13), but this torch is "
        "CUDA 12.8: install the cu12 build of err_ops, or a CUDA 13 torch"
    )
    # ... and by the loader's error where no build info said so.
    hint = ext.load_failure_hint(NO_CUDART_13, None, "12.8")
    assert hint.startswith("it was built for CUDA 13") and "install the cu12 build of err_ops" in hint, hint


def test_a_missing_cuda_runtime_of_torchs_own_major_says_how_to_get_it(ext):
    hint = ext.load_failure_hint(NO_CUDART_13, STABLE_CU13, "13.0")
    assert hint.startswith("the CUDA 13 runtime (libcudart.so.13) it needs was not found, though this torch is "
                           "CUDA 13.0: install it (pip install 'cuda-toolkit[cudart]==13.*'"), hint
    hint = ext.load_failure_hint(NO_CUDART_13.replace("13", "12"), None, "12.8")
    assert "pip install nvidia-cuda-runtime-cu12" in hint, hint
    hint = ext.load_failure_hint("libcuda.so.1: cannot open shared object file", STABLE_CU13, "13.0")
    assert hint.startswith("the NVIDIA driver (libcuda.so.1) was not found: install the driver"), hint


def test_a_torch_below_the_stable_floor_is_told_to_upgrade(ext):
    assert ext.build_mismatch(STABLE_CPU, "2.9.1+cpu", None) == (
        "err_ops is built on the torch stable ABI and needs torch >= 2.10; this is torch 2.9.1+cpu: upgrade torch "
        "(pip install 'torch>=2.10')"
    )
    assert ext.build_mismatch(STABLE_CPU, "2.10.0", "12.8") is None


def test_a_cuda_build_under_a_cpu_only_torch_names_both_ways_out(ext):
    expected = (
        "it was built with CUDA 13 kernels, but this torch has no CUDA: install a CUDA 13 torch, or the CPU build "
        "of err_ops (the `cpu` variant, or build it with OPGEN_CPU_ONLY=1)"
    )
    assert ext.build_mismatch(STABLE_CU13, "2.13.0+cpu", None) == f"err_ops._C cannot be loaded: {expected}"
    assert ext.load_failure_hint("libtorch_cuda.so: cannot open shared object file", STABLE_CU13, None) == expected
    assert ext.load_failure_hint(NO_CUDART_13, None, None) == expected


def test_an_aten_build_under_another_torch_is_told_to_rebuild(ext):
    assert ext.build_mismatch(ATEN_CPU, "2.13.0", None) == (
        "err_ops._C was built with torch 2.15.0 and uses the full ATen API, which ties a binary to one torch, but "
        f"this is torch 2.13.0: {ext.REBUILD}"
    )
    assert ext.build_mismatch(ATEN_CPU, "2.15.0+cu130", "13.0") is None


def test_a_build_that_fits_passes(ext):
    assert ext.build_mismatch(STABLE_CU13, "2.15.0+cu132", "13.2") is None  # the same CUDA major
    assert ext.build_mismatch(STABLE_CPU, "2.15.0+cu132", "13.2") is None  # CPU kernels under a CUDA torch


def test_check_build_reads_the_build_info_beside_the_library(ext, tmp_path):
    import torch

    info = tmp_path / "_build_info.json"
    info.write_text(json.dumps({**STABLE_CU13, "cuda": unmet_cuda()}))
    with pytest.raises(ImportError, match="this torch has no CUDA" if torch.version.cuda is None else "built for CUDA"):
        ext.check_build(info)
    info.write_text(json.dumps(STABLE_CPU))
    ext.check_build(info)


def unmet_cuda() -> str:
    """A CUDA version this torch cannot load kernels of: another major than its own, any if it has none."""
    import torch

    return "13.0" if torch.version.cuda is None else f"{int(torch.version.cuda.split('.')[0]) + 1}.0"


# A library built by a compiler that links libstdc++ statically (a wrapper set in CXX: seen on a GPU
# machine) loads, then crashes the process at its first C++ exception: refused first, with the cause.

SHARED_CPP = "#include <string>\nstd::string digits(int x) { return std::to_string(x); }\n"


@pytest.fixture(scope="module")
def libraries(tmp_path_factory) -> dict[str, Path]:
    """A C++ shared library built as usual ("shared") and with its own libstdc++ ("own")."""
    compiler = shutil.which("g++")
    if compiler is None:
        pytest.skip("no g++ here to build the libraries")
    folder = tmp_path_factory.mktemp("cxx-runtime")
    (folder / "digits.cpp").write_text(SHARED_CPP)
    built = {}
    for kind, flags in (("shared", []), ("own", ["-static-libstdc++"])):
        result = subprocess.run([compiler, "-shared", "-fPIC", *flags, "digits.cpp", "-o", f"{kind}.so"], cwd=folder,
                                capture_output=True, text=True)
        if result.returncode != 0:
            pytest.skip(f"g++ {' '.join(flags)} cannot build a shared library here: {result.stderr[-300:]}")
        built[kind] = folder / f"{kind}.so"
    return built


def test_the_cxx_runtime_a_library_needs_is_read_from_its_file(ext, libraries):
    elf = ext._elf
    assert any(name.startswith("libstdc++.so") for name in elf.needed_libraries(libraries["shared"]))
    assert not any(name.startswith("libstdc++.so") for name in elf.needed_libraries(libraries["own"]))
    assert "libc.so.6" in elf.needed_libraries(libraries["own"])  # the rest of its needs are read
    assert elf.carries_own_cxx_runtime(libraries["own"]) and not elf.carries_own_cxx_runtime(libraries["shared"])
    assert elf.needed_libraries(Path(ext.__file__)) is None  # not a library: nothing is said of it
    assert not elf.carries_own_cxx_runtime(Path(ext.__file__))


def test_a_library_with_its_own_cxx_runtime_is_refused_before_it_loads(ext, libraries, monkeypatch):
    with pytest.raises(ImportError) as refused:
        ext.check_cxx_runtime(libraries["own"], "the compiler that built it", "Rebuild it")
    message = str(refused.value)
    assert message.startswith(f"{libraries['own']} carries its own copy of the C++ runtime"), message
    assert message.endswith("Rebuild it with the system compiler: CC=gcc CXX=g++"), message
    ext.check_cxx_runtime(libraries["shared"], "the compiler that built it", "Rebuild it")
    # ... by the package's import, before `_C` is loaded (its file found without loading it).
    monkeypatch.delenv(ext.JIT_ENV, raising=False)
    monkeypatch.setenv(ext.LIBRARY_ENV, "0")
    monkeypatch.setattr(ext, "_package_library", lambda: str(libraries["own"]))
    with pytest.raises(ImportError, match="carries its own copy of the C\\+\\+ runtime.*pip install --no-build-isolation"):
        ext.load_extension()


def test_an_aoti_package_with_its_own_cxx_runtime_fails_the_check_by_name(ext, libraries, tmp_path):
    """The conformance suite's AOTInductor check reads the package's libraries before loading it: a
    crash there took down a pytest-xdist worker with no cause named ("node down")."""
    import zipfile

    spec = importlib.util.spec_from_file_location("opgen_testing_under_test",
                                                  Path(ext.__file__).parents[1] / "tests" / "opgen_testing.py")
    testing = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(testing)
    package = tmp_path / "ops.pt2"
    for kind in ("shared", "own"):
        with zipfile.ZipFile(package, "w") as archive:
            archive.write(libraries[kind], "ops/data/aotinductor/model/wrapper.so")
        if kind == "shared":
            testing._refuse_own_cxx_runtime(package)
            continue
        with pytest.raises(pytest.fail.Exception, match="wrapper.so carries its own copy of the C\\+\\+ runtime"):
            testing._refuse_own_cxx_runtime(package)


# An installed CPU wheel, end to end.

@pytest.fixture(scope="module")
def installed(stable_cpu_wheel, tmp_path_factory) -> tuple[Path, dict]:
    """(a folder with the project's tests but not its sources, the environment with the wheel on sys.path)."""
    project, wheel = stable_cpu_wheel
    return install_apart(sys.executable, wheel, project, tmp_path_factory.mktemp("installed") / "apart")


@pytest.mark.slow
def test_python_m_package_lists_an_installed_wheels_ops_and_no_source_hints(installed):
    where, env = installed
    out = run([sys.executable, "-m", WHEEL_PACKAGE], cwd=where, env=env).stdout
    assert "build: cpu, torch_api stable" in out and "runs on torch >=2.10" in out, out
    for op in SKELETON_OPS:
        assert any(line.split()[:2] == [op, "CPU"] for line in out.splitlines()), f"{op} with CPU kernels:\n{out}"
    assert "csrc/" not in out and "opgen new" not in out and "not built" not in out, out


@pytest.mark.slow
def test_a_wheel_claiming_a_cuda_this_torch_lacks_is_refused_on_import(installed, tmp_path):
    where, env = installed
    site = tmp_path / "site"
    shutil.copytree(Path(env["PYTHONPATH"]), site)
    info_path = site / WHEEL_PACKAGE / "_build_info.json"
    info_path.write_text(json.dumps({**json.loads(info_path.read_text()), "cuda": unmet_cuda()}))
    code = f"try:\n    import {WHEEL_PACKAGE}\nexcept ImportError as e:\n    print(e)\nelse:\n    print('imported')\n"
    message = run([sys.executable, "-c", code], cwd=where, env={"PYTHONPATH": str(site)}).stdout
    import torch

    if torch.version.cuda is None:
        says = "it was built with CUDA 13 kernels, but this torch has no CUDA: install a CUDA 13 torch"
    else:
        major = int(torch.version.cuda.split(".")[0])
        says = (f"it was built for CUDA {major + 1} (it needs libcudart.so.{major + 1}), but this torch is CUDA "
                f"{torch.version.cuda}: install the cu{major} build of {WHEEL_PACKAGE}, or a CUDA {major + 1} torch")
    assert message.startswith(f"{WHEEL_PACKAGE}._C cannot be loaded: {says}"), message


@pytest.mark.slow
def test_pytest_installed_tests_the_wheel_and_refuses_the_sources(stable_cpu_wheel, installed, tmp_path):
    project, _ = stable_cpu_wheel
    _, env = installed
    site = Path(env["PYTHONPATH"])
    pytest_cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--installed"]  # not -q: the header
    # From the project folder, whose sources `python -m pytest` would otherwise import.
    out = run([*pytest_cmd, "tests/test_opgen_package.py"], cwd=project, env=env).stdout
    assert f"{WHEEL_PACKAGE}: the installed wheel at {site / WHEEL_PACKAGE}" in out, out
    # The sources built in place, and on sys.path as an editable install puts them: refused, loudly.
    sources = tmp_path / "project"
    shutil.copytree(project, sources)
    for built in (site / WHEEL_PACKAGE).glob("_C*.so"):
        shutil.copy(built, sources / WHEEL_PACKAGE)
    shutil.copy(site / WHEEL_PACKAGE / "_build_info.json", sources / WHEEL_PACKAGE)
    out = run([sys.executable, "-m", WHEEL_PACKAGE], cwd=sources).stdout  # with its sources: where they are
    assert "Next: an op's math is in csrc/<op>/<op>.h" in out, out
    editable = tmp_path / "editable"
    editable.mkdir()
    (editable / WHEEL_PACKAGE).symlink_to(sources / WHEEL_PACKAGE)
    for env, says in [({"PYTHONPATH": str(editable)}, "was imported from the sources"),
                      ({}, f"--installed: {WHEEL_PACKAGE} is not installed")]:
        refused = run_failing([*pytest_cmd, "tests/test_opgen_package.py"], cwd=sources, env=env)
        assert says in refused, refused


def run_failing(cmd: list[str], cwd: Path, env: dict) -> str:
    result = subprocess.run(cmd, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=600)
    assert result.returncode != 0, result.stdout + result.stderr
    return result.stdout + result.stderr
