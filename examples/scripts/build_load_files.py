"""Way 2 of four to build a custom op: torch.utils.cpp_extension.load on the op's files.

opgen_examples.jit.load("vector_add") compiles csrc/vector_add/*.cpp (and *.cu where CUDA builds are
possible: torch with CUDA and a toolkit, OPGEN_CPU_ONLY unset) into a library whose TORCH_LIBRARY
blocks register torch.ops.examples.vector_add, the same op the installed `_C` provides. OPGEN_JIT
is set before opgen_examples is imported, so that the installed `_C` is not loaded alongside.

    cd examples && python scripts/build_load_files.py    # prints one OK line
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ["OPGEN_JIT"] = "vector_add"  # before the import below: JIT-build vector_add, not `_C`
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this source tree's csrc/ and package

import torch  # noqa: E402

import opgen_examples  # noqa: E402  (compiles vector_add via jit.load; cached by ninja)
from opgen_examples import jit  # noqa: E402


def has_cuda_kernel(op: str) -> bool:
    return torch._C._dispatch_has_kernel_for_dispatch_key(op, "CUDA")


def main() -> None:
    jit.load("vector_add")  # what the import did; a second call is a no-op
    assert "opgen_examples._C" not in sys.modules, "the installed _C was loaded next to the JIT build"
    assert opgen_examples.loaded_ops == ["vector_add"], opgen_examples.loaded_ops
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() and has_cuda_kernel("examples::vector_add") else [])
    for device in devices:
        for dtype in (torch.float32, torch.float16):
            a = torch.randn(70001, device=device, dtype=dtype)
            b = torch.randn(70002, device=device, dtype=dtype)[1:]  # misaligned view
            torch.testing.assert_close(torch.ops.examples.vector_add(a, b), a + b, rtol=0, atol=0)
            torch.testing.assert_close(opgen_examples.vector_add(a, b), a + b, rtol=0, atol=0)
    print(f"OK build_load_files: csrc/vector_add compiled by cpp_extension.load; torch.ops.examples.vector_add "
          f"and opgen_examples.vector_add == a + b on {', '.join(devices)} (float32, float16, misaligned b)")


if __name__ == "__main__":
    main()
