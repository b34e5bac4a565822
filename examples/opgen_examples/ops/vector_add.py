"""vector_add: c = a + b, element-wise, kernels in csrc/vector_add/ (math in vector_add.h)."""
import torch
from torch import Tensor

__all__ = ["vector_add"]


def vector_add(a: Tensor, b: Tensor) -> Tensor:
    """a + b for tensors of one shape (no broadcasting), dtype and device.

    float32, float16, bfloat16 and float64 on CPU and CUDA, any strides (the result is
    contiguous); differentiable in both inputs; traceable by torch.compile(fullgraph=True).
    """
    return torch.ops.examples.vector_add.default(a, b)


def reference(a: Tensor, b: Tensor) -> Tensor:
    """vector_add in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return a + b


def naive(a: Tensor, b: Tensor) -> Tensor:
    """The seed's kernel (float32 on CUDA, one thread per element, int index): a benchmark baseline."""
    return torch.ops.examples.vector_add_naive.default(a, b)


def _check_same_shape(a: Tensor, b: Tensor) -> None:
    torch._check(a.shape == b.shape, lambda: f"a and b must have the same shape, got {a.shape} and {b.shape}")


@torch.library.register_fake("examples::vector_add")
def _(a: Tensor, b: Tensor) -> Tensor:
    _check_same_shape(a, b)
    return torch.empty_like(a, memory_format=torch.contiguous_format)


@torch.library.register_fake("examples::vector_add_naive")
def _(a: Tensor, b: Tensor) -> Tensor:
    _check_same_shape(a, b)
    return torch.empty_like(a, memory_format=torch.contiguous_format)


def _backward(ctx, grad: Tensor):
    return grad, grad  # d(a + b)/da = d(a + b)/db = 1


torch.library.register_autograd("examples::vector_add", _backward)
