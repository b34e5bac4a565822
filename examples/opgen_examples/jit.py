"""Edit-run loop without reinstalling: compile one op's sources with torch.utils.cpp_extension.load.

    OPGEN_JIT=1 python -m pytest                      # every op, built from csrc/ on import
    OPGEN_JIT=<op> python -m pytest tests/test_<op>.py  # just that op (comma-separate several)
    opgen_examples.jit.load("<op>")                # one op, from the same sources

Builds are cached by ninja under TORCH_EXTENSIONS_DIR: an unchanged op reloads without compiling.
The JIT libraries register the same op names as the installed `_C`, so a process uses one or the other.
"""

from __future__ import annotations

import sys

from . import _build

_loaded: set[str] = set()


def load(op: str, verbose: bool = False) -> None:
    """Compile csrc/<op>/ (its .cu files too where CUDA builds are possible) and register its ops."""
    if op in _loaded:
        return
    if "opgen_examples._C" in sys.modules:
        raise RuntimeError(
            "opgen_examples._C (the installed build) is already loaded and registers the same ops; "
            "set OPGEN_JIT=1 before importing opgen_examples to use JIT builds"
        )
    with_cuda = _build.cuda_build_enabled()  # sets CUDA_HOME before cpp_extension reads it
    from torch.utils import cpp_extension

    flags = _build.compile_flags(with_cuda)
    sources = _build.op_sources(op, with_cuda)
    if not sources:  # a Triton op: nothing to compile ahead of its first call
        _loaded.add(op)
        return
    cpp_extension.load(
        name=f"{_build.PACKAGE}_jit_{op}",
        sources=[str(p) for p in sources],
        extra_include_paths=_build.include_dirs(),
        extra_cflags=flags["cxx"],
        extra_cuda_cflags=flags["nvcc"],
        with_cuda=with_cuda,
        is_python_module=False,
        verbose=verbose,
    )
    _loaded.add(op)


def load_all(verbose: bool = False) -> None:
    for op in _build.op_names():
        load(op, verbose=verbose)
