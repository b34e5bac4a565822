"""vector_add: element-wise y = f(x), kernels in csrc/vector_add/ (math in vector_add.h)."""
import torch
from torch import Tensor

__all__ = ["vector_add"]


def vector_add(x: Tensor) -> Tensor:
    """Apply vector_add element-wise.

    float32, float16, bfloat16 and float64 on CPU and CUDA, any shape and strides (the result is
    contiguous); differentiable; traceable by torch.compile(fullgraph=True).
    """
    return torch.ops.examples.vector_add.default(x)


def reference(x: Tensor) -> Tensor:
    """vector_add in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return x * torch.sigmoid(x)


@torch.library.register_fake("examples::vector_add")
def _(x: Tensor) -> Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.register_fake("examples::vector_add_backward")
def _(grad: Tensor, x: Tensor) -> Tensor:
    torch._check(grad.shape == x.shape, lambda: f"grad and x must have the same shape, got {grad.shape} and {x.shape}")
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _setup_context(ctx, inputs, output):
    (x,) = inputs
    ctx.save_for_backward(x)


def _backward(ctx, grad: Tensor):
    (x,) = ctx.saved_tensors
    return torch.ops.examples.vector_add_backward.default(grad, x)


torch.library.register_autograd("examples::vector_add", _backward, setup_context=_setup_context)
