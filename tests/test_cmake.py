"""A generated project builds with its CMakeLists.txt, and the package loads that library: the ops
register from it and the project's own tests pass against it.

The default build is the README's command (only CMAKE_PREFIX_PATH given) into build/cmake: a CUDA
build for sm_90 where torch has CUDA and nvcc is found (its CUDA tests skip without a GPU), CPU-only
elsewhere. A second, CPU-only build (OPGEN_CPU_ONLY=1) goes to another folder named by
OPGEN_LIBRARY, and picks up an op added after it was configured. A torch_api "aten" project builds
CPU-only and passes its tests too.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from helpers import NOT_AOTI, copy_project, cuda_build_expected, opgen, run, run_project_tests

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")]
OPS = {"gelu_approx": "elementwise", "row_sumsq": "reduction", "my_blank": "blank"}
PACKAGE = "cmake_ops_test"


def torch_cmake_prefix() -> str:
    import torch

    return torch.utils.cmake_prefix_path


def clean_env(**extra: str) -> dict:
    """No OPGEN_* settings or other virtualenv from the calling shell."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPGEN_") and k != "VIRTUAL_ENV"}
    return {**env, **extra}


def cmake_build(project: Path, build_dir: str, *configure_args: str, env: dict | None = None) -> str:
    started = time.perf_counter()
    env = env or clean_env()
    log = run(["cmake", "-S", ".", "-B", build_dir, *configure_args], cwd=project, env=env)
    build = run(["cmake", "--build", build_dir, "-j2"], cwd=project, env=env)
    print(f"CMake configure + build of {build_dir}: {time.perf_counter() - started:.0f} s")
    return log.stdout + log.stderr + build.stdout + build.stderr


def make_project(root: Path, template_repo: Path, torch_api: str) -> Path:
    project = copy_project(template_repo, root / "proj", project_name="cmake-ops-test", package_name=PACKAGE,
                           torch_api=torch_api)
    for op, kind in OPS.items():
        opgen(project, "new", op, "--kind", kind)
    return project


@pytest.fixture(scope="module")
def stable_project(tmp_path_factory, template_repo) -> Path:
    return make_project(tmp_path_factory.mktemp("cmake-stable"), template_repo, "stable")


@pytest.fixture(scope="module")
def default_build(stable_project) -> str:
    """The README's command: torch's CMake prefix, from which CMakeLists.txt finds the Python with torch."""
    return cmake_build(stable_project, "build/cmake", f"-DCMAKE_PREFIX_PATH={torch_cmake_prefix()}")


@pytest.fixture(scope="module")
def cpu_build(stable_project) -> str:
    return cmake_build(stable_project, "build/cmake-cpu", f"-DPython_EXECUTABLE={sys.executable}",
                       env=clean_env(OPGEN_CPU_ONLY="1"))


def probe(project: Path, env: dict | None = None) -> dict:
    """What `import <package>` loaded, from a fresh interpreter in the project folder (not installed)."""
    code = (
        f"import json, torch, {PACKAGE}\n"
        "has = torch._C._dispatch_has_kernel_for_dispatch_key\n"
        f"ops = {PACKAGE}._extension.build_info()['ops']\n"
        f"print(json.dumps({{'library': {PACKAGE}._C.__file__, 'loaded_ops': {PACKAGE}.loaded_ops, "
        f"'info': {PACKAGE}._extension.build_info(), "
        f"'kernels': {{op: [has('{PACKAGE}::' + op, 'CPU'), has('{PACKAGE}::' + op, 'CUDA')] for op in ops}}}}))\n"
    )
    return json.loads(run([sys.executable, "-c", code], cwd=project, env=env or clean_env()).stdout.splitlines()[-1])


def test_default_build_exports_compile_commands_and_compiles_every_source(stable_project, default_build):
    with_cuda = cuda_build_expected()
    assert f"{'CUDA' if with_cuda else 'CPU-only'} CMake build (stable torch API) of 3 op(s)" in default_build
    assert f"Found Python: {Path(sys.executable).parent}" in default_build, "not the Python of the torch given"
    commands = json.loads((stable_project / "build/cmake/compile_commands.json").read_text())
    files = sorted(Path(c["file"]).relative_to(stable_project).as_posix() for c in commands)
    # A blank op's own sources and its registration; a declared op's glue, derived into build/opgen/<op>/
    # by the configure step.
    folders = {op: "build/opgen" if (stable_project / f"csrc/{op}/{op}.h").is_file() else "csrc" for op in OPS}
    expected = ["csrc/python_module.cpp"] + [f"{folders[op]}/{op}/{op}.cpp" for op in OPS]
    expected += [f"{folders[op]}/{op}/{op}_cuda.cu" for op in OPS if with_cuda]
    expected += [f"build/opgen/{op}/{op}_registration.cpp" for op, folder in folders.items() if folder == "csrc"]
    assert files == sorted(expected) and sorted(set(folders.values())) == ["build/opgen", "csrc"]
    for command in commands:  # the flags setup.py gives (one definition: _build.py), C++20 for torch >= 2.13
        assert "-DOPGEN_STABLE_API" in command["command"] and "-DTORCH_TARGET_VERSION=0x020a000000000000" in command["command"]
        assert "-std=c++20" in command["command"] and "-std=c++17" not in command["command"]
        if command["file"].endswith(".cu"):
            assert re.search(r"arch=compute_90,code=\[?sm_90", command["command"]), "not compiled for sm_90"
            assert "-D__CUDA_NO_HALF_OPERATORS__" in command["command"]  # torch's own nvcc flags


def test_stable_library_is_abi3_without_libtorch_python(stable_project, default_build):
    libraries = sorted(p.name for p in (stable_project / "build/cmake").glob("_C*.so"))
    assert libraries == ["_C.abi3.so"]
    needed = run(["readelf", "-d", str(stable_project / "build/cmake/_C.abi3.so")], cwd=stable_project).stdout
    assert "libtorch_python" not in needed and "libpython" not in needed
    assert not list((stable_project / PACKAGE).glob("_C*.so")), "CMake wrote into the package"


def test_package_loads_the_cmake_library_and_its_ops_register(stable_project, default_build):
    loaded = probe(stable_project)
    assert loaded["library"] == str(stable_project / "build/cmake/_C.abi3.so")
    assert loaded["loaded_ops"] is None
    assert loaded["info"]["runs_on_torch"] == ">=2.10" and loaded["info"]["ops"] == sorted(OPS)
    assert loaded["kernels"] == {op: [True, cuda_build_expected()] for op in sorted(OPS)}


def test_import_checks_the_torch_version_of_the_cmake_build(stable_project, default_build):
    code = f"import torch\ntorch.__version__ = '2.9.1'\ntry:\n    import {PACKAGE}\nexcept ImportError as e:\n    print(e)\n"
    assert "needs torch >= 2.10; this is torch 2.9.1" in run([sys.executable, "-c", code], cwd=stable_project,
                                                              env=clean_env()).stdout


def test_project_tests_pass_against_the_cmake_build(stable_project, default_build):
    run_project_tests(stable_project, *NOT_AOTI, env=clean_env())


def test_opgen_library_names_a_cpu_only_build(stable_project, cpu_build):
    assert "CPU-only CMake build (stable torch API) of 3 op(s)" in cpu_build
    loaded = probe(stable_project, clean_env(OPGEN_LIBRARY="build/cmake-cpu"))
    assert loaded["library"] == str(stable_project / "build/cmake-cpu/_C.abi3.so")
    assert loaded["kernels"] == {op: [True, False] for op in sorted(OPS)}
    assert loaded["info"]["cuda"] is None


def test_opgen_library_zero_or_a_folder_without_a_library(stable_project, default_build):
    code = f"try:\n    import {PACKAGE}\nexcept ImportError as e:\n    print(e)\n"
    missing = run([sys.executable, "-c", code], cwd=stable_project, env=clean_env(OPGEN_LIBRARY="build/nothing"))
    assert "OPGEN_LIBRARY=build/nothing holds no _C library" in missing.stdout
    # OPGEN_LIBRARY=0: the package's own `_C`, which pip has not built here.
    own = run([sys.executable, "-c", code], cwd=stable_project, env=clean_env(OPGEN_LIBRARY="0"))
    assert f"{PACKAGE}._C could not be loaded: it is not built" in own.stdout


def test_a_new_op_folder_reconfigures_the_build(stable_project, cpu_build):
    """CMAKE_CONFIGURE_DEPENDS on csrc/ and its folders: `cmake --build` alone picks up a new op."""
    opgen(stable_project, "new", "late_op", "--kind", "blank")
    try:
        build = run(["cmake", "--build", "build/cmake-cpu", "-j2"], cwd=stable_project,
                    env=clean_env(OPGEN_CPU_ONLY="1"))
        assert "CMake build (stable torch API) of 4 op(s)" in build.stdout + build.stderr
        loaded = probe(stable_project, clean_env(OPGEN_LIBRARY="build/cmake-cpu"))
        assert loaded["kernels"]["late_op"] == [True, False]
    finally:
        opgen(stable_project, "remove", "late_op", "--force")


def test_aten_project_builds_cpu_only_and_passes_its_tests(tmp_path_factory, template_repo):
    """torch_api aten: the module is tied to this CPython (no abi3), and may use all of ATen."""
    project = make_project(tmp_path_factory.mktemp("cmake-aten"), template_repo, "aten")
    log = cmake_build(project, "build/cmake", f"-DPython_EXECUTABLE={sys.executable}", env=clean_env(OPGEN_CPU_ONLY="1"))
    assert "CPU-only CMake build (aten torch API) of 3 op(s)" in log
    import sysconfig

    assert (project / "build/cmake" / f"_C{sysconfig.get_config_var('EXT_SUFFIX')}").is_file()
    assert run([sys.executable, "-c", f"import {PACKAGE}; print({PACKAGE}._extension.build_info()['runs_on_torch'])"],
               cwd=project, env=clean_env()).stdout.strip().startswith("==")
    # The kernels this library registers, forward and backward, and their schemas and fake kernels: the
    # rest of the aten project's suite (its Python, torch.compile) runs against the pip build of the
    # same sources in the CPU-only torch's stage of CI.
    run_project_tests(project, "tests/test_opgen_conformance.py", "-k",
                      "matches_reference or gradients_match_reference or opcheck", env=clean_env())
