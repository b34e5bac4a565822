"""Way 4 of four to build the ops: CMake. CMakeLists.txt compiles the same csrc/ into the same library
as setup.py (it asks opgen_examples/_build.py for the sources and flags), and opgen_examples loads it
from the build folder, here named by OPGEN_LIBRARY, instead of an installed `_C`.

    cd examples && python scripts/build_cmake.py [BUILD_DIR]    # configures, builds, prints one OK line

BUILD_DIR defaults to build/cmake, the folder the package looks in by itself. OPGEN_CPU_ONLY=1 builds
CPU-only, TORCH_CUDA_ARCH_LIST picks the GPU architectures, MAX_JOBS the parallel compile jobs;
BUILD_DIR/compile_commands.json is for clangd and IDEs.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent


def cmake(*args: str) -> None:
    subprocess.run(["cmake", *args], cwd=PROJECT, check=True)


def main() -> None:
    build_dir = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else PROJECT / "build" / "cmake"
    cmake("-S", ".", "-B", str(build_dir), f"-DPython_EXECUTABLE={sys.executable}")
    cmake("--build", str(build_dir), "-j", os.environ.get("MAX_JOBS", str(os.cpu_count() or 1)))
    assert (build_dir / "compile_commands.json").is_file(), "no compile_commands.json"

    os.environ.pop("OPGEN_JIT", None)
    os.environ["OPGEN_LIBRARY"] = str(build_dir)  # before the import below
    sys.path.insert(0, str(PROJECT))
    import torch
    import torch.nn.functional as F

    import opgen_examples
    from opgen_examples import _build

    library = Path(opgen_examples._C.__file__)
    assert library.parent == build_dir and opgen_examples.loaded_ops is None, library
    with_cuda = opgen_examples._extension.build_info()["cuda"] is not None
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    compiled = [op for op in _build.op_names() if op not in _build.triton_ops()]  # Triton ops: nothing for CMake
    for op in compiled:
        assert has(f"examples::{op}", "CPU"), f"{op}: no CPU kernel registered"
        if list((PROJECT / "csrc" / op).glob("*.cu")):  # (custom_add registers its CUDA kernel from C++)
            assert has(f"examples::{op}", "CUDA") == with_cuda, f"{op}: CUDA kernel registered: {not with_cuda}"
    devices = ["cpu"] + (["cuda"] if with_cuda and torch.cuda.is_available() else [])
    for device in devices:
        x = torch.randn(33, 65, device=device)
        y = torch.randn(33, 65, device=device)
        b = torch.randn(65, 17, device=device)
        torch.testing.assert_close(torch.ops.examples.vector_add(x, y), x + y, rtol=0, atol=0)
        torch.testing.assert_close(opgen_examples.gelu_approx(x), F.gelu(x, approximate="tanh"), rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(opgen_examples.gemm(x, b), x @ b, rtol=1e-4, atol=1e-4)
        # An error raised in C++ reaches Python (a second C++ runtime linked into _C crashes here).
        try:
            torch.ops.examples.vector_add(x, b)
            raise AssertionError("vector_add accepted tensors of different shapes")
        except RuntimeError as error:
            assert "must have the same shape" in str(error), error
    print(f"OK build_cmake: {library.name} built by CMake ({'CUDA' if with_cuda else 'CPU-only'}, "
          f"{len(compiled)} ops, compile_commands.json) and loaded through OPGEN_LIBRARY; "
          f"vector_add, gelu_approx and gemm match PyTorch and errors reach Python on {', '.join(devices)}")


if __name__ == "__main__":
    main()
