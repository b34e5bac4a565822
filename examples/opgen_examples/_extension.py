"""Loads the compiled operators: the installed `_C` extension, or JIT builds of csrc/."""
from __future__ import annotations

import os

from . import _build

JIT_ENV = "OPGEN_JIT"


def jit_selection() -> list[str] | None:
    """Ops to compile on import: None for the installed `_C`; OPGEN_JIT=1 for all; OPGEN_JIT=a,b for some."""
    value = os.environ.get(JIT_ENV, "0").strip()
    if value in ("", "0"):
        return None
    if value == "1":
        return _build.op_names()
    return [name.strip() for name in value.split(",") if name.strip()]


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
    try:
        from . import _C  # noqa: F401  (its static initializers register the ops)
    except ImportError as error:
        raise ImportError(
            "opgen_examples._C is not built: run `pip install --no-build-isolation -e .` in the "
            f"project, or set {JIT_ENV}=1 to compile csrc/ when the package is imported ({error})"
        ) from error
    return None
