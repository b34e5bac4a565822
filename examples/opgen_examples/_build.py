"""What to compile and how: shared by setup.py and the JIT loader (jit.py).

Stdlib only at import time, so setup.py can load this file without importing the package.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
import sysconfig
from pathlib import Path

PACKAGE = "opgen_examples"
PROJECT_ROOT = Path(__file__).resolve().parent.parent
CSRC = PROJECT_ROOT / "csrc"
# What the installed `_C` was built with, written by setup.py and checked on import (_extension.py).
BUILD_INFO = Path(__file__).resolve().parent / "_build_info.json"
# Used when TORCH_CUDA_ARCH_LIST is not set in the environment.
DEFAULT_CUDA_ARCH_LIST = "9.0"

# "stable": the LibTorch stable ABI, one abi3 binary for every torch from MIN_STABLE_TORCH on.
# "aten": the full ATen C++ API, a binary tied to the torch it was built with.
TORCH_API = "stable"
MIN_STABLE_TORCH = (2, 10)


def _stable_flags() -> list[str]:
    major, minor = MIN_STABLE_TORCH
    # Build against any newer torch's headers, but use only what MIN_STABLE_TORCH already had.
    target = f"0x{major:02x}{minor:02x}000000000000"
    return ["-DOPGEN_STABLE_API", f"-DTORCH_TARGET_VERSION={target}"]


API_FLAGS = _stable_flags() if TORCH_API == "stable" else []


def op_names() -> list[str]:
    """Every folder csrc/<op>/ that holds csrc/<op>/<op>.cpp is an op: no hand-kept list."""
    if not CSRC.is_dir():
        return []
    return sorted(d.name for d in CSRC.iterdir() if (d / f"{d.name}.cpp").is_file())


NAMESPACE = "examples"
PACKAGE_DIR = Path(__file__).resolve().parent


def op_dependencies(op: str) -> list[str]:
    """The other ops `op` calls, found in its sources and its Python module: `torch.ops.<ns>.<name>`
    or a dispatcher name "<ns>::<name>" (<name>_backward and <name>_out count as <name>)."""
    texts = [p.read_text(errors="replace") for p in op_sources(op, with_cuda=True)]
    module = PACKAGE_DIR / "ops" / f"{op}.py"
    if module.is_file():
        texts.append(module.read_text(errors="replace"))
    pattern = re.compile(rf"(?:torch\.ops\.{NAMESPACE}\.|\b{NAMESPACE}::)([A-Za-z_][A-Za-z0-9_]*)")
    ops = set(op_names())
    found = set()
    for name in (m.group(1) for text in texts for m in pattern.finditer(text)):
        for suffix in ("", "_backward", "_out"):
            if suffix and name.endswith(suffix):
                name = name[: -len(suffix)]
            if name in ops and name != op:
                found.add(name)
                break
    return sorted(found)


def with_dependencies(selection: list[str]) -> list[str]:
    """selection plus every op it needs, directly or through others, in a stable order."""
    needed, todo = [], list(selection)
    while todo:
        op = todo.pop(0)
        if op not in needed:
            needed.append(op)
            todo += op_dependencies(op)
    return needed


def op_sources(op: str, with_cuda: bool) -> list[Path]:
    folder = CSRC / op
    if not (folder / f"{op}.cpp").is_file():
        raise FileNotFoundError(f"no op named {op!r}: {folder / (op + '.cpp')} does not exist")
    patterns = ["*.cpp", "*.cu"] if with_cuda else ["*.cpp"]
    return sorted(p for pattern in patterns for p in folder.glob(pattern))


# A source whose first include is this uses the full ATen C++ API even in a "stable" project (for
# what the stable ABI lacks: C++ autograd, ATen's cuBLAS helpers, ...). Such a build still works,
# but its binary is tied to the torch it was built with, like an "aten" project's.
ATEN_OPT_IN = '#include "common/use_aten.h"'


def ops_using_aten() -> list[str]:
    """The ops built with the full ATen API: every op in an "aten" project, else those that opt in."""
    if TORCH_API == "aten":
        return op_names()
    return [op for op in op_names()
            if any(ATEN_OPT_IN in p.read_text(errors="replace") for p in op_sources(op, with_cuda=True))]


def stable_binary() -> bool:
    """Whether `_C` uses only the stable ABI: one abi3 binary for every torch >= MIN_STABLE_TORCH."""
    return TORCH_API == "stable" and not ops_using_aten()


def extension_sources(with_cuda: bool) -> list[Path]:
    """All sources of the one extension `<package>._C`: the module stub plus every op."""
    sources = [CSRC / "python_module.cpp"]
    for op in op_names():
        sources += op_sources(op, with_cuda)
    return sources


def find_cuda_home() -> str | None:
    """CUDA_HOME, or the toolkit that the nvcc on PATH belongs to (wrappers and symlinks resolved)."""
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            return os.environ[var]
    candidates = []
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(Path(nvcc).resolve().parent.parent)
    candidates.append(Path("/usr/local/cuda"))
    for home in candidates:
        if (home / "bin" / "nvcc").is_file() and (home / "include" / "cuda_runtime.h").is_file():
            return str(home)
    return None


def cuda_build_enabled() -> bool:
    """Build the .cu files when torch was built with CUDA and a CUDA toolkit is found.

    OPGEN_CPU_ONLY=1 forces the CPU-only build. Sets CUDA_HOME for torch.utils.cpp_extension,
    so call this before importing that module.
    """
    if os.environ.get("OPGEN_CPU_ONLY", "0") not in ("", "0"):
        return False
    import torch

    if torch.version.cuda is None:
        return False
    cuda_home = find_cuda_home()
    if cuda_home is None:
        return False
    os.environ.setdefault("CUDA_HOME", cuda_home)
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", DEFAULT_CUDA_ARCH_LIST)
    return True


def cuda_library_include_dirs() -> list[str]:
    """Headers of the CUDA libraries that pip-installed torch depends on (cuBLAS, cuSPARSE, ...).

    ATen's CUDA headers include them; a system nvcc without those libraries finds them here.
    """
    site = Path(sysconfig.get_paths()["purelib"]) / "nvidia"
    found = [site / "cu13" / "include"] + sorted(site.glob("*/include"))
    return [str(d) for d in dict.fromkeys(found) if d.is_dir()]


def include_dirs() -> list[str]:
    return [str(CSRC)]


def compile_flags(with_cuda: bool) -> dict[str, list[str]]:
    """Extra flags for g++ ("cxx") and nvcc ("nvcc"); torch.utils.cpp_extension adds the C++ standard
    its headers need.

    The CUDA libraries' headers come last (-isystem, after the toolkit's own -I): pip's CUDA
    runtime may be newer than the nvcc that compiles, and its cuda_runtime.h must not shadow the
    toolkit's (nvcc refuses a mismatched pair)."""
    after_toolkit = [flag for d in cuda_library_include_dirs() for flag in ("-isystem", d)] if with_cuda else []
    # OPGEN_WITH_CUDA: the ops' .cpp files register CUDA kernels and call into their .cu files.
    cuda = ["-DOPGEN_WITH_CUDA", *after_toolkit] if with_cuda else []
    return {
        "cxx": ["-O3", *API_FLAGS, *cuda],
        "nvcc": ["-O3", "--expt-relaxed-constexpr", "-lineinfo", *API_FLAGS, *cuda],
    }


def write_build_info(with_cuda: bool) -> None:
    import torch

    built_with = torch.__version__.split("+")[0]
    info = {
        "torch_api": TORCH_API,
        "ops_using_aten": ops_using_aten(),
        "built_with_torch": built_with,
        "runs_on_torch": f">={MIN_STABLE_TORCH[0]}.{MIN_STABLE_TORCH[1]}" if stable_binary() else f"=={built_with}",
        "cuda": torch.version.cuda if with_cuda else None,
        "cuda_arch_list": os.environ.get("TORCH_CUDA_ARCH_LIST") if with_cuda else None,
        "ops": op_names(),
    }
    BUILD_INFO.write_text(json.dumps(info, indent=2) + "\n")


def log(message: str) -> None:
    print(f"[{PACKAGE}] {message}", file=sys.stderr)
