"""A generated project with one op of each kind builds with pip and passes its own tests, for both
answers to `torch_api` (the LibTorch stable ABI and the full ATen API).

Where torch has CUDA and a CUDA toolkit is found, this is a real CUDA build: nvcc compiles every
generated .cu for sm_90 against torch's headers, and the CUDA kernels get registered (they run on a
GPU machine; here their tests skip). Elsewhere the same sources build CPU-only.
"""
import re
import sys
import time
from pathlib import Path

import pytest

from helpers import (add_skeleton_ops, copy_project, cuda_build_expected, opgen, pip_install_editable,
                     run, run_project_tests)

pytestmark = pytest.mark.slow
PACKAGE = "gen_ops_test"
# The aten project's CUDA build compiles one op of each kernel template (for CI's time); its
# CPU-only builds, and the GPU machine's check, compile every skeleton op.
ATEN_CUDA_OPS = ("gelu_approx", "row_sumsq", "my_blank", "two_outs")


@pytest.fixture(scope="module", params=["stable", "aten"])
def built_project(request, tmp_path_factory, template_repo):
    root = tmp_path_factory.mktemp(f"generated-{request.param}")
    project = copy_project(template_repo, root / "gen_ops", project_name="gen-ops-test", package_name=PACKAGE,
                           torch_api=request.param)
    add_skeleton_ops(project, ATEN_CUDA_OPS if request.param == "aten" and cuda_build_expected() else None)
    started = time.perf_counter()
    build = pip_install_editable(project, env={"MAX_JOBS": "2", "TORCH_CUDA_ARCH_LIST": "9.0"})
    print(f"{request.param} build took {time.perf_counter() - started:.0f} s")
    yield project, build.stdout + build.stderr
    run([sys.executable, "-m", "pip", "uninstall", "-y", "gen-ops-test"], cwd=root)


def ops_of(project: Path) -> list[str]:
    return sorted(path.name for path in (project / "csrc").iterdir() if path.is_dir() and path.name != "common")


def torch_api_of(project: Path) -> str:
    return "stable" if "torch_api: stable" in (project / ".copier-answers.yml").read_text() else "aten"


def test_build_picks_cuda_or_cpu_and_compiles_every_op(built_project):
    project, log = built_project
    api = torch_api_of(project)
    assert f"build ({api} torch API) of {len(ops_of(project))} op(s)" in log
    compile_lines = [line for line in log.splitlines() if re.search(r"\[\d+/\d+\] .* -c ", line)]
    assert compile_lines
    for line in compile_lines:  # the stable build targets the oldest torch it supports, on every source
        assert ("-DOPGEN_STABLE_API" in line and "-DTORCH_TARGET_VERSION=0x020a000000000000" in line) == (api == "stable")
    if cuda_build_expected():
        assert "CUDA build" in log
        for op in ops_of(project):
            assert f"{op}_cuda.cu" in log
        assert re.search(r"arch=compute_90a?,code=sm_90a?", log), "not compiled for sm_90"
    else:
        assert "CPU-only build" in log
        assert "_cuda.cu" not in log


def test_stable_binary_uses_only_the_stable_abi(built_project):
    """A stable `_C` is an abi3 module that needs no libtorch_python; an aten one is tied to CPython."""
    project, _ = built_project
    libraries = sorted((project / PACKAGE).glob("_C*.so"))
    assert len(libraries) == 1
    if torch_api_of(project) == "stable":
        assert libraries[0].name == "_C.abi3.so"
        assert "libtorch_python" not in run(["ldd", str(libraries[0])], cwd=project).stdout
    else:
        assert "abi3" not in libraries[0].name


def test_import_refuses_a_torch_the_binary_cannot_run_on(built_project):
    """Before any `undefined symbol`: stable needs torch >= 2.10, aten the very torch it was built with.

    The running version is faked in the interpreter: installing torch 2.9 here costs gigabytes, and
    what is checked is the package's own version check. tests/test_wheel.py runs real other torches."""
    project, _ = built_project
    fake = "2.9.1" if torch_api_of(project) == "stable" else "2.99.0"
    code = (f"import torch\ntorch.__version__ = '{fake}'\n"
            f"try:\n    import {PACKAGE}\nexcept ImportError as e:\n    print(e)\n")
    message = run([sys.executable, "-c", code], cwd=project.parent).stdout
    if torch_api_of(project) == "stable":
        assert f"needs torch >= 2.10; this is torch {fake}" in message
    else:
        assert f"but this is torch {fake}: rebuild it against this torch" in message


def test_kernels_are_registered_for_the_right_devices(built_project):
    project, _ = built_project
    probe = (
        f"import torch, {PACKAGE}\n"
        "has = torch._C._dispatch_has_kernel_for_dispatch_key\n"
        f"for op in {ops_of(project)!r}:\n"
        f"    print(op, has('{PACKAGE}::' + op, 'CPU'), has('{PACKAGE}::' + op, 'CUDA'))\n"
    )
    lines = run([sys.executable, "-c", probe], cwd=project.parent).stdout.split("\n")
    expected = [f"{op} True {cuda_build_expected()}" for op in ops_of(project)]
    assert lines[: len(expected)] == expected


def test_package_imports_without_pytest(built_project):
    """Test code lives in tests/, not in the package: importing it needs no pytest."""
    project, _ = built_project
    code = f"import sys\nsys.modules['pytest'] = None\nimport {PACKAGE}\nprint(sorted({PACKAGE}.__all__))"
    exported = run([sys.executable, "-c", code], cwd=project.parent).stdout
    assert all(repr(op) in exported for op in ops_of(project)), exported
    assert ("'fma3_out'" in exported) == ("fma3" in ops_of(project)), exported  # --with-out: the out= function too


def test_an_op_added_after_the_build_says_how_to_build_it(built_project):
    """`opgen new` after the last build: `<package>.<op>` is there (not an AttributeError) and its
    call says how to build it, while the built ops keep working."""
    project, _ = built_project
    opgen(project, "new", "added_later")
    try:
        code = (f"import torch, {PACKAGE}\n{PACKAGE}.gelu_approx(torch.ones(3))\n"
                f"try:\n    {PACKAGE}.added_later(torch.ones(3))\nexcept RuntimeError as e:\n    print(e)\n")
        message = run([sys.executable, "-c", code], cwd=project.parent).stdout
    finally:
        opgen(project, "remove", "added_later")
    assert "'added_later' is in csrc/ but not in the installed build" in message and "pip install" in message


def test_generated_tests_pass(built_project):
    project, _ = built_project
    run_project_tests(project)


def test_cuda_call_without_a_gpu_fails_cleanly(built_project):
    project, _ = built_project
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present: the CUDA kernels run in the generated tests instead")
    code = f"import torch, {PACKAGE}\ntry:\n    {PACKAGE}.gelu_approx(torch.ones(3, device='cuda'))\nexcept (RuntimeError, AssertionError) as e:\n    print('error:', e)\n"
    out = run([sys.executable, "-c", code], cwd=project.parent).stdout
    assert out.startswith("error:")


def test_jit_loader_builds_the_same_sources(built_project, tmp_path):
    """OPGEN_JIT=1 compiles csrc/ with cpp_extension.load; an unchanged op reloads without compiling."""
    project, _ = built_project
    # Every op for the stable API; the aten run compiles one (the same loader, other flags), for CI's time.
    ops = "1" if torch_api_of(project) == "stable" else "gelu_approx"
    env = {"OPGEN_JIT": ops, "OPGEN_CPU_ONLY": "1", "TORCH_EXTENSIONS_DIR": str(tmp_path), "MAX_JOBS": "2"}
    code = (
        "import time, torch\n"
        f"import {PACKAGE}\n"
        f"assert '{PACKAGE}._C' not in __import__('sys').modules\n"
        "x = torch.randn(1000, dtype=torch.float64)\n"
        f"torch.testing.assert_close({PACKAGE}.gelu_approx(x), x * torch.sigmoid(x))\n"
        f"print('ok')\n"
    )
    assert run([sys.executable, "-c", code], cwd=project.parent, env=env).stdout.strip() == "ok"
    started = time.perf_counter()
    run([sys.executable, "-c", code], cwd=project.parent, env=env)
    reload_s = time.perf_counter() - started
    print(f"JIT reload of unchanged ops (whole interpreter start): {reload_s:.1f} s")
    assert reload_s < 30


def test_benchmarks_are_importable(built_project):
    project, _ = built_project
    code = "from benchmarks import sweep\nimport benchmarks.__main__ as m\n"
    # A declared op's benchmark is made from its SPEC; a blank op has a bench_<op>.py.
    code += "".join(f"sweep.points_of(m.bench_module('{op}'))\n" for op in ops_of(project))
    code += "print(m.available())\n"
    assert run([sys.executable, "-c", code], cwd=project).stdout.strip() == str(ops_of(project))


def test_rebuild_compiles_only_the_edited_source(built_project):
    # pip install -e would build in a fresh temporary folder; setup.py keeps the objects in build/.
    project, _ = built_project
    # The math of a declared op: its derived .cpp and .cu include it; the other ops' sources are untouched
    # (the glue derived again is rewritten only where its text changed).
    (project / "csrc" / "gelu_approx" / "gelu_approx.h").touch()
    build = pip_install_editable(project, env={"MAX_JOBS": "2", "TORCH_CUDA_ARCH_LIST": "9.0"})
    compiled = re.findall(r"^\s*\[\d+/\d+\] .* -o (\S+\.o)\b", build.stdout + build.stderr, re.MULTILINE)
    objects = sorted(Path(o).relative_to(project / "build").parts[1:] for o in compiled)  # below build/temp-*/
    derived = ("build", "opgen", "gelu_approx")
    expected = [(*derived, "gelu_approx.o")] + ([(*derived, "gelu_approx_cuda.o")] if cuda_build_expected() else [])
    assert objects == expected
