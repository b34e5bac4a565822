"""What to compile and how: shared by setup.py and the JIT loader (jit.py).

Stdlib only at import time, so setup.py can load this file without importing the package.
"""
from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path

PACKAGE = "opgen_examples"
PROJECT_ROOT = Path(__file__).resolve().parent.parent
CSRC = PROJECT_ROOT / "csrc"
# Used when TORCH_CUDA_ARCH_LIST is not set in the environment.
DEFAULT_CUDA_ARCH_LIST = "9.0"

CXX_FLAGS = ["-O3"]  # torch.utils.cpp_extension picks the C++ standard its headers need
NVCC_FLAGS = ["-O3", "--expt-relaxed-constexpr", "-lineinfo"]


def op_names() -> list[str]:
    """Every folder csrc/<op>/ that holds csrc/<op>/<op>.cpp is an op: no hand-kept list."""
    if not CSRC.is_dir():
        return []
    return sorted(d.name for d in CSRC.iterdir() if (d / f"{d.name}.cpp").is_file())


def op_sources(op: str, with_cuda: bool) -> list[Path]:
    folder = CSRC / op
    if not (folder / f"{op}.cpp").is_file():
        raise FileNotFoundError(f"no op named {op!r}: {folder / (op + '.cpp')} does not exist")
    patterns = ["*.cpp", "*.cu"] if with_cuda else ["*.cpp"]
    return sorted(p for pattern in patterns for p in folder.glob(pattern))


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

    torch's CUDA headers include them; a system nvcc without those libraries finds them here.
    """
    site = Path(sysconfig.get_paths()["purelib"]) / "nvidia"
    found = [site / "cu13" / "include"] + sorted(site.glob("*/include"))
    return [str(d) for d in dict.fromkeys(found) if d.is_dir()]


def include_dirs(with_cuda: bool) -> list[str]:
    return [str(CSRC)] + (cuda_library_include_dirs() if with_cuda else [])


def log(message: str) -> None:
    print(f"[{PACKAGE}] {message}", file=sys.stderr)
