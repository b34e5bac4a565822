"""scale: y = x * factor, element-wise, kernels in csrc/scale/ (math in scale.h)."""
import torch
from torch import Tensor

__all__ = ["scale"]


def scale(x: Tensor, factor: float = 2.0) -> Tensor:
    """x * factor (default 2, the seed's x * 2).

    float32, float16, bfloat16 and float64 on CPU and CUDA, any shape and strides (the result is
    contiguous); differentiable in x, to any order; traceable by torch.compile(fullgraph=True).
    """
    return torch.ops.examples.scale.default(x, factor)


def reference(x: Tensor, factor: float = 2.0) -> Tensor:
    """scale in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return x * factor


@torch.library.register_fake("examples::scale")
def _(x: Tensor, factor: float = 2.0) -> Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _setup_context(ctx, inputs, output):
    _, factor = inputs
    ctx.factor = factor


def _backward(ctx, grad: Tensor):
    # dx = grad * factor: scale itself, so the backward is differentiable too.
    return torch.ops.examples.scale.default(grad, ctx.factor), None


torch.library.register_autograd("examples::scale", _backward, setup_context=_setup_context)
