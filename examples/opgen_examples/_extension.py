"""Loads the compiled operators: the installed `_C` extension, or JIT builds of csrc/."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from . import _build, _elf

JIT_ENV = "OPGEN_JIT"


def jit_selection() -> list[str] | None:
    """Ops to compile on import: None for the installed `_C`; OPGEN_JIT=1 for all; OPGEN_JIT=a,b for some."""
    value = os.environ.get(JIT_ENV, "0").strip()
    if value in ("", "0"):
        return None
    if value == "1":
        return _build.op_names()
    # An op whose code calls another op (its autograd, say) needs that one built too.
    return _build.with_dependencies([name.strip() for name in value.split(",") if name.strip()])


def load_extension() -> list[str] | None:
    """Register the ops with the dispatcher; return the JIT-built op names (None: all, from `_C`).

    With OPGEN_JIT set, ops are compiled from csrc/ by torch.utils.cpp_extension.load (ninja rebuilds
    only what changed), so an edited kernel runs without reinstalling.
    """
    selection = jit_selection()
    if selection is not None:
        from . import jit

        for op in selection:
            jit.load(op)
        return selection
    library = cmake_library()
    if library is not None:
        load_library(library)
        return None
    check_build()
    check_cxx_runtime(_package_library(), "the compiler that built it", f"Rebuild it ({REBUILD_COMMAND})")
    try:
        from . import _C  # noqa: F401  (its static initializers register the ops)
    except ImportError as error:
        hint = load_failure_hint(str(error), build_info(), _torch_cuda())
        raise ImportError(f"opgen_examples._C could not be loaded: {hint} ({error})") from error
    return None


REBUILD_COMMAND = "`pip install --no-build-isolation -e .` in the project"
REBUILD = f"rebuild it against this torch: {REBUILD_COMMAND}"


def built_ops(loaded: list[str] | None) -> set[str]:
    """The ops this process has kernels for: the JIT-built ones, else those in the installed build
    (all of csrc/ when the build recorded nothing)."""
    if loaded is not None:
        return set(loaded)
    info = build_info()
    if not info or "ops" not in info:
        return set(_build.op_names())
    return set(info["ops"]) | set(_build.triton_ops())  # a Triton op needs no build


def sources_here() -> bool:
    """Whether the project's sources are beside the package (a source tree, an editable install), not
    an installed wheel alone."""
    return (_build.CSRC / "python_module.cpp").is_file()


def not_built_message(op: str) -> str:
    return (
        f"op {op!r} is in csrc/ but not in the installed build of opgen_examples: run "
        f"`pip install --no-build-isolation -e .` in the project, or set {JIT_ENV}={op} to compile it on import"
    )


def build_info(path: Path | None = None) -> dict | None:
    """What the installed `_C` (or the library loaded instead) was built with (torch version and API,
    CUDA, ops), or None if unknown."""
    path = path or (_library.parent / _build.BUILD_INFO.name if _library else _build.BUILD_INFO)
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def torch_version(version: str) -> tuple[int, int, int]:
    """(2, 11, 0) from "2.11.0+cu130" or "2.12.0.dev20260101"."""
    parts = (version.split("+")[0].split(".") + ["0", "0"])[:3]
    return tuple(int("".join(ch for ch in part if ch.isdigit()) or 0) for part in parts)


def check_build(info_path: Path | None = None) -> None:
    """Refuse, with what to do, a build that cannot run on this torch (before a bare `undefined symbol`
    or a missing libcudart.so.N): read from its build info before `_C` is loaded."""
    info = build_info(info_path)
    if info is None:
        return
    import torch

    reason = build_mismatch(info, torch.__version__, torch.version.cuda)
    if reason:
        raise ImportError(reason)


def _package_library() -> str | None:
    """The file of the package's `_C`, without loading it (None: not built)."""
    import importlib.util

    spec = importlib.util.find_spec(f"{__package__}._C")
    return spec.origin if spec is not None else None


def check_cxx_runtime(path: str | Path | None, built_by: str, rebuild: str) -> None:
    """Refuse a library at `path` that carries its own C++ runtime (see _elf.py): loaded, it would crash
    the process at its first error, where this names the cause."""
    if path is not None and _elf.carries_own_cxx_runtime(path):
        raise ImportError(_elf.own_cxx_runtime_message(path, built_by, rebuild))


def _torch_cuda() -> str | None:
    """This torch's CUDA version ("12.8"), or None for a CPU-only torch."""
    import torch

    return torch.version.cuda


def build_mismatch(info: dict, running: str, torch_cuda: str | None) -> str | None:
    """Why the build that `info` describes cannot run on torch `running` whose CUDA is `torch_cuda`
    (None: a CPU-only torch), or None if it can."""
    built = info["built_with_torch"]
    if info["runs_on_torch"].startswith(">="):
        needed = _build.MIN_STABLE_TORCH
        if torch_version(running)[:2] < needed:
            return (
                f"opgen_examples is built on the torch stable ABI and needs torch >= {needed[0]}.{needed[1]}; "
                f"this is torch {running}: upgrade torch (pip install 'torch>={needed[0]}.{needed[1]}')"
            )
    elif torch_version(running) != torch_version(built):
        return (
            f"opgen_examples._C was built with torch {built} and uses the full ATen API, which ties a binary to "
            f"one torch, but this is torch {running}: {REBUILD}"
        )
    if not info.get("cuda"):
        return None  # CPU kernels run under any torch
    if torch_cuda is None:
        return f"opgen_examples._C cannot be loaded: {_no_cuda_torch(info['cuda'])}"
    if _build.cuda_major(torch_cuda) != _build.cuda_major(info["cuda"]):
        return f"opgen_examples._C cannot be loaded: {_other_cuda_major(_build.cuda_major(info['cuda']), torch_cuda)}"
    return None


CPU_BUILD = "the CPU build of opgen_examples (the `cpu` variant, or build it with OPGEN_CPU_ONLY=1)"


def _no_cuda_torch(built_cuda: str | None) -> str:
    kernels = f"CUDA {_build.cuda_major(built_cuda)}" if built_cuda else "CUDA"
    torch_kind = f"a CUDA {_build.cuda_major(built_cuda)} torch" if built_cuda else "a CUDA torch"
    return f"it was built with {kernels} kernels, but this torch has no CUDA: install {torch_kind}, or {CPU_BUILD}"


def _other_cuda_major(needed: int, torch_cuda: str) -> str:
    return (
        f"it was built for CUDA {needed} (it needs libcudart.so.{needed}), but this torch is CUDA {torch_cuda}: "
        f"install the cu{_build.cuda_major(torch_cuda)} build of opgen_examples, or a CUDA {needed} torch"
    )


def _cuda_runtime_package(major: int) -> str:
    """The pip package with libcudart.so.<major>."""
    return "nvidia-cuda-runtime-cu12" if major <= 12 else f"'cuda-toolkit[cudart]=={major}.*'"


def load_failure_hint(message: str, info: dict | None, torch_cuda: str | None) -> str:
    """What to do about the loader's `message` (why `_C` did not load), for a build described by
    `info` (None: unknown) under a torch whose CUDA is `torch_cuda` (None: CPU-only)."""
    if "No module named" in message or "cannot import name '_C'" in message:  # the latter: `from . import _C`
        return (
            f"it is not built: run `pip install --no-build-isolation -e .` in the project (or build it with "
            f"CMake: README), or set {JIT_ENV}=1 to compile csrc/ when the package is imported"
        )
    if "undefined symbol" in message:
        return f"it does not fit this torch ({REBUILD})"
    cudart = re.search(r"libcudart\.so\.(\d+)", message)
    if cudart or "libtorch_cuda" in message or "libc10_cuda" in message:
        if torch_cuda is None:
            return _no_cuda_torch((info or {}).get("cuda") or (cudart and cudart[1]))
        if cudart and int(cudart[1]) != _build.cuda_major(torch_cuda):
            return _other_cuda_major(int(cudart[1]), torch_cuda)
        if cudart:
            major = int(cudart[1])
            return (
                f"the CUDA {major} runtime (libcudart.so.{major}) it needs was not found, though this torch is "
                f"CUDA {torch_cuda}: install it (pip install {_cuda_runtime_package(major)}, or a CUDA {major} "
                f"toolkit with its lib64 on LD_LIBRARY_PATH), or {CPU_BUILD}"
            )
    if "libcuda.so" in message:
        return (
            "the NVIDIA driver (libcuda.so.1) was not found: install the driver (in a container, run it with "
            f"GPU access), or {CPU_BUILD}"
        )
    return REBUILD


# A CMake build (CMakeLists.txt) of the same `_C`, loaded instead of the package's own.
LIBRARY_ENV = "OPGEN_LIBRARY"
CMAKE_BUILD_DIR = _build.PROJECT_ROOT / "build" / "cmake"
_library: Path | None = None  # the library loaded instead of the package's `_C`, if any


def cmake_library() -> Path | None:
    """The library to load instead of the package's `_C`: the one OPGEN_LIBRARY names (the file, or
    the build folder that holds it; OPGEN_LIBRARY=0: the package's `_C`), else a CMake build in the
    project's build/cmake/, else None."""
    import importlib.machinery

    value = os.environ.get(LIBRARY_ENV, "").strip()
    if value == "0":
        return None
    where = Path(value).expanduser().resolve() if value else CMAKE_BUILD_DIR
    if value and where.is_file():
        return where
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:  # this interpreter's own, then abi3
        if (where / f"_C{suffix}").is_file():
            return where / f"_C{suffix}"
    if value:
        raise ImportError(
            f"{LIBRARY_ENV}={value} holds no _C library for this Python: build it "
            f"(cmake --build <folder>), or unset {LIBRARY_ENV} to load the package's `_C`"
        )
    return None


def load_library(path: Path) -> None:
    """Import `path` as `opgen_examples._C` (its PyInit and the static initializers that register the
    ops run), so that code checking for `opgen_examples._C` (jit.py) sees it like the package's own."""
    import importlib.util

    global _library
    info_path = path.parent / _build.BUILD_INFO.name
    check_build(info_path)
    # (CMake keeps the compiler it first found in a build folder: a new folder picks up CXX again.)
    check_cxx_runtime(path, "the compiler that built it", "Configure and build it in a new folder")
    spec = importlib.util.spec_from_file_location("opgen_examples._C", path)
    try:
        module = importlib.util.module_from_spec(spec)
    except ImportError as error:
        hint = load_failure_hint(str(error), build_info(info_path), _torch_cuda())
        raise ImportError(f"{path} could not be loaded: {hint} ({error})") from error
    sys.modules[spec.name] = module
    sys.modules[__package__]._C = module  # as `from . import _C` would
    _library = path
