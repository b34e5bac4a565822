"""custom_add: c = a + b, a CPU-only C++ op (csrc/custom_add/custom_add.cpp); vector_add is the
CPU + CUDA version."""
import torch
from torch import Tensor

from .._autograd import below_autograd, needs_autograd
from .._spec import OpSpec, TensorArg

__all__ = ["custom_add"]


def custom_add(a: Tensor, b: Tensor) -> Tensor:
    """a + b for CPU tensors of one shape (no broadcasting) and dtype.

    float32, float16, bfloat16 and float64, any strides (the result is contiguous); differentiable
    in both inputs; traceable by torch.compile(fullgraph=True). CUDA tensors raise a RuntimeError.
    """
    if needs_autograd(a, b):
        return torch.ops.examples.custom_add.default(a, b)
    with below_autograd():  # no gradient needed: skip the autograd layer's Python (~10 us a call)
        return torch.ops.examples.custom_add.default(a, b)


def reference(a: Tensor, b: Tensor) -> Tensor:
    """custom_add in plain PyTorch: the tests compare against it in float64."""
    return a + b


@torch.library.register_fake("examples::custom_add")
def _(a: Tensor, b: Tensor) -> Tensor:
    torch._check(a.shape == b.shape, lambda: f"b and a must have the same shape, got {b.shape} and {a.shape}")
    return torch.empty_like(a, memory_format=torch.contiguous_format)


def _backward(ctx, grad: Tensor):
    return grad, grad  # d(a + b)/da = d(a + b)/db = 1


torch.library.register_autograd("examples::custom_add", _backward)


SPEC = OpSpec(
    name="custom_add",
    op=torch.ops.examples.custom_add.default,
    function=custom_add,
    reference=reference,
    args={"a": TensorArg(), "b": TensorArg()},
    kind="elementwise",
    devices=("cpu",),  # CUDA tensors are refused: test_custom_add.py checks the message
    differentiable=("a", "b"),
    first_order_only=False,  # its backward is grad itself, differentiable again
)
