"""What an op does under torch's global modes that its declaration speaks to: deterministic algorithms
(declare(deterministic=False)) and autocast (declare(autocast=<dtype>)). Template-owned."""

from __future__ import annotations

import warnings

import torch


def alert_not_deterministic(op: str) -> None:
    """What torch's own nondeterministic ops do under torch.use_deterministic_algorithms(True): raise
    (or warn, with warn_only=True), naming the op."""
    if torch.are_deterministic_algorithms_enabled():
        message = (
            f"{op} does not have a deterministic implementation (its declaration says deterministic=False), "
            "but you set 'torch.use_deterministic_algorithms(True)'"
        )
        if torch.is_deterministic_algorithms_warn_only_enabled():
            warnings.warn(message, stacklevel=3)
        else:
            raise RuntimeError(message)


# The libraries holding the autocast kernels, one per namespace: a registration lasts as long as its Library.
_LIBRARIES: dict[str, torch.library.Library] = {}


def register_autocast(qualname: str, dtype: torch.dtype | None, *, isolate: bool = False) -> None:
    """The op's kernel for autocast regions (CPU and CUDA): with dtype, its floating inputs (float64
    excepted) cast to dtype, as torch does for its float32 ops (layer_norm, softmax); with isolate,
    its inputs as they come. Either way it runs with autocast off, so that the ATen ops its host code
    calls (a custom op's router matmul, say) compute in the dtypes it gives them, not the region's.
    Neither: no kernel, and autocast passes the op by (it computes in its inputs' dtype)."""
    if dtype is None and not isolate:
        return
    if dtype is not None and (not isinstance(dtype, torch.dtype) or not dtype.is_floating_point):
        raise ValueError(f"{qualname}: autocast= must be a floating dtype (torch.float32, say) or None, got {dtype!r}")
    namespace, name = qualname.split("::")
    library = _LIBRARIES.setdefault(namespace, torch.library.Library(namespace, "IMPL"))
    op = getattr(getattr(torch.ops, namespace), name).default
    for device in ("cpu", "cuda"):
        key = "Autocast" + torch._C._dispatch_key_for_device(device)
        autocast_off = torch._C.DispatchKeySet(getattr(torch._C.DispatchKey, key))

        def kernel(*args, _device=device, _autocast_off=autocast_off, **kwargs):
            if dtype is not None:
                args = torch.library._cast(args, _device, dtype)
                kwargs = {name: torch.library._cast(value, _device, dtype) for name, value in kwargs.items()}
            with torch._C._ExcludeDispatchKeyGuard(_autocast_off):
                return op(*args, **kwargs)

        library.impl(name, kernel, key)
