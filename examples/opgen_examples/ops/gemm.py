"""gemm: matrix product a @ b, kernels in csrc/gemm/ (the CUDA kernel in gemm_kernel.cuh)."""
import torch
from torch import Tensor

__all__ = ["gemm"]


def gemm(a: Tensor, b: Tensor) -> Tensor:
    """a (M, K) @ b (K, N) -> (M, N), a new contiguous tensor of a's dtype.

    float32, float16, bfloat16 and float64 on CPU and CUDA, any sizes (empty ones too) and any
    strides. On CUDA a hand-written tiled kernel with plain FMA (never TF32 or tensor cores),
    accumulating in float32 (float64 for float64); on CPU at::mm. Differentiable in a and b;
    traceable by torch.compile(fullgraph=True).
    """
    return torch.ops.examples.gemm.default(a, b)


def gemm_naive(a: Tensor, b: Tensor) -> Tensor:
    """The seed's CUDA kernel (one thread per output, operands from global memory), float32 only.

    Kept as the benchmark's baseline; not differentiable.
    """
    return torch.ops.examples.gemm_naive.default(a, b)


def reference(a: Tensor, b: Tensor) -> Tensor:
    """gemm in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return a @ b


def _check(a: Tensor, b: Tensor) -> None:
    torch._check(a.dim() == 2, lambda: f"a must have 2 dimension(s), got shape {tuple(a.shape)}")
    torch._check(b.dim() == 2, lambda: f"b must have 2 dimension(s), got shape {tuple(b.shape)}")
    torch._check(a.dtype == b.dtype, lambda: f"a and b must have the same dtype, got {a.dtype} and {b.dtype}")
    torch._check(a.shape[1] == b.shape[0], lambda: f"a's columns and b's rows must match (a @ b), got a "
                                                    f"{tuple(a.shape)} and b {tuple(b.shape)}")


@torch.library.register_fake("examples::gemm")
def _(a: Tensor, b: Tensor) -> Tensor:
    _check(a, b)
    return a.new_empty((a.shape[0], b.shape[1]))


@torch.library.register_fake("examples::gemm_naive")
def _(a: Tensor, b: Tensor) -> Tensor:
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


torch.library.register_autograd("examples::gemm", _backward, setup_context=_setup_context)
