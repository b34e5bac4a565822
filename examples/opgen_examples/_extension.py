"""Loads the compiled operators: the installed `_C` extension, or JIT builds of csrc/."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from . import _build

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
    check_torch_version()
    try:
        from . import _C  # noqa: F401  (its static initializers register the ops)
    except ImportError as error:
        raise ImportError(f"opgen_examples._C could not be loaded: {_load_failure_hint(str(error))} ({error})") from error
    return None


REBUILD = "rebuild it against this torch: `pip install --no-build-isolation -e .` in the project"


def built_ops(loaded: list[str] | None) -> set[str]:
    """The ops this process has kernels for: the JIT-built ones, else those in the installed build
    (all of csrc/ when the build recorded nothing)."""
    if loaded is not None:
        return set(loaded)
    info = build_info()
    return set(info["ops"]) if info and "ops" in info else set(_build.op_names())


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


def check_torch_version(running: str | None = None, info_path: Path | None = None) -> None:
    """Refuse, with what to do, a torch the installed `_C` cannot run on (before a bare `undefined symbol`)."""
    info = build_info(info_path)
    if info is None:
        return
    if running is None:
        import torch

        running = torch.__version__
    built = info["built_with_torch"]
    if info["runs_on_torch"].startswith(">="):
        needed = _build.MIN_STABLE_TORCH
        if torch_version(running)[:2] < needed:
            raise ImportError(
                f"opgen_examples is built on the torch stable ABI and needs torch >= {needed[0]}.{needed[1]}; "
                f"this is torch {running}: upgrade torch (pip install 'torch>={needed[0]}.{needed[1]}')"
            )
    elif torch_version(running) != torch_version(built):
        raise ImportError(
            f"opgen_examples._C was built with torch {built} and uses the full ATen API, which ties a binary to "
            f"one torch, but this is torch {running}: {REBUILD}"
        )


def _load_failure_hint(message: str) -> str:
    if "No module named" in message or "cannot import name '_C'" in message:  # the latter: `from . import _C`
        return (
            f"it is not built: run `pip install --no-build-isolation -e .` in the project (or build it with "
            f"CMake: README), or set {JIT_ENV}=1 to compile csrc/ when the package is imported"
        )
    if "undefined symbol" in message:
        return f"it does not fit this torch ({REBUILD})"
    if "libtorch_cuda" in message or "libc10_cuda" in message or "libcudart" in message:
        return (
            "it was built with CUDA kernels but this torch has no CUDA; install a CUDA torch, or build "
            "CPU-only with OPGEN_CPU_ONLY=1"
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
    check_torch_version(info_path=path.parent / _build.BUILD_INFO.name)
    spec = importlib.util.spec_from_file_location("opgen_examples._C", path)
    try:
        module = importlib.util.module_from_spec(spec)
    except ImportError as error:
        raise ImportError(f"{path} could not be loaded: {_load_failure_hint(str(error))} ({error})") from error
    sys.modules[spec.name] = module
    sys.modules[__package__]._C = module  # as `from . import _C` would
    _library = path
