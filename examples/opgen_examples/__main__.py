"""`python -m opgen_examples`: what is built, and where to go next."""

import torch

from . import _build, _extension, loaded_ops


def main() -> None:
    info = _extension.build_info() or {}
    print(f"opgen_examples on torch {torch.__version__} (CUDA {torch.version.cuda or 'none'})")
    if loaded_ops is not None:
        print(f"  JIT builds ({_extension.JIT_ENV}) of: {', '.join(loaded_ops)}")
    elif info:
        api = info.get("torch_api")
        print(
            f"  build: torch_api {api}, built with torch {info.get('built_with_torch')}, runs on torch "
            f"{info.get('runs_on_torch')}"
        )
        cuda = f"yes, for {info.get('cuda_arch_list')}" if info.get("cuda") else "no (CPU-only build)"
        print(f"  CUDA kernels: {cuda}")
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    built = _extension.built_ops(loaded_ops)
    print(f"  ops (torch.ops.{_build.NAMESPACE}.*):")
    for op in _build.op_names():
        if op not in built:
            print(f"    {op:24s} not built: {_extension.not_built_message(op)}")
            continue
        name = f"{_build.NAMESPACE}::{op}"
        devices = [key for key in ("CPU", "CUDA") if has(name, key)]
        print(f"    {op:24s} {' '.join(devices) or 'no kernels'}")
    print(
        "Next: an op's math is in csrc/<op>/<op>.h (blank ops: <op>.cpp and <op>_cuda.cu), its reference and SPEC in "
        'opgen_examples/ops/<op>.py; `opgen new <op> --schema "(Tensor a, float s) -> Tensor"` adds one; '
        "`python -m pytest` tests them all."
    )


if __name__ == "__main__":
    main()
