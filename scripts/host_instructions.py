"""Where the host time of one op call goes, in CPU instructions (valgrind's callgrind): deterministic,
so a change of a few hundred instructions shows, where wall-clock timings of a few microseconds on a
shared machine cannot tell it from noise.

    python scripts/host_instructions.py [--op vector_add] [--cases torch.add,function,...]

Each case is a statement on one-element CPU tensors, run in a loop of 300 and then of 1300 calls,
each loop under callgrind's collection (an `exec` of its own); the difference over 1000 calls is the
count per call, free of start-up and loop set-up. Cases (for a binary element-wise op of examples/,
against torch.add):

    torch.add            the native op, through its generated Python binding
    function             the op's public function (what users call)
    overload             the torch.ops overload's C++ callable, through the op's autograd layer
    below autograd       the same below the autograd layer: `with _AutoDispatchBelowAutograd()`
    kernel directly      the same straight to the CPU kernel (OpOverload._op_dk): no dispatch, no guard
    aten below autograd  torch.ops.aten.add.Tensor the same way: the native kernel by our op's route
    guard only           `with _AutoDispatchBelowAutograd(): pass`

Needs valgrind and a built examples/ (`pip install --no-build-isolation -e examples`).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CASES = {
    "torch.add": "torch.add(a, b)",
    "function": "function(a, b)",
    "overload": "overload._op(a, b)",
    "below autograd": "with below(): overload._op(a, b)",
    "kernel directly": "overload._op_dk(CPU, a, b)",
    "aten below autograd": "with below(): aten_add._op(a, b)",
    "guard only": "with below(): pass",
}
LOOPS = (300, 1300)

PROGRAM = """
import torch
import opgen_examples.ops
from opgen_examples._ops import ops
a, b = torch.randn(1), torch.randn(1)
function = getattr(opgen_examples.ops, {op!r})
overload = getattr(ops, {op!r}).default
aten_add = torch.ops.aten.add.Tensor
below = torch._C._AutoDispatchBelowAutograd
CPU = torch._C.DispatchKey.CPU
for _ in range(100):  # warm: caches, lazy initialization
    {statement}
for n in {loops}:
    exec(f"for _ in range({{n}}):\\n    {statement}")
"""


def instructions_per_call(op: str, statement: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        program = Path(tmp) / "case.py"
        program.write_text(PROGRAM.format(op=op, statement=statement, loops=LOOPS))
        out = Path(tmp) / "callgrind.out"
        # Collect only inside `exec` and write a profile as each one ends: the last two are the loops.
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=builtin_exec",
             "--dump-after=builtin_exec", f"--callgrind-out-file={out}", sys.executable, str(program)],
            check=True, capture_output=True, env={**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(EXAMPLES)},
        )
        dumps = sorted(Path(tmp).glob("callgrind.out.*"), key=lambda p: int(p.suffix[1:]))
        totals = [_total(dump) for dump in dumps[-2:]]
    return round((totals[1] - totals[0]) / (LOOPS[1] - LOOPS[0]))


def _total(dump: Path) -> int:
    for line in dump.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"{dump}: no instruction total")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--op", default="vector_add", help="a binary element-wise op of examples/")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated, of: " + ", ".join(CASES))
    args = parser.parse_args()
    print(f"| case ({args.op}, one-element float32 CPU tensors) | instructions a call |\n|---|---|")
    for case in args.cases.split(","):
        print(f"| {case} | {instructions_per_call(args.op, CASES[case]):,} |", flush=True)


if __name__ == "__main__":
    main()
