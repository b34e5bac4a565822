"""The common C++ headers every generated op includes compile without a warning (-Wall -Wextra) under
each API they build for: torch's stable ABI (the default) and ATen, with and without the CUDA host
parts. A warning there shows at every file of every op of a user's build (torch's stable types are
hidden: a class holding one, declared with default visibility, made GCC warn 20 times a build)."""
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest
import torch.utils.cpp_extension

from helpers import load_module

CSRC = Path(__file__).resolve().parent.parent / "examples" / "csrc"  # rendered from the template's
HEADERS = ("checks.h", "cpu_loops.h", "definitions.h", "kernel_types.h", "row_probe.h", "row_stats.h", "rowwise.h",
           "torch_api.h")


def cuda_includes():
    """Where cuda_runtime_api.h is (the CUDA host parts include it): the toolkit torch's build finds
    (CUDA_HOME, nvcc on PATH, /usr/local/cuda), else the CUDA runtime pip installed beside torch,
    where a generated project's build also looks (examples/' _build.cuda_library_include_dirs, asked).
    [] if neither."""
    home = torch.utils.cpp_extension.CUDA_HOME
    build = load_module(CSRC.parent / "opgen_examples" / "_build.py", "examples_build")
    candidates = ([Path(home) / "include"] if home else []) + [Path(d) for d in build.cuda_library_include_dirs()]
    return [str(d) for d in candidates if (d / "cuda_runtime_api.h").is_file()][:1]


MODES = {
    "stable": ["-DOPGEN_STABLE_API"],
    "stable-cuda": ["-DOPGEN_STABLE_API", "-DOPGEN_WITH_CUDA"],
    "aten": [],
}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_common_headers_compile_without_warnings(mode):
    if shutil.which("c++") is None:
        pytest.skip("no C++ compiler")
    flags = list(MODES[mode])
    if "-DOPGEN_WITH_CUDA" in flags:
        includes = cuda_includes()
        if not includes:
            pytest.skip("no cuda_runtime_api.h: no CUDA toolkit (CUDA_HOME, nvcc on PATH, /usr/local/cuda), none pip installed")
        flags += [arg for include in includes for arg in ("-isystem", include)]
    torch_includes = [arg for path in torch.utils.cpp_extension.include_paths() for arg in ("-isystem", path)]
    source = "".join(f'#include "common/{header}"\n' for header in HEADERS)
    result = subprocess.run(
        ["c++", "-std=c++20", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-x", "c++", f"-I{CSRC}",
         "-isystem", sysconfig.get_paths()["include"], *torch_includes, *flags, "-"],
        input=source, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-4000:]
