"""gemm: matrix product a @ b, kernels in csrc/gemm/ (float32 on CUDA in gemm_async_kernel.cuh)."""
import torch
from torch import Tensor

from .._declare import TensorArg, declare
from .._error_model import rounding_tolerance, sum_error
from .._spec import FLOATING

__all__ = ["gemm"]


def reference(a: Tensor, b: Tensor) -> Tensor:
    """gemm in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return a @ b


def _check(a: Tensor, b: Tensor) -> None:
    torch._check(a.dim() == 2, lambda: f"a must have 2 dimension(s), got shape {tuple(a.shape)}")
    torch._check(b.dim() == 2, lambda: f"b must have 2 dimension(s), got shape {tuple(b.shape)}")
    torch._check(a.dtype == b.dtype, lambda: f"a and b must have the same dtype, got {a.dtype} and {b.dtype}")
    torch._check(a.shape[1] == b.shape[0], lambda: f"a's columns and b's rows must match (a @ b), got a "
                                                    f"{tuple(a.shape)} and b {tuple(b.shape)}")


def fake(a: Tensor, b: Tensor) -> Tensor:
    """The result's shape, for torch.compile and opcheck (gemm_naive's too)."""
    _check(a, b)
    return a.new_empty((a.shape[0], b.shape[1]))


def _setup_context(ctx, inputs, output):
    a, b = inputs
    ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b if ctx.needs_input_grad[0] else None)


def _backward(ctx, grad: Tensor):
    a, b = ctx.saved_tensors
    grad_a = gemm(grad, b.t()) if ctx.needs_input_grad[0] else None
    grad_b = gemm(a.t(), grad) if ctx.needs_input_grad[1] else None
    return grad_a, grad_b


def _mkn(shape: tuple) -> tuple:
    """(M, K, N) of the conformance suite's case: SPEC's shapes are (M, K, N); the suite's own
    (rows, cols) cases become (rows, cols, rows), its 1-D (n,) cases a 1 x 1 @ 1 x n product."""
    shape = tuple(shape)
    if len(shape) == 3:
        return shape
    if len(shape) == 2:
        return (shape[0], shape[1], shape[0])
    return (1, 1, shape[0] if shape else 1)


def error_bound(dtype: torch.dtype, a: Tensor, b: Tensor) -> Tensor:
    """What a correct gemm adds to the rounding of its output: a K-term dot product per element,
    accumulated in float32 (float64 for float64); see _error_model.py."""
    return sum_error(a.abs() @ b.abs(), a.shape[1], dtype)


def grad_error_bound(dtype: torch.dtype, grad: Tensor, a: Tensor, b: Tensor) -> dict[str, Tensor]:
    """The same for the gradients, gemm(grad, b^T) and gemm(a^T, grad)."""
    return {"a": error_bound(dtype, grad, b.t()), "b": error_bound(dtype, a.t(), grad)}


SPEC = declare(
    "gemm(Tensor a, Tensor b) -> Tensor",
    kind="custom",  # host code csrc/gemm/gemm.cpp: `forward` on both devices
    # The seed's one-thread-per-output kernel, float32 on CUDA only: the benchmark's baseline.
    variants={"gemm_naive(Tensor a, Tensor b) -> Tensor": {"CUDA": "naive"}},
    reference=reference,
    fake=fake,
    backward=_backward,
    setup_context=_setup_context,
    doc="""a (M, K) @ b (K, N) -> (M, N), a new contiguous tensor of a's dtype.

    float32, float16, bfloat16 and float64 on CPU and CUDA, any sizes (empty ones too) and any
    strides. On CUDA a hand-written tiled kernel with plain FMA (never TF32 or tensor cores),
    accumulating in float32 (float64 for float64); on CPU at::mm. Differentiable in a and b;
    traceable by torch.compile(fullgraph=True).
    """,
    args={"a": TensorArg(shape=lambda s: _mkn(s)[:2]), "b": TensorArg(shape=lambda s: _mkn(s)[1:])},
    differentiable=("a", "b"),
    # Each output is its float32 (float64) accumulator rounded once: within one unit in the last
    # place, plus what the K-term sum may err (error_bound).
    tolerances={dtype: rounding_tolerance(dtype) for dtype in FLOATING},
    error_bound=error_bound,
    grad_error_bound=grad_error_bound,
    # (M, K, N): single elements, odd sizes (scalar loads), multiples of 4 with partial tiles (vector
    # loads with predicated edges), a K of one, a full 128 x 128 tile, a long K (where a missing term,
    # a dropped tile or 16-bit partial sums must show: examples/tests/test_error_model.py), and empty operands.
    shapes=[(1, 1, 1), (17, 33, 65), (129, 1, 257), (130, 68, 132), (128, 128, 128), (200, 520, 36),
            (33, 4096, 65), (0, 5, 3), (4, 0, 3), (3, 5, 0)],
    first_order_only=False,  # its backward is gemm again: differentiable to any order
)
gemm = SPEC.function
gemm_naive = SPEC.variants["gemm_naive"]
