"""`python -m opgen_examples`: what is built, and where to go next."""

import torch

from . import _build, _extension, loaded_ops


def main() -> None:
    info = _extension.build_info() or {}
    sources = _extension.sources_here()
    print(f"opgen_examples on torch {torch.__version__} (CUDA {torch.version.cuda or 'none'})")
    if loaded_ops is not None:
        print(f"  JIT builds ({_extension.JIT_ENV}) of: {', '.join(loaded_ops)}")
    elif info:
        cuda = info.get("cuda")
        variant = info.get("variant") or _build.variant_name(cuda)  # builds from before variants
        print(
            f"  build: {variant}, torch_api {info.get('torch_api')}, built with torch {info.get('built_with_torch')}, "
            f"runs on torch {info.get('runs_on_torch')}"
        )
        kernels = f"CUDA {cuda}, for {info.get('cuda_arch_list')}" if cuda else "none (CPU-only build)"
        print(f"  CUDA kernels: {kernels}")
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    built = _extension.built_ops(loaded_ops)
    print(f"  ops (torch.ops.{_build.NAMESPACE}.*):")
    # With the sources here, every op in them (built or not); else (an installed wheel) those it has.
    for op in _build.op_names() if sources else sorted(built):
        if op not in built:
            print(f"    {op:24s} not built: {_extension.not_built_message(op)}")
            continue
        name = f"{_build.NAMESPACE}::{op}"
        devices = [key for key in ("CPU", "CUDA") if has(name, key)]
        print(f"    {op:24s} {' '.join(devices) or 'no kernels'}")
    if sources:
        print(
            "Next: an op's math is in csrc/<op>/<op>.h (blank ops: <op>.cpp and <op>_cuda.cu), its reference and "
            'SPEC in opgen_examples/ops/<op>.py; `opgen new <op> --schema "(Tensor a, float s) -> Tensor"` adds '
            "one; `python -m pytest` tests them all."
        )
    else:
        print(f"  installed at {_build.PACKAGE_DIR} (no sources beside it)")


if __name__ == "__main__":
    main()
