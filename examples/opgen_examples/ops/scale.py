"""scale: element-wise y = f(x), kernels in csrc/scale/ (math in scale.h)."""
import torch
from torch import Tensor

__all__ = ["scale"]


def scale(x: Tensor) -> Tensor:
    """Apply scale element-wise.

    float32, float16, bfloat16 and float64 on CPU and CUDA, any shape and strides (the result is
    contiguous); differentiable; traceable by torch.compile(fullgraph=True).
    """
    return torch.ops.examples.scale.default(x)


def reference(x: Tensor) -> Tensor:
    """scale in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return x * torch.sigmoid(x)


@torch.library.register_fake("examples::scale")
def _(x: Tensor) -> Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.register_fake("examples::scale_backward")
def _(grad: Tensor, x: Tensor) -> Tensor:
    torch._check(grad.shape == x.shape, lambda: f"grad and x must have the same shape, got {grad.shape} and {x.shape}")
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _setup_context(ctx, inputs, output):
    (x,) = inputs
    ctx.save_for_backward(x)


def _backward(ctx, grad: Tensor):
    (x,) = ctx.saved_tensors
    return torch.ops.examples.scale_backward.default(grad, x)


torch.library.register_autograd("examples::scale", _backward, setup_context=_setup_context)
