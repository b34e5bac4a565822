"""Helpers for tests/test_<op>.py: devices, dtypes, shapes, memory layouts, comparison with a
float64 reference, and the standard op checks (gradcheck, opcheck, torch.compile)."""
from __future__ import annotations

import math
from typing import Callable, Sequence

import pytest
import torch

HAS_CUDA = torch.cuda.is_available()
requires_cuda = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device here: CUDA kernels are tested on a GPU machine")

requires_two_cuda_devices = pytest.mark.skipif(
    torch.cuda.device_count() < 2, reason="fewer than 2 CUDA devices here: device-guard tests run on a multi-GPU machine")

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


def make_tensor(shape: Sequence[int], dtype: torch.dtype = torch.float32, device="cpu", layout: str = "contiguous",
                low: float = -4.0, high: float = 4.0) -> torch.Tensor:
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


def assert_close(actual: torch.Tensor, expected: torch.Tensor, dtype: torch.dtype | None = None) -> None:
    """`actual` equals the float64 `expected` within the tolerance of `dtype` (default: actual's)."""
    dtype = dtype or actual.dtype
    assert actual.dtype == dtype, f"dtype {actual.dtype}, expected {dtype}"
    assert actual.shape == expected.shape, f"shape {tuple(actual.shape)}, expected {tuple(expected.shape)}"
    rtol, atol = tolerances(dtype)
    torch.testing.assert_close(actual.double().cpu(), expected.double().cpu(), rtol=rtol, atol=atol, equal_nan=True)


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
    for a, e in zip(_as_tuple(actual), _as_tuple(expected)):
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
    expected = _as_tuple(fn(*inputs))
    moved = [t.to("cuda:1") for t in inputs]
    with torch.cuda.device(0):
        torch.cuda._sleep(_HEAD_START_SLEEP_CYCLES)
        actual = _as_tuple(fn(*moved))
    for a, e in zip(actual, expected):
        assert a.device == torch.device("cuda", 1), f"an output on {a.device}, the inputs on cuda:1"
        torch.testing.assert_close(a.cpu(), e.cpu())
    torch.cuda.synchronize(0)


def _as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def cuda_memory_gib() -> float:
    return torch.cuda.get_device_properties(0).total_memory / 2**30 if HAS_CUDA else 0.0


def requires_cuda_memory(gib: float):
    """Skip unless a GPU with at least `gib` GiB is present (for tests past 2**31 elements)."""
    return pytest.mark.skipif(cuda_memory_gib() < gib, reason=f"needs a CUDA device with {gib} GiB")
