"""Test helpers (not part of the package): devices, dtypes, shapes, memory layouts, comparison with
a float64 reference, the standard op checks (gradcheck, opcheck, torch.compile), and drawing the
arguments an op's spec declares. tests/test_opgen_conformance.py runs them over every op; an op's
own tests/test_<op>.py uses them for what is special to it.
"""

from __future__ import annotations

import importlib
import math
import os
import pkgutil
from collections.abc import Callable, Sequence
from typing import Any

import pytest
import torch

from opgen_examples._spec import OpSpec, TensorArg

HAS_CUDA = torch.cuda.is_available()
requires_cuda = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device here: CUDA kernels are tested on a GPU machine")

requires_two_cuda_devices = pytest.mark.skipif(
    torch.cuda.device_count() < 2,
    reason="fewer than 2 CUDA devices here: device-guard tests run on a multi-GPU machine",
)

DEVICES = ["cpu", pytest.param("cuda", marks=requires_cuda)]
FLOAT_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
# Empty, single-element, odd sizes, sizes that end in a partial vector/tile, several dims.
SHAPES = [(), (0,), (1,), (7,), (1031,), (4, 0, 3), (33, 65), (3, 5, 1027), (70001,)]
# How the input's memory is laid out; the values are random either way.
LAYOUTS = ["contiguous", "transposed", "strided", "misaligned"]

# (rtol, atol) against a float64 reference, for outputs rounded once from float math.
_TOLERANCES = {
    torch.float64: (1e-9, 1e-12),
    torch.float32: (2e-5, 1e-6),
    torch.float16: (2e-3, 2e-3),
    torch.bfloat16: (1.6e-2, 1e-2),
}


def tolerances(dtype: torch.dtype) -> tuple[float, float]:
    return _TOLERANCES.get(dtype, (0.0, 0.0))


def _random(shape: Sequence[int], dtype: torch.dtype, device, low: float, high: float) -> torch.Tensor:
    if dtype.is_floating_point:
        return torch.empty(shape, dtype=torch.float64, device=device).uniform_(low, high).to(dtype)
    info = torch.iinfo(dtype)
    lo, hi = max(int(low), info.min), min(int(high), info.max)
    # randint has no uint16/uint32 kernels everywhere: draw in int64, then narrow.
    return torch.randint(lo, hi + 1, tuple(shape), dtype=torch.int64, device=device).to(dtype)


def make_tensor(
    shape: Sequence[int],
    dtype: torch.dtype = torch.float32,
    device="cpu",
    layout: str = "contiguous",
    low: float = -4.0,
    high: float = 4.0,
) -> torch.Tensor:
    """Fresh random values of `shape`, laid out in memory as `layout` says:

    contiguous; transposed (dims reversed in memory); strided (every other element of a wider
    tensor); misaligned (storage offset of one element, so the data is not 16-byte aligned).
    """
    shape = tuple(shape)
    if layout == "contiguous":
        return _random(shape, dtype, device, low, high)
    if layout == "transposed":
        dims = list(range(len(shape)))[::-1]
        return _random(shape[::-1], dtype, device, low, high).permute(dims)
    if layout == "strided":
        if not shape:
            return make_tensor(shape, dtype, device, "misaligned", low, high)
        wide = _random(shape[:-1] + (2 * shape[-1],), dtype, device, low, high)
        return wide[..., ::2]
    if layout == "misaligned":
        flat = _random((math.prod(shape) + 1,), dtype, device, low, high)
        return flat[1:].view(shape)
    raise ValueError(f"unknown layout {layout!r}; expected one of {LAYOUTS}")


def at_offset(x: torch.Tensor, elements: int) -> torch.Tensor:
    """A contiguous copy of x that starts `elements` elements into fresh memory. Storages start
    16-byte aligned, so its data is elements * itemsize bytes past a 16-byte boundary."""
    flat = torch.empty(x.numel() + elements, dtype=x.dtype, device=x.device)
    shifted = flat[elements:].view(x.shape)
    shifted.copy_(x)
    return shifted


def assert_close(actual: torch.Tensor, expected: torch.Tensor, dtype: torch.dtype | None = None) -> None:
    """`actual` equals the float64 `expected` within the tolerance of `dtype` (default: actual's)."""
    dtype = dtype or actual.dtype
    assert actual.dtype == dtype, f"dtype {actual.dtype}, expected {dtype}"
    assert actual.shape == expected.shape, f"shape {tuple(actual.shape)}, expected {tuple(expected.shape)}"
    rtol, atol = tolerances(dtype)
    torch.testing.assert_close(actual.double().cpu(), expected.double().cpu(), rtol=rtol, atol=atol, equal_nan=True)


def require_built(op: str) -> None:
    """Skip the calling test module, saying how to build, if `op` is not built in this process."""
    import opgen_examples

    if op not in opgen_examples._extension.built_ops(opgen_examples.loaded_ops):
        pytest.skip(opgen_examples._extension.not_built_message(op), allow_module_level=True)


def unbuilt_ops() -> list[str]:
    """Ops in csrc/ that the installed build lacks (none under OPGEN_JIT, which builds what it loads)."""
    import opgen_examples

    if opgen_examples.loaded_ops is not None:
        return []
    built = opgen_examples._extension.built_ops(None)
    return [op for op in opgen_examples._build.op_names() if op not in built]


def all_specs() -> list[OpSpec]:
    """The SPEC (or SPECS) of every op module the package loaded (the built ops), with their out= twins;
    under TRITON_INTERPRET=1 (the Triton ops' kernels run on CPU tensors) only the Triton ops'."""
    import opgen_examples
    import opgen_examples.ops

    built = opgen_examples._extension.built_ops(opgen_examples.loaded_ops)
    specs = []
    for info in sorted(pkgutil.iter_modules(opgen_examples.ops.__path__), key=lambda m: m.name):
        if info.name not in built:
            continue
        module = importlib.import_module(f"opgen_examples.ops.{info.name}")
        declared = list(getattr(module, "SPECS", [])) + ([module.SPEC] if hasattr(module, "SPEC") else [])
        specs += [s for spec in declared for s in (spec, *spec.twins)]
    if os.environ.get("TRITON_INTERPRET") == "1":
        specs = [spec for spec in specs if getattr(spec, "triton", False)]
    return specs


def spec_cases(
    specs: Sequence[OpSpec],
    *,
    dtypes: bool = False,
    shapes: bool = False,
    where: Callable[[OpSpec], bool] = lambda spec: True,
    devices: Sequence[str] = ("cpu", "cuda"),
) -> list:
    """pytest params (spec, device, dtype, shape): every spec that `where` keeps, on each of `devices`
    it supports (CUDA cases skip without a GPU), with each of its dtypes (else float32) and, if asked,
    each of its shapes (else None)."""
    params = []
    for spec in specs:
        if not where(spec):
            continue
        for device in [d for d in spec.devices if d in devices]:
            marks = [requires_cuda] if device == "cuda" else []
            for dtype in (
                spec.dtypes if dtypes else [spec.dtypes[0] if torch.float32 not in spec.dtypes else torch.float32]
            ):
                for shape in (spec.shapes or SHAPES) if shapes else [None]:
                    case_id = "-".join(
                        [spec.name, device]
                        + ([str(dtype)[6:]] if dtypes else [])
                        + (["x".join(map(str, shape)) or "scalar"] if shapes else [])
                    )
                    params.append(pytest.param(spec, device, dtype, shape, id=case_id, marks=marks))
    return params


def draw(spec: OpSpec, shape: Sequence[int], dtype: torch.dtype, device, layout: str = "contiguous") -> dict[str, Any]:
    """Fresh arguments for one call of spec's op: each TensorArg drawn at its shape, dtype and
    domain, laid out as `layout`; scalars as declared. An out= op gets an uninitialized `out`."""

    def drawn(value):
        if isinstance(value, TensorArg):
            arg_shape = tuple(shape) if value.shape is None else tuple(value.shape(tuple(shape)))
            low, high = value.domain
            return make_tensor(arg_shape, value.dtype or dtype, device, layout, low, high)
        if isinstance(value, list):  # Tensor[]
            return [drawn(v) for v in value]
        return value

    args = {name: drawn(value) for name, value in spec.args.items()}
    if spec.condition is not None:
        spec.condition(args)
    if spec.out:
        args[spec.out] = torch.full_like(spec.reference(**args), float("nan"))
    return args


def call(spec: OpSpec, args: dict[str, Any]):
    """spec's op on args; for an out= op, the tensor it wrote."""
    result = spec.function(**args)
    if spec.out:
        assert result is args[spec.out] or result is None, f"{spec.name} writes {spec.out}= and should return it"
        return args[spec.out]
    return result


def float64_args(spec: OpSpec, args: dict[str, Any]) -> dict[str, Any]:
    """args without `out`, the floating-point tensors as detached float64 copies."""
    return {
        name: value.detach().double() if isinstance(value, torch.Tensor) and value.is_floating_point() else value
        for name, value in args.items()
        if name != spec.out
    }


def reference_in_float64(spec: OpSpec, args: dict[str, Any]):
    """The reference on float64 copies of the floating-point arguments (without `out`)."""
    return spec.reference(**float64_args(spec, args))


def error_bound(spec: OpSpec, args: dict[str, Any], dtype: torch.dtype):
    """What spec's arithmetic may add to the rounding of its results for these arguments (its
    `error_bound`; see opgen_examples/_error_model.py), or None."""
    if spec.error_bound is None:
        return None
    return spec.error_bound(dtype, **float64_args(spec, args))


def grad_error_bound(spec: OpSpec, args: dict[str, Any], grad: torch.Tensor, dtype: torch.dtype, names):
    """The same for the gradients of the inputs `names` (in that order) under the result's `grad`."""
    if spec.grad_error_bound is None:
        return None
    bounds = spec.grad_error_bound(dtype, grad.detach().double(), **float64_args(spec, args))
    return tuple(bounds.get(name) for name in names)


def assert_matches_reference(spec: OpSpec, actual, args: dict[str, Any], dtype: torch.dtype, shape=()) -> None:
    """actual is what spec's reference gives on args, in float64, within spec's error model."""
    expected = reference_in_float64(spec, args)
    assert_matches(spec, actual, expected, dtype, shape, error_bound(spec, args, dtype))


def assert_matches(spec: OpSpec, actual, expected, dtype: torch.dtype, shape: Sequence[int] = (), bound=None) -> None:
    """actual (a tensor or tuple of them) equals the float64 `expected` rounded to its dtype, within
    spec's tolerances (the output's own rounding) plus `bound` (what the op's arithmetic adds, per
    element: a tensor, a tuple with one per result, or None; see error_bound)."""
    rtol, atol = spec.tolerances.get(dtype, tolerances(dtype))
    if spec.atol_scale is not None and shape:
        atol *= spec.atol_scale(tuple(shape))
    actual, expected = as_tuple(actual), as_tuple(expected)
    bounds = as_tuple(bound) if bound is not None else (None,) * len(actual)
    assert len(actual) == len(expected), f"{len(actual)} results, expected {len(expected)}"
    assert len(bounds) == len(actual), f"{len(bounds)} error bounds for {len(actual)} results (one each, or None)"
    for index, (a, e, b) in enumerate(zip(actual, expected, bounds)):
        if a.is_floating_point():
            assert a.dtype == dtype, f"dtype {a.dtype}, expected {dtype}"
        assert a.shape == e.shape, f"shape {tuple(a.shape)}, expected {tuple(e.shape)}"
        worst, message = compare(a, e, rtol, atol, b)
        assert worst <= 1.0, (f"result {index}: " if len(actual) > 1 else "") + message


def compare(actual: torch.Tensor, expected: torch.Tensor, rtol: float, atol: float, bound=None) -> tuple[float, str]:
    """How close actual is to the float64 `expected` rounded to actual's dtype (so a value past its
    range is inf on both sides): the largest ratio of error to error allowed (atol + rtol * |expected|
    + bound; at most 1 passes), and a message naming the worst element. NaN must sit where the
    reference has NaN, and an infinity where it has the same infinity."""
    a = actual.detach().double().cpu()
    e = (expected.to(actual.dtype) if actual.is_floating_point() else expected).double().cpu()
    if a.numel() == 0:
        return 0.0, "empty"
    allowed = atol + rtol * e.abs()
    if bound is not None:
        allowed = allowed + bound.detach().double().cpu().expand_as(e)
    same = (a == e) | (a.isnan() & e.isnan())  # the same infinity, or NaN on both sides
    error = torch.where(same, 0.0, (a - e).abs().nan_to_num(math.inf))
    ratio = (error / allowed.clamp_min(torch.finfo(torch.float64).tiny)).nan_to_num(math.inf)  # inf / inf fails
    ratio = torch.where(same, 0.0, ratio)
    worst = int(ratio.flatten().argmax())
    where = tuple(int(i) for i in torch.unravel_index(torch.tensor(worst), ratio.shape))
    message = (
        f"{int((ratio > 1).sum())} of {ratio.numel()} elements beyond the error allowed; the worst at "
        f"{where}: {a[where].item()!r}, expected {e[where].item()!r} (error {error[where].item():.3g}, "
        f"allowed {allowed[where].item():.3g}: atol {atol:g} + rtol {rtol:g} * |expected|"
        + (")" if bound is None else " + the op's error bound)")
    )
    return float(ratio.flatten()[worst]), message


def check_backward_op(backward_op: Callable, forward: Callable, grad: torch.Tensor, x: torch.Tensor) -> None:
    """backward_op(grad, x) equals the gradient autograd takes through `forward` (the op's plain
    PyTorch reference) in float64, for grad and x in whatever layout they come."""
    x64 = x.detach().double().requires_grad_()
    (expected,) = torch.autograd.grad(forward(x64), x64, grad.double())
    assert_close(backward_op(grad, x), expected, x.dtype)


def check_gradients(fn: Callable, *inputs: torch.Tensor) -> None:
    """torch.autograd.gradcheck of fn in float64 (inputs are cast and set to require grad)."""
    args = [x.detach().double().requires_grad_(x.is_floating_point()) for x in inputs]
    assert torch.autograd.gradcheck(fn, args, eps=1e-6, atol=1e-5, rtol=1e-4)


def check_second_derivatives(fn: Callable, *inputs: torch.Tensor) -> None:
    """torch.autograd.gradgradcheck of fn in float64: second derivatives match finite differences."""
    args = [x.detach().double().requires_grad_(x.is_floating_point()) for x in inputs]
    assert torch.autograd.gradgradcheck(fn, args, eps=1e-6, atol=1e-5, rtol=1e-4)


def check_second_derivative_raises(fn: Callable, *inputs: torch.Tensor) -> None:
    """A second derivative through fn raises a clear error, not PyTorch's silent drop of ops with no formula."""
    inputs = tuple(t.detach().requires_grad_() for t in inputs)
    grads = torch.autograd.grad(fn(*inputs).sum(), inputs, create_graph=True)
    with pytest.raises(RuntimeError, match="second derivatives are not implemented"):
        torch.autograd.grad(sum(g.sum() for g in grads), inputs)


def check_opcheck(op, *args, **kwargs) -> None:
    """torch.library.opcheck: schema, fake (meta) kernel, autograd registration, AOT dispatch."""
    torch.library.opcheck(op, args, kwargs)


def check_compiles(fn: Callable, *args: torch.Tensor) -> None:
    """fn under torch.compile(fullgraph=True) (no graph breaks) gives the eager result."""
    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True)
    expected = fn(*args)
    actual = compiled(*args)
    for a, e in zip(as_tuple(actual), as_tuple(expected)):
        torch.testing.assert_close(a, e)


# A sleep on one stream that a test's launches must not wait for (the side stream's head start, and
# cuda:0 held back in the device check), in clock cycles: ~20 ms at 2 GHz, far longer than the launches.
_HEAD_START_SLEEP_CYCLES = 40_000_000


def call_on_side_stream(fn: Callable, *inputs: torch.Tensor):
    """fn(*inputs) under a fresh side stream, on which `inputs` get their values only behind a sleep.

    The inputs are zeroed on the current stream first and written back on the side stream after
    the sleep, so a kernel launched on any stream but the current one reads the zeros (a wrong
    answer, not a lucky pass). Returns fn's result once the side stream is done.
    """
    values = [t.clone() for t in inputs]
    for t in inputs:
        t.zero_()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        torch.cuda._sleep(_HEAD_START_SLEEP_CYCLES)
        for t, value in zip(inputs, values):
            t.copy_(value)
        result = fn(*inputs)
    stream.synchronize()
    return result


def check_runs_on_the_inputs_device(fn: Callable, *inputs: torch.Tensor) -> None:
    """fn(*inputs) with the inputs moved to cuda:1 while cuda:0 is the current device gives, on
    cuda:1, what it gives on cuda:0. A kernel without a device guard launches on cuda:0's stream.
    With peer access on, it could still read cuda:1's memory and get the right answer, so cuda:0's
    stream is held behind a sleep first: such a launch has not run when cuda:1's results are read."""
    expected = as_tuple(fn(*inputs))
    moved = [t.to("cuda:1") for t in inputs]
    with torch.cuda.device(0):
        torch.cuda._sleep(_HEAD_START_SLEEP_CYCLES)
        actual = as_tuple(fn(*moved))
    for a, e in zip(actual, expected):
        assert a.device == torch.device("cuda", 1), f"an output on {a.device}, the inputs on cuda:1"
        torch.testing.assert_close(a.cpu(), e.cpu())
    torch.cuda.synchronize(0)


def as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


# ---- what models do to an op: tags, determinism, CUDA graphs, autocast, export ------------------


def registers_tags() -> bool:
    """Whether this torch takes the tags an op's registration gives: the full ATen API always, the
    stable ABI from torch 2.12 on (common/definitions.h)."""
    import opgen_examples

    version = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
    return opgen_examples._build.TORCH_API == "aten" or version >= (2, 12)


def assert_same_bits(actual, expected) -> None:
    """Each tensor of actual holds exactly expected's bits (NaNs included), with its shape and dtype."""
    actual, expected = as_tuple(actual), as_tuple(expected)
    assert len(actual) == len(expected), f"{len(actual)} results, then {len(expected)}"
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype and a.shape == e.shape, f"{a.dtype} {tuple(a.shape)}, then {e.dtype} {tuple(e.shape)}"
        differ = (a.detach().reshape(-1).view(torch.uint8) != e.detach().reshape(-1).view(torch.uint8)).sum()
        assert differ == 0, f"{int(differ)} of {a.numel() * a.element_size()} bytes differ between two runs"


def tensor_names(args: dict[str, Any]) -> list[str]:
    return [name for name, value in args.items() if isinstance(value, torch.Tensor)]


def capture_in_cuda_graph(fn: Callable, *static: torch.Tensor) -> tuple[torch.cuda.CUDAGraph, Any]:
    """fn(*static) captured in a CUDA graph (after a warm-up call on a side stream, as torch's CUDA
    graph notes ask); (graph, its output): replay it after writing new values into `static`."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn(*static)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        output = fn(*static)
    return graph, output


def aoti_package(fn: Callable, example: Sequence[torch.Tensor], path) -> Callable:
    """fn(*tensors) exported (torch.export) and compiled into an AOTInductor package at `path`,
    loaded back: what a model with the op is served from, without Python."""

    class Call(torch.nn.Module):
        def forward(self, *tensors):
            return fn(*tensors)

    program = torch.export.export(Call(), tuple(example))
    # The wrapper's host code unoptimized: it compiles in about 2/3 of the time, and the kernels are the op's own.
    configs = (
        {"aot_inductor.compile_wrapper_opt_level": "O0"}
        if _has_inductor_config("aot_inductor.compile_wrapper_opt_level")
        else {}
    )
    package = torch._inductor.aoti_compile_and_package(program, package_path=str(path), inductor_configs=configs)
    _refuse_own_cxx_runtime(package)
    return torch._inductor.aoti_load_package(package)


def _refuse_own_cxx_runtime(package) -> None:
    """Fail, naming the cause, where the package's compiled code carries its own C++ runtime
    (opgen_examples/_elf.py): loading it would crash the process (pytest -n: a worker lost, "node down")."""
    import tempfile
    import zipfile

    from opgen_examples import _elf

    with zipfile.ZipFile(package) as archive, tempfile.TemporaryDirectory() as scratch:
        for name in (n for n in archive.namelist() if n.endswith(".so")):
            if _elf.carries_own_cxx_runtime(archive.extract(name, scratch)):
                pytest.fail(_elf.own_cxx_runtime_message(name, "the compiler AOTInductor used (CXX)", "Run the tests"))


def _has_inductor_config(name: str) -> bool:
    import torch._inductor.config

    section, _, key = name.rpartition(".")
    return hasattr(getattr(torch._inductor.config, section, None), key)


# The > 2**31-element case: past the last 32-bit index, by a few elements more than a vector.
LARGE_NUMEL = 2**31 + 77
_LARGE_CHECKED = 4096  # elements checked at the start, on each side of 2**31, and at the end (they may overlap)


def large_memory_gib(spec: OpSpec, device) -> float:
    """The memory the > 2**31-element case of spec's op takes on `device` (on the CPU only the
    result's pages are written: see draw_large)."""
    tensors = len(spec.tensor_args) + 1
    return (tensors if str(device).startswith("cuda") else 1) * LARGE_NUMEL * 2 / 2**30 + 1


def big_shape(spec: OpSpec) -> tuple:
    """2**20 elements, enough for a kernel to run long enough to race a stream: one row of them, or 16
    rows of 2**16 for a Triton row-wise op (its rows are at most 64K)."""
    return (16, 1 << 16) if spec.triton and spec.kind == "rowwise" else (1 << 20,)


def large_cases(specs: Sequence[OpSpec]) -> list:
    """spec_cases of the ops that declare `large`, each skipped where its device has too little
    memory (a GPU's total, the CPU's available memory when the tests are collected)."""
    params = []
    for param in spec_cases(specs, where=lambda spec: spec.large):
        spec, device = param.values[0], param.values[1]
        if isinstance(spec.large, (tuple, list)) and device not in spec.large:
            continue  # declared for its other devices only (a Triton op's CPU path is the reference)
        need = large_memory_gib(spec, device)
        have = cuda_memory_gib() if device == "cuda" else available_memory_gib()
        enough = pytest.mark.skipif(have < need, reason=f"needs {need:.0f} GiB of {device} memory, {have:.0f} here")
        params.append(pytest.param(*param.values, id=param.id, marks=[*param.marks, enough]))
    return params


def draw_large(spec: OpSpec, n: int, device) -> tuple[dict[str, Any], list[slice]]:
    """float16 arguments of n elements each for spec's op, and the parts of the result to check.

    Only those parts of the inputs get random values (the rest is whatever the allocator gives,
    which the op may compute anything from): drawing all of them would cost a float64 temporary
    of 8 * n bytes, and on the CPU the inputs' other pages are never written, so they take no memory."""
    parts = [
        slice(0, _LARGE_CHECKED),
        slice(2**31 - _LARGE_CHECKED, 2**31 + _LARGE_CHECKED),
        slice(n - _LARGE_CHECKED, n),
    ]
    parts = [slice(part.start, min(part.stop, n)) for part in parts]
    args = {}
    for name, value in spec.args.items():
        if isinstance(value, TensorArg):
            shape = (n,) if value.shape is None else tuple(value.shape((n,)))
            assert shape == (n,), f"the > 2**31 case draws 1-D tensors of one length; {name} would be {shape}"
            args[name] = torch.empty(n, dtype=torch.float16, device=device)
            for part in parts:
                low, high = value.domain
                args[name][part] = make_tensor((part.stop - part.start,), torch.float16, device, low=low, high=high)
        else:
            args[name] = value
    if spec.out:
        args[spec.out] = torch.empty(n, dtype=torch.float16, device=device)
    return args, parts


def available_memory_gib() -> float:
    """Memory this machine can still give (MemAvailable), or 0 where it does not say."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return 0.0


def cuda_memory_gib() -> float:
    return torch.cuda.get_device_properties(0).total_memory / 2**30 if HAS_CUDA else 0.0


def requires_cuda_memory(gib: float):
    """Skip unless a GPU with at least `gib` GiB is present (for tests past 2**31 elements)."""
    return pytest.mark.skipif(cuda_memory_gib() < gib, reason=f"needs a CUDA device with {gib} GiB")
