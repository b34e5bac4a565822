"""What a Triton op's derived launchers share: Triton itself (or a stand-in where it is not
installed), launching a kernel with a stored or autotuned config, and the input checks the C++
kinds make in their host code, in the same words. Template-owned.

Op modules import `triton` and `tl` from here, so a machine without Triton (a CPU-only torch) can
still import them: `@triton.jit` then keeps the plain function, and the op runs its CPU path only.
TRITON_INTERPRET=1 runs the kernels in Triton's interpreter, on CPU tensors too (how a machine
without a GPU tests them).
"""

from __future__ import annotations

import functools
import json
import os
import threading
from pathlib import Path

import torch

try:
    import triton
    import triton.language as tl

    AVAILABLE = True
except ImportError:  # CPU-only torch wheels come without Triton
    AVAILABLE = False

    class _Stub:
        """`triton` and `tl` where Triton is missing: enough for an op module to define its math."""

        @staticmethod
        def constexpr(value=None):  # `K = tl.constexpr(0.5)`: the math's constants
            return value

        @staticmethod
        def jit(fn=None, **options):
            return fn if fn is not None else (lambda f: f)

        def __getattr__(self, name):
            return None

    triton = tl = _Stub()

INTERPRET = AVAILABLE and os.environ.get("TRITON_INTERPRET") == "1"
RETUNE_ENV = "OPGEN_TRITON_RETUNE"  # 1: ignore the stored configs (autotune every size class afresh)
# Where `python -m benchmarks --tune` stores the configs it measured: {gpu name: {key: config}}.
TUNED_DIR = Path(__file__).resolve().parent / "tuned"
_FLOATING = (torch.float32, torch.float16, torch.bfloat16, torch.float64)


def next_power_of_2(n: int) -> int:
    if isinstance(n, int):
        return 1 << max(n - 1, 0).bit_length()
    # A symbolic size (torch.compile with dynamic shapes): comparisons, so that what compiles is
    # guarded on the power of two's range (32 < n <= 64), not on n itself.
    power = 1
    while power < n:
        power *= 2
    return power


# A row-wise kernel's tile: at most MAX_ROWS rows, at most MAX_ROW_TILE elements (past that, a row a program).
MAX_ROWS = 256
MAX_ROW_TILE = 16384


# ---- launching: a stored config for this GPU and size class, else the autotuner's pick ----------
@functools.cache
def tuned_configs(op: str) -> dict:
    """{key: {"kwargs": {...}, "num_warps": n, "num_stages": n}} stored for this GPU."""
    path = TUNED_DIR / f"{op}.json"
    if not path.is_file() or not torch.cuda.is_available():
        return {}
    return json.loads(path.read_text()).get(torch.cuda.get_device_name(), {})


def config_key(kernel: str, key_values: tuple, dtype) -> str:
    """ "forward/4096/bfloat16": a kernel, its autotuning key's values, its inputs' dtype."""
    return "/".join([kernel, *(str(v) for v in key_values), str(dtype).removeprefix("torch.")])


def stored_config(op: str, kernel: str, key_values: tuple, dtype: torch.dtype, first: dict) -> dict | None:
    """The config stored for this launch, or None to let the autotuner pick (and remember) one."""
    if INTERPRET:  # the interpreter runs one config, untimed: the first
        kwargs = {k: v for k, v in first.items() if k not in ("num_warps", "num_stages")}
        if "ROWS" in kwargs and isinstance(key_values[0], int):  # row-wise: key_values[0] is the row's BLOCK
            # Tiles of rows as on a GPU (up to 16K elements): each program interpreted costs milliseconds,
            # and a tile past the last row checks the row mask.
            kwargs["ROWS"] = max(1, min(MAX_ROWS, MAX_ROW_TILE // key_values[0]))
        return {"kwargs": kwargs, "num_warps": first.get("num_warps", 4), "num_stages": first.get("num_stages", 1)}
    if torch.compiler.is_compiling() or os.environ.get(RETUNE_ENV) == "1" or not _concrete(key_values):
        # torch.compile autotunes the kernel itself (its fake run sees symbolic sizes); a tuning
        # run measures afresh
        return None
    launch = (op, kernel, key_values, dtype)
    found = _picked.get(launch)
    if found is None:  # first launch of this class here: the stored config, remembered (no key text a call)
        found = tuned_configs(op).get(config_key(kernel, key_values, dtype))
        if found is not None:
            _picked[launch] = found
    return found


def _concrete(values: tuple) -> bool:
    return not any(isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool)) for v in values)


# The config of each (op, kernel, key values, dtype) in this process, stored or picked by the
# autotuner: later calls launch the plain kernel with it (the Autotuner object is not thread-safe,
# and costs host time a call).
_picked: dict[tuple, dict] = {}
AUTOTUNE_LOCK = threading.Lock()


def remember(op: str, kernel: str, tuned_kernel, key_values: tuple, dtype: torch.dtype) -> None:
    if not _concrete(key_values):  # a compile's fake run: nothing ran, and a comparison would guard
        return
    for key, config in getattr(tuned_kernel, "cache", {}).items():
        if tuple(key[: len(key_values)]) == tuple(key_values) and key[len(key_values)] == str(dtype):
            _picked[(op, kernel, tuple(key_values), dtype)] = _as_stored(config)


def _as_stored(config) -> dict:
    return {"kwargs": dict(config.kwargs), "num_warps": config.num_warps, "num_stages": config.num_stages}


def write_tuned(op: str, entries: dict) -> Path:
    """Store `entries` ({config_key: config}) for this GPU in TUNED_DIR/<op>.json, beside other GPUs'."""
    path = TUNED_DIR / f"{op}.json"
    stored = json.loads(path.read_text()) if path.is_file() else {}
    stored.setdefault(torch.cuda.get_device_name(), {}).update(entries)
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n")
    tuned_configs.cache_clear()
    return path


def autotune(configs: list, key: list[str], prune=None):
    """triton.autotune over `configs` ({constexpr: value, "num_warps": n}) keyed on `key`, the size
    class arguments (a power of two: a new size of the same class reuses the measured config)."""
    if not AVAILABLE:
        return lambda fn: fn
    made = [
        triton.Config(
            {k: v for k, v in c.items() if k not in ("num_warps", "num_stages")},
            num_warps=c.get("num_warps", 4),
            num_stages=c.get("num_stages", 1),
        )
        for c in configs
    ]
    options = {"early_config_prune": prune} if prune is not None else None
    return triton.autotune(configs=made, key=key, prune_configs_by=options)


def autotuned(kernel_name: str, tuned_kernel, key_names: list) -> dict:
    """{config_key: config} of what the autotuner picked in this process (its cache: the key's
    values, then each tensor argument's dtype)."""
    entries = {}
    for key, config in getattr(tuned_kernel, "cache", {}).items():
        values, dtype = key[: len(key_names)], key[len(key_names)]
        entries[config_key(kernel_name, values, dtype)] = _as_stored(config)
    return entries


# ---- eager calls that need no dispatcher ---------------------------------------------------------
def plain_eager(*tensors) -> bool:
    """Whether nothing but the op itself would see this call: no dispatch or torch-function mode
    (fake tensors, export, profiling modes), no TorchScript tracer, no tensor subclass, no functorch
    transform (vmap, grad), no negated view (the dispatcher would materialize its values first).
    Then the public function launches the kernels itself, skipping the dispatcher's Python layers
    (the caller has checked that nothing needs autograd). torch.profiler sees the launches either
    way (the dispatcher records no event of its own for a Python-registered op's overload)."""
    if _dispatch_stack_len() or _function_mode_enabled() or _tracing_state() is not None:
        return False
    for t in tensors:
        if type(t) is not torch.Tensor or t.is_neg() or _functorch_wrapped(t):
            return False
    return True


_dispatch_stack_len = torch._C._len_torch_dispatch_stack
_function_mode_enabled = torch._C._is_torch_function_mode_enabled
_tracing_state = torch._C._get_tracing_state
_functorch_wrapped = torch._C._functorch.is_functorch_wrapped_tensor


# ---- the CPU path: the reference in float64, rounded to the dtype ----------------------------------
def _math_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float64  # the reference's float32 formulas may lose more than a rounding (torch's GELU gradient)


def is_fake(t: torch.Tensor) -> bool:
    """Whether t is a fake tensor (tracing, opcheck's fake checks): then only the shapes matter."""
    return torch._subclasses.fake_tensor.is_fake(t)


def reference_result(reference, tensors: dict, scalars: dict) -> torch.Tensor:
    dtype = next(iter(tensors.values())).dtype
    widened = {name: t.to(_math_dtype(dtype)) for name, t in tensors.items()}
    return _fresh(reference(**widened, **scalars).to(dtype).contiguous(), [*tensors.values(), *widened.values()])


def _fresh(t: torch.Tensor, others: list) -> torch.Tensor:
    """t, or a copy where it shares memory with one of `others` (an op's results may not alias its
    inputs or each other)."""
    if any(isinstance(o, torch.Tensor) and o.numel() and t.numel() and _same_storage(t, o) for o in others):
        return t.clone()
    return t


def _same_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    if is_fake(a) or is_fake(b):
        return a is b
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def reference_grads(
    reference, grad, tensors: dict, scalars: dict, names: list, needs: tuple, broadcast: list, rowwise: bool
) -> tuple:
    """The gradients of `names` as the Triton backward kernel gives them: each shaped like the first
    input (a broadcast input's per element, or per row, before autograd sums them)."""
    first = next(iter(tensors.values()))
    wide = _math_dtype(first.dtype)
    widened = {name: t.to(wide) for name, t in tensors.items()}
    primals = [widened[n].expand_as(widened[next(iter(tensors))]) if n in broadcast else widened[n] for n in names]

    def f(*values):
        return reference(**{**widened, **dict(zip(names, values))}, **scalars)

    try:
        grads = torch.func.vjp(f, *primals)[1](grad.to(wide))
    except RuntimeError:
        if not (rowwise and broadcast):
            raise
        grads = _per_row_grads(reference, grad.to(wide), widened, scalars, names, broadcast)
    results = []
    for g, need in zip(grads, needs):
        g = g.to(first.dtype).contiguous() if need else first.new_empty((0,))
        results.append(_fresh(g, [grad, *tensors.values(), *results]))
    return tuple(results)


def _per_row_grads(reference, grad, widened: dict, scalars: dict, names: list, broadcast: list) -> tuple:
    """A reference that wants its broadcast inputs at their own shape (F.layer_norm's weight): the
    gradients each row alone gives, rows batched by vmap."""
    d = grad.shape[-1]
    rows = {n: t.reshape(-1, d) for n, t in widened.items() if n not in broadcast}

    def one_row(row_args, row_grad):
        def f(*values):
            return reference(**{**widened, **row_args, **dict(zip(names, values))}, **scalars)

        return torch.func.vjp(f, *[row_args.get(n, widened[n]) for n in names])[1](row_grad)

    grads = torch.func.vmap(one_row)(rows, grad.reshape(-1, d))
    return tuple(g.reshape(grad.shape) for g in grads)


def missing_triton(op: str) -> RuntimeError:
    return RuntimeError(
        f"{op}'s CUDA kernel is written in Triton, which is not installed: pip install triton "
        "(it comes with the CUDA builds of torch)"
    )


# ---- checks, worded as the C++ kinds word them ------------------------------------------------------
def _fail(message: str) -> None:
    raise RuntimeError(message)


def _dtype_name(dtype: torch.dtype) -> str:
    return {torch.float32: "Float", torch.float16: "Half", torch.bfloat16: "BFloat16", torch.float64: "Double"}.get(
        dtype, str(dtype).removeprefix("torch.")
    )


def check_floating(t: torch.Tensor, name: str) -> None:
    if t.dtype not in _FLOATING:
        _fail(
            f"{name} must be a floating-point tensor (float32, float16, bfloat16 or float64), got "
            f"{_dtype_name(t.dtype)}"
        )


def check_like(b: torch.Tensor, b_name: str, a: torch.Tensor, a_name: str, shape: bool = True) -> None:
    """b is on a's device, with a's dtype (and shape): the element-wise rule for all their tensors."""
    if b.device != a.device:
        _fail(f"{b_name} and {a_name} must be on the same device, got {b.device} and {a.device}")
    if b.dtype != a.dtype:
        _fail(f"{b_name} and {a_name} must have the same dtype, got {_dtype_name(b.dtype)} and {_dtype_name(a.dtype)}")
    if shape and b.shape != a.shape:
        _fail(f"{b_name} and {a_name} must have the same shape, got {list(b.shape)} and {list(a.shape)}")


def broadcast_repeats(b: torch.Tensor, b_name: str, a: torch.Tensor, a_name: str) -> tuple[int, int]:
    """(inner, period): b's element for a's element i is (i // inner) % period, b broadcast over a
    along one block of a's dimensions (a bias over the last ones, a [C, 1, 1] scale); else an error."""
    skipped = a.dim() - b.dim()
    first = last = -1
    fits = skipped >= 0
    for d in range(b.dim() if fits else 0):
        if b.shape[d] != 1:
            fits = fits and b.shape[d] == a.shape[skipped + d] and (first < 0 or last == skipped + d - 1)
            first = skipped + d if first < 0 else first
            last = skipped + d
    if not fits:
        _fail(
            f"{b_name} must broadcast over {a_name} along one block of its dimensions (a bias over the last ones, "
            f"a per-channel scale of shape [C, 1, 1]), got {b_name} {list(b.shape)} and {a_name} {list(a.shape)}"
        )
    inner = 1
    for d in range(last + 1, a.dim()) if first >= 0 else ():
        inner *= a.shape[d]
    return inner, max(b.numel(), 1)
