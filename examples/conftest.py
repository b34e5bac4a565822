"""`python -m pytest --installed` (or OPGEN_TEST_INSTALLED=1) tests the installed opgen_examples, a
wheel (`pip install "dist/<wheel>.whl[test]"`), instead of the source tree, and refuses to run if the
package would come from the sources (the project folder, an editable install) or not from its own `_C`.

Under pytest-xdist (`-n N`), each worker gets its share of the CPU cores for torch's intra-op threads,
unless OMP_NUM_THREADS says otherwise. (Seen on a 16-core GPU machine: with a thread a core in each
of 8 workers, 128 threads running, `-n 8` over examples/' moe tests passed 73 of 160 in 170 s, then
stalled; with 2 threads a worker all passed in 22 s.)

Template-owned (`copier update` keeps it current); tests/conftest.py is yours.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
INSTALLED_ENV = "OPGEN_TEST_INSTALLED"
INSTALL = 'pip install "dist/<wheel>.whl[test]" (pip wheel --no-build-isolation --no-deps -w dist . builds it)'


def share_cpu_threads_among_workers():
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1 and "OMP_NUM_THREADS" not in os.environ:
        import torch

        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        torch.set_num_threads(max(1, cores // workers))


share_cpu_threads_among_workers()


def pytest_addoption(parser):
    parser.addoption(
        "--installed",
        action="store_true",
        default=os.environ.get(INSTALLED_ENV, "0") not in ("", "0"),
        help=f"test the installed opgen_examples (a wheel), not the source tree (also: {INSTALLED_ENV}=1)",
    )


def pytest_configure(config):
    if not config.getoption("installed"):
        return
    # `python -m pytest` (and this file) put the project folder on sys.path, where the sources would shadow the wheel.
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT]
    try:
        package = importlib.import_module("opgen_examples")
    except ImportError as error:
        message = f"--installed: opgen_examples is not installed ({error}); {INSTALL}"
        raise pytest.UsageError(message) from error
    where = Path(package.__file__).resolve().parent
    if where == ROOT / "opgen_examples" or package._extension.sources_here():
        raise pytest.UsageError(
            f"--installed: opgen_examples was imported from the sources ({where}), not a wheel: "
            f"`pip uninstall opgen-examples` (an editable install), then {INSTALL}"
        )
    extension = package._extension
    if package.loaded_ops is not None or extension._library is not None:
        raise pytest.UsageError(
            f"--installed tests the wheel's own _C: unset {extension.JIT_ENV} and {extension.LIBRARY_ENV}"
        )
    config.installed_package = where


def pytest_report_header(config):
    where = getattr(config, "installed_package", None)
    return f"opgen_examples: the installed wheel at {where}" if where else None
