"""vector_add: c = a + b, element-wise, kernels in csrc/vector_add/ (the math in vector_add.h)."""
from __future__ import annotations

import torch
from torch import Tensor

from .._autograd import below_autograd, first_order_only, needs_autograd
from .._spec import OpSpec, TensorArg

__all__ = ["vector_add", "vector_add_out"]


def vector_add(a: Tensor, b: Tensor) -> Tensor:
    """a + b for tensors of one shape (no broadcasting), dtype and device.

    float32, float16, bfloat16 and float64 on CPU and CUDA, any strides (the result is
    contiguous); differentiable in both inputs; traceable by torch.compile(fullgraph=True).
    """
    if needs_autograd(a, b):
        return torch.ops.examples.vector_add.default(a, b)
    with below_autograd():  # no gradient needed: skip the autograd layer's Python (~10 us a call)
        return torch.ops.examples.vector_add.default(a, b)


def vector_add_out(a: Tensor, b: Tensor, *, out: Tensor) -> None:
    """vector_add(...) written into out (any strides; it must not share memory with an input)."""
    torch.ops.examples.vector_add_out.default(a, b, out=out)


def reference(a: Tensor, b: Tensor) -> Tensor:
    """vector_add in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return a + b


def naive(a: Tensor, b: Tensor) -> Tensor:
    """The seed's kernel (float32 on CUDA, one thread per element, int index): a benchmark baseline."""
    return torch.ops.examples.vector_add_naive.default(a, b)


@torch.library.register_fake("examples::vector_add")
def _(a: Tensor, b: Tensor) -> Tensor:
    return torch.empty_like(a, memory_format=torch.contiguous_format)


@torch.library.register_fake("examples::vector_add_out")
def _(a: Tensor, b: Tensor, *, out: Tensor) -> None:
    return None


@torch.library.register_fake("examples::vector_add_naive")
def _(a: Tensor, b: Tensor) -> Tensor:
    return torch.empty_like(a, memory_format=torch.contiguous_format)


@torch.library.register_fake("examples::vector_add_backward")
def _(grad, a, b, needs_a, needs_b) -> tuple[Tensor, ...]:
    return tuple(grad.new_empty(grad.shape if needed else (0,)) for needed in (needs_a, needs_b))


def _setup_context(ctx, inputs, output):
    a, b = inputs
    ctx.save_for_backward(a, b)


def _backward(ctx, grad: Tensor):
    a, b = ctx.saved_tensors
    needs = ctx.needs_input_grad
    da, db = torch.ops.examples.vector_add_backward.default(grad, a, b, needs[0], needs[1])
    return da if needs[0] else None, db if needs[1] else None


torch.library.register_autograd("examples::vector_add", _backward, setup_context=_setup_context)
first_order_only("examples::vector_add_backward")



SPECS = [
    OpSpec(
        name="vector_add",
        op=torch.ops.examples.vector_add.default,
        function=vector_add,
        reference=reference,
        # The tensors are drawn from `domain`: narrow it where the math needs (e.g. x > 0 for a log).
        args={"a": TensorArg(domain=(-4.0, 4.0)), "b": TensorArg(domain=(-4.0, 4.0))},
        kind="elementwise",
        differentiable=("a", "b"),
        large=True,
    ),
    OpSpec(
        name="vector_add_out",
        op=torch.ops.examples.vector_add_out.default,
        function=vector_add_out,
        reference=reference,
        args={"a": TensorArg(domain=(-4.0, 4.0)), "b": TensorArg(domain=(-4.0, 4.0))},
        kind="elementwise",
        out="out",
    ),
]
