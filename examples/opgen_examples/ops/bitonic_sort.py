"""bitonic_sort: sort along the last dimension, kernels in csrc/bitonic_sort/ (order in bitonic_sort.h)."""
import torch
from torch import Tensor

from .._declare import TensorArg, declare
from .._spec import FLOATING

__all__ = ["bitonic_sort"]


def reference(x: Tensor, descending: bool = False) -> tuple[Tensor, Tensor]:
    """bitonic_sort in plain PyTorch: the tests compare against it exactly, the benchmark times it."""
    return torch.sort(x, dim=-1, descending=descending, stable=True)


def fake(x: Tensor, descending: bool = False) -> tuple[Tensor, Tensor]:
    """The results' shapes and dtypes, for torch.compile and opcheck."""
    return x.new_empty(x.shape), x.new_empty(x.shape, dtype=torch.long)


def _setup_context(ctx, inputs, output):
    _, indices = output
    ctx.mark_non_differentiable(indices)
    ctx.save_for_backward(indices)


def _backward(ctx, grad_values: Tensor, grad_indices):
    (indices,) = ctx.saved_tensors
    if indices.dim() == 0:
        return grad_values, None
    # values[..., i] = x[..., indices[..., i]]: each gradient goes back to where its value came from.
    return grad_values.new_zeros(indices.shape).scatter_(-1, indices, grad_values), None


_DTYPES = (*FLOATING, torch.int32, torch.int64)

SPEC = declare(
    "bitonic_sort(Tensor x, bool descending=False) -> (Tensor values, Tensor indices)",
    kind="custom",  # host code csrc/bitonic_sort/bitonic_sort.cpp: `forward` on both devices
    reference=reference,
    fake=fake,
    backward=_backward,
    setup_context=_setup_context,
    doc="""Sort x along its last dimension: (values, indices), indices int64, like torch.sort(x, dim=-1).

    float32, float16, bfloat16, float64, int32 and int64 on CPU and CUDA, any row length. On CUDA,
    rows that one block holds in shared memory (up to 16384 elements of float16 and bfloat16, 8192
    of the other dtypes) are sorted there by a bitonic network; longer rows by CUB's radix sort
    (all rows together, then regrouped by row; rows of 2**22 or 2**23 elements and more one at a
    time). The CPU sorts each row with std::sort.
    NaN sorts as larger than every number (last ascending, first descending) and -0.0 equals
    +0.0, as in torch.sort. Equal values keep their input order (stable), so both devices return
    exactly torch.sort(x, dim=-1, descending=descending, stable=True). Differentiable in x through
    values; traceable by torch.compile(fullgraph=True).
    """,
    args={"x": TensorArg(), "descending": False},
    dtypes=_DTYPES,
    tolerances={dtype: (0.0, 0.0) for dtype in _DTYPES},  # values and indices exactly torch.sort's
    # Differentiable in x through values, but the suite's gradient checks take one result:
    # test_bitonic_sort.py checks the gradients (and descending=True).
    differentiable=(),
)
bitonic_sort = SPEC.function
