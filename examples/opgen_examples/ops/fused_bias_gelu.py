"""fused_bias_gelu: element-wise y = f(x), kernels in csrc/fused_bias_gelu/ (math in fused_bias_gelu.h)."""
import torch
from torch import Tensor

__all__ = ["fused_bias_gelu"]


def fused_bias_gelu(x: Tensor) -> Tensor:
    """Apply fused_bias_gelu element-wise.

    float32, float16, bfloat16 and float64 on CPU and CUDA, any shape and strides (the result is
    contiguous); differentiable; traceable by torch.compile(fullgraph=True).
    """
    return torch.ops.examples.fused_bias_gelu.default(x)


def reference(x: Tensor) -> Tensor:
    """fused_bias_gelu in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return x * torch.sigmoid(x)


@torch.library.register_fake("examples::fused_bias_gelu")
def _(x: Tensor) -> Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.register_fake("examples::fused_bias_gelu_backward")
def _(grad: Tensor, x: Tensor) -> Tensor:
    torch._check(grad.shape == x.shape, lambda: f"grad and x must have the same shape, got {grad.shape} and {x.shape}")
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _setup_context(ctx, inputs, output):
    (x,) = inputs
    ctx.save_for_backward(x)


def _backward(ctx, grad: Tensor):
    (x,) = ctx.saved_tensors
    return torch.ops.examples.fused_bias_gelu_backward.default(grad, x)


torch.library.register_autograd("examples::fused_bias_gelu", _backward, setup_context=_setup_context)
