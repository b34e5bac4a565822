"""python -m benchmarks --tune [op ...]: autotune the Triton ops' kernels on their sweep's points and
store the configs picked for this GPU in opgen_examples/tuned/<op>.json (shipped with the package), so
a user's first call of a size class runs the stored config instead of timing every candidate.

Each launch looks its config up by kernel, size class and dtype (`forward/4096/bfloat16`); a size
class or GPU with nothing stored autotunes at its first call, as before. OPGEN_TRITON_RETUNE=1
ignores what is stored. Backward kernels are stored where the points ran them.
"""

from __future__ import annotations

import os
from pathlib import Path


class _CallOnce:
    """A Bench whose compare() calls the op once: enough for the autotuner to time its configs."""

    def compare(self, name, case, ours, **_):
        ours()


def triton_ops() -> list[str]:
    from opgen_examples import _build

    return _build.triton_ops()


def tune(ops: list[str], module_for) -> list[Path]:
    from opgen_examples import _triton, _triton_glue

    os.environ[_triton.RETUNE_ENV] = "1"
    paths = []
    for op in ops:
        module = module_for(op)
        for point in module.SWEEP:
            module.measure(_CallOnce(), point.size, **point.args)
        entries = _triton_glue.tuned(op)
        paths.append(_triton.write_tuned(op, entries))
        print(f"{op:>24} | {len(entries)} config(s) stored for this GPU", flush=True)
    return paths
