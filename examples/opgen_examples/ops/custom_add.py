"""custom_add: c = a + b, a CPU-only C++ op (csrc/custom_add/custom_add.cpp); vector_add is the
CPU + CUDA version."""
import torch
from torch import Tensor

from .._declare import TensorArg, declare

__all__ = ["custom_add"]


def reference(a: Tensor, b: Tensor) -> Tensor:
    """custom_add in plain PyTorch: the tests compare against it in float64."""
    return a + b


def fake(a: Tensor, b: Tensor) -> Tensor:
    """The result's shape, for torch.compile and opcheck."""
    torch._check(a.shape == b.shape, lambda: f"b and a must have the same shape, got {b.shape} and {a.shape}")
    return torch.empty_like(a, memory_format=torch.contiguous_format)


def _backward(ctx, grad: Tensor):
    return grad, grad  # d(a + b)/da = d(a + b)/db = 1


SPEC = declare(
    "custom_add(Tensor a, Tensor b) -> Tensor",
    kind="custom",
    # CUDA tensors reach reject_cuda, which says the op is CPU-only (CUDA builds register it).
    kernels={"CPU": "forward_cpu", "CUDA": "reject_cuda"},
    reference=reference,
    fake=fake,
    backward=_backward,
    doc="""a + b for CPU tensors of one shape (no broadcasting) and dtype.

    float32, float16, bfloat16 and float64, any strides (the result is contiguous); differentiable
    in both inputs; traceable by torch.compile(fullgraph=True). CUDA tensors raise a RuntimeError.
    """,
    args={"a": TensorArg(), "b": TensorArg()},
    checked_as="elementwise",  # its host code keeps the element-wise rules: the suite checks them too
    devices=("cpu",),  # CUDA tensors are refused: test_custom_add.py checks the message
    differentiable=("a", "b"),
    first_order_only=False,  # its backward is grad itself, differentiable again
)
custom_add = SPEC.function
