"""Way 3 of four to build custom ops: setup.py (pip install --no-build-isolation -e .) compiles every
op into one extension, opgen_examples._C, that `import opgen_examples` loads. Its ops are then
called through the Python wrappers (opgen_examples.<op>) or the dispatcher (torch.ops.examples.<op>).

    cd examples && pip install --no-build-isolation -e . && python scripts/build_installed.py
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

os.environ.pop("OPGEN_JIT", None)  # the installed `_C`, not JIT builds
os.environ["OPGEN_LIBRARY"] = "0"  # nor a CMake build (scripts/build_cmake.py) in build/cmake
sys.path.append(str(Path(__file__).resolve().parent.parent))  # only if the package is not installed

import opgen_examples  # noqa: E402
from opgen_examples.ops.moe import reference as moe_reference  # noqa: E402


def cases(device: str) -> dict:
    """op name -> (args, the same in plain PyTorch)."""
    x = torch.randn(33, 65, device=device)
    y = torch.randn(33, 65, device=device)
    bias = torch.randn(65, device=device)
    a = torch.randn(33, 17, device=device)
    b = torch.randn(17, 65, device=device)
    router = torch.randn(4, 65, device=device)
    w1 = torch.randn(4, 24, 65, device=device) / 8
    w2 = torch.randn(4, 65, 24, device=device) / 5
    return {
        "vector_add": ((x, y), x + y),
        "scale": ((x, 3.0), x * 3.0),
        "fused_relu_scale": ((x, 0.5), torch.relu(x) * 0.5),
        "gelu_approx": ((x,), F.gelu(x, approximate="tanh")),
        "fused_bias_gelu": ((x, bias), F.gelu(x + bias, approximate="tanh")),
        "gemm": ((a, b), a @ b),
        "moe": ((x, router, w1, w2, 2), moe_reference(x, router, w1, w2, 2)),
    }


def main() -> None:
    assert opgen_examples.loaded_ops is None and "opgen_examples._C" in sys.modules, "not the installed _C"
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for device in devices:
        for name, (args, expected) in cases(device).items():
            wrapper = getattr(opgen_examples, name)
            dispatcher = getattr(torch.ops.examples, name)
            torch.testing.assert_close(wrapper(*args), expected, rtol=1e-4, atol=1e-5)
            torch.testing.assert_close(dispatcher(*args), expected, rtol=1e-4, atol=1e-5)
    names = ", ".join(cases("cpu"))
    print(f"OK build_installed: opgen_examples._C loaded; opgen_examples.<op> and torch.ops.examples.<op> match "
          f"PyTorch on {', '.join(devices)} for {names}")


if __name__ == "__main__":
    main()
