"""The default benchmark of a declared op (`declare(...)` in <package>/ops/<op>.py), made from its SPEC:
what a benchmarks/bench_<op>.py would hold (run, measure, SWEEP, TARGETS, host_calls). An op with a
bench_<op>.py of its own uses that instead.

Element-wise: each tensor read once and the result written once, 2^10..2^28 elements, misaligned
views and odd sizes. Reduction: rows of 2^4..2^20 elements at 2^26 elements in all, and odd rows.
Row-wise: rows of 2^6..2^16 elements at 2^26 input elements in all, and odd rows; each row tensor read
once, the result written once (a broadcast weight is read from cache).
"""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import torch

from .sweep import FLOATING_16_32, dtype_name, elementwise_points, line, powers_of_two, size_name, tensor
from .targets import beats_eager_and_compile, host_within, near_copy, near_copy_when_misaligned

PACKAGE = "opgen_examples"
REDUCTION_TOTAL = 1 << 26  # elements per point: far larger than L2


def declared_ops() -> list[str]:
    from opgen_examples import _build

    return sorted(_build.declared_ops())


def module_for(op: str) -> SimpleNamespace:
    """bench_<op>'s attributes, made from the op's SPEC."""
    return from_spec(importlib.import_module(f"{PACKAGE}.ops.{op}").SPEC)


def from_spec(spec) -> SimpleNamespace:
    scalars = {name: value for name, value in spec.args.items() if name not in spec.tensor_args}
    if spec.kind == "reduction":
        return _reduction(spec, scalars)
    if spec.kind == "rowwise":
        return _rowwise(spec, scalars)
    return _elementwise(spec, scalars)


def _elementwise(spec, scalars: dict) -> SimpleNamespace:
    def inputs(size: int, dtype: torch.dtype = torch.float32, misaligned: bool = False) -> dict:
        return {name: tensor(size, dtype, misaligned) for name in spec.tensor_args}

    def measure(bench, size: int, dtype: torch.dtype, misaligned: bool = False) -> None:
        args = {**inputs(size, dtype, misaligned), **scalars}
        if spec.out:
            args[spec.out] = tensor(size, dtype, misaligned)
        element = torch.empty((), dtype=dtype).element_size()
        # Each input read once, the result written once.
        bytes_moved = (len(spec.tensor_args) + 1) * size * element
        reference_args = {k: v for k, v in args.items() if k != spec.out}
        case = f"n={size_name(size)} {dtype_name(dtype)}{' misaligned' if misaligned else ''}"
        bench.compare(
            spec.name,
            case,
            bytes_moved=bytes_moved,
            ours=lambda: spec.function(**args),
            eager=lambda: spec.reference(**reference_args),
        )

    def run(bench) -> None:
        for dtype in (torch.float32, torch.bfloat16):
            measure(bench, 1 << 28, dtype)  # far larger than L2

    def host_calls(numel: int) -> dict:
        args = {**inputs(numel), **scalars}
        if spec.out:
            args[spec.out] = tensor(numel)
        first = args[spec.tensor_args[0]]
        return {
            "ours": lambda: spec.function(**args),
            "raw": lambda: spec.op(**args),
            "native": lambda: torch.add(first, first),
        }

    return SimpleNamespace(
        SIZE_LABEL="elements",
        SWEEP=elementwise_points(),
        HOST_NATIVE="torch.add",
        TARGETS=[
            beats_eager_and_compile(),
            near_copy_when_misaligned("float32 misaligned"),
            host_within(2.0, "torch.add"),
        ],
        run=run,
        measure=measure,
        host_calls=host_calls,
    )


def _reduction(spec, scalars: dict) -> SimpleNamespace:
    x = spec.tensor_args[0]

    def measure(bench, size: int, dtype: torch.dtype, rows: int = 0) -> None:
        rows = rows or max(1, REDUCTION_TOTAL // size)
        args = {x: tensor((rows, size), dtype), **scalars}
        if "dim" in args:
            args["dim"] = -1
        bytes_moved = args[x].nbytes + rows * args[x].element_size()
        bench.compare(
            spec.name,
            f"{rows}x{size} {dtype_name(dtype)}",
            bytes_moved=bytes_moved,
            ours=lambda: spec.function(**args),
            eager=lambda: spec.reference(**args),
        )

    def run(bench) -> None:
        for rows, cols in [(1 << 20, 256), (4096, 65536)]:  # short rows (a warp each), long rows (a block each)
            measure(bench, cols, torch.float32, rows=rows)

    def host_calls(numel: int) -> dict:
        args = {x: tensor((numel, 1)), **scalars}
        return {
            "ours": lambda: spec.function(**args),
            "raw": lambda: spec.op(**args),
            "native": lambda: torch.sum(args[x], dim=-1),
        }

    return SimpleNamespace(
        SIZE_LABEL=f"row length (rows x length = 2^{REDUCTION_TOTAL.bit_length() - 1})",
        SWEEP=[
            *(p for dtype in FLOATING_16_32 for p in line(dtype_name(dtype), powers_of_two(4, 20, 2), dtype=dtype)),
            *line("float32 odd rows", [7, 1000, 4097, 100_003], dtype=torch.float32),
        ],
        HOST_NATIVE="torch.sum",
        TARGETS=[beats_eager_and_compile(), host_within(2.0, "torch.sum")],
        run=run,
        measure=measure,
        host_calls=host_calls,
    )


def _rowwise(spec, scalars: dict) -> SimpleNamespace:
    """rows x length sweeps; `size` is the row length (the case's d, as SPEC's shapes give it)."""
    x = spec.tensor_args[0]

    def arguments(rows: int, size: int, dtype: torch.dtype) -> dict:
        case = (rows, size)
        shapes = {name: getattr(spec.args[name], "shape", None) or (lambda shape: shape) for name in spec.tensor_args}
        args = {name: tensor(shapes[name](case), dtype) for name in spec.tensor_args}
        if spec.out:
            result = spec.reference(**args, **scalars)
            args[spec.out] = torch.empty_like(result) if isinstance(result, torch.Tensor) else tensor(case, dtype)
        return {**args, **scalars}

    def measure(bench, size: int, dtype: torch.dtype, rows: int = 0) -> None:
        rows = rows or max(1, REDUCTION_TOTAL // size)
        args = arguments(rows, size, dtype)
        reference_args = {k: v for k, v in args.items() if k != spec.out}
        result = args[spec.out] if spec.out else spec.function(**args)
        written = result.nbytes if isinstance(result, torch.Tensor) else args[x].nbytes
        # Each row tensor read once and the result written once; a broadcast weight comes from cache.
        rows_read = sum(args[name].nbytes for name in spec.tensor_args if args[name].dim() > 1)
        bench.compare(
            spec.name,
            f"{rows}x{tuple(args[x].shape)[-1]} {dtype_name(dtype)}",
            bytes_moved=rows_read + written,
            ours=lambda: spec.function(**args),
            eager=lambda: spec.reference(**reference_args),
        )

    def run(bench) -> None:
        for rows, cols in [(1 << 16, 1024), (4096, 16384)]:
            for dtype in (torch.bfloat16, torch.float32):
                measure(bench, cols, dtype, rows=rows)

    def host_calls(numel: int) -> dict:
        args = arguments(1, numel, torch.float32)
        return {
            "ours": lambda: spec.function(**args),
            "raw": lambda: spec.op(**args),
            "native": lambda: torch.softmax(args[x], dim=-1),
        }

    triton = getattr(spec, "triton", False)
    odd = [7, 1000, 4097] + ([] if triton else [100_003])  # a Triton row-wise op: rows <= 64K
    # bfloat16 at every power of two from 1024 on: the kind's bandwidth target (not a Triton op's).
    bf16_lengths = sorted({*powers_of_two(6, 16, 2), *powers_of_two(10, 16)})
    return SimpleNamespace(
        SIZE_LABEL=f"row length (rows x length = 2^{REDUCTION_TOTAL.bit_length() - 1})",
        SWEEP=[
            *line("float32", powers_of_two(6, 16, 2), dtype=torch.float32),
            *line("bfloat16", bf16_lengths, key=powers_of_two(10, 16), dtype=torch.bfloat16),
            *line("float16", powers_of_two(6, 16, 2), dtype=torch.float16),
            *line("float32 odd rows", odd, dtype=torch.float32),
        ],
        HOST_NATIVE="torch.softmax",
        TARGETS=[
            beats_eager_and_compile(),
            *([] if triton else [near_copy("bfloat16", min_size=1024)]),
            host_within(2.0, "torch.softmax"),
        ],
        run=run,
        measure=measure,
        host_calls=host_calls,
    )
