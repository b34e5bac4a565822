"""The generated root conftest gives each pytest-xdist worker its share of the CPU cores for torch's
intra-op threads (N workers of a thread a core each spun 16N threads on 16 cores and stalled), and
leaves OMP_NUM_THREADS, where set, to decide."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import REPO

CONFTEST = REPO / "examples" / "conftest.py"  # rendered from template/conftest.py.jinja
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def torch_threads_after_conftest(conftest: bool = True, **env: str) -> int:
    """torch.get_num_threads() in a fresh process that has run the conftest (or not), with env over
    os.environ less the variables under test."""
    base = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "PYTEST_XDIST_WORKER_COUNT")}
    run = f"runpy.run_path({str(CONFTEST)!r}); " if conftest else ""
    code = f"import runpy, torch; {run}print(torch.get_num_threads())"
    result = subprocess.run([sys.executable, "-c", code], env={**base, **env}, cwd=REPO / "examples",
                            capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return int(result.stdout.split()[-1])


@pytest.mark.skipif(CORES < 2, reason="one CPU core here: every share of it is one thread")
def test_each_worker_gets_its_share_of_the_cores():
    alone = torch_threads_after_conftest()
    assert alone == torch_threads_after_conftest(conftest=False)  # torch's default, untouched outside xdist
    assert torch_threads_after_conftest(PYTEST_XDIST_WORKER_COUNT="1") == alone
    assert torch_threads_after_conftest(PYTEST_XDIST_WORKER_COUNT=str(CORES)) == 1
    assert torch_threads_after_conftest(PYTEST_XDIST_WORKER_COUNT=str(4 * CORES)) == 1
    if CORES >= 4:
        assert torch_threads_after_conftest(PYTEST_XDIST_WORKER_COUNT="2") == CORES // 2
    # (Where torch's default is one thread, the shares above equal it: the next line still tells.)
    # OMP_NUM_THREADS, where the user sets it, decides.
    assert torch_threads_after_conftest(PYTEST_XDIST_WORKER_COUNT=str(CORES), OMP_NUM_THREADS="2") == 2
