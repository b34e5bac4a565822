"""fused_linear_gelu: y = gelu_tanh(x @ weight.T + bias), nn.Linear + nn.GELU(approximate="tanh") in one op.

Kernels in csrc/fused_linear_gelu/: on CUDA one cuBLASLt GEMM with a bias + GELU epilogue (see
fused_linear_gelu_cuda.cu), on CPU addmm and the shared GELU (csrc/gelu_approx/gelu_approx.h).
Unlike the other ops, its autograd formula is C++ (fused_linear_gelu_autograd.cpp): at small batch
sizes the Python one would cost more per call than the GPU work.
"""
import math

import torch
from torch import Tensor

from .._spec import OpSpec, TensorArg

__all__ = ["fused_linear_gelu"]


def fused_linear_gelu(x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    """tanh-approximation GELU of the linear layer x @ weight.T + bias.

    x is (..., in_features) with any leading dims (or 1-D), weight (out_features, in_features), bias
    (out_features,); the result is (..., out_features), contiguous. float32, float16, bfloat16 and
    float64 on CPU and CUDA, any strides. float32 on CUDA uses TF32 exactly when nn.Linear would
    (torch.backends.cuda.matmul.allow_tf32). Differentiable in all three inputs (the backward
    recomputes x @ weight.T + bias instead of keeping it); traceable by torch.compile(fullgraph=True).
    """
    return torch.ops.examples.fused_linear_gelu.default(x, weight, bias)


def reference(x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    """fused_linear_gelu in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return torch.nn.functional.gelu(torch.nn.functional.linear(x, weight, bias), approximate="tanh")


def naive(x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    """The seed's kernel (float32 on CUDA, 2-D x, one thread per output, no tiling): a benchmark baseline."""
    return torch.ops.examples.fused_linear_gelu_naive.default(x, weight, bias)


@torch.library.register_fake("examples::fused_linear_gelu")
def _(x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    torch._check(x.dim() >= 1, lambda: "x must have at least 1 dimension (in_features), got a scalar")
    torch._check(weight.dim() == 2, lambda: f"weight must have 2 dimension(s), got shape {tuple(weight.shape)}")
    torch._check(bias.dim() == 1, lambda: f"bias must have 1 dimension(s), got shape {tuple(bias.shape)}")
    torch._check(weight.shape[1] == x.shape[-1], lambda: f"weight must have x.size(-1) = {x.shape[-1]} columns")
    torch._check(bias.shape[0] == weight.shape[0], lambda: f"bias must have weight.size(0) = {weight.shape[0]} elements")
    return x.new_empty((*x.shape[:-1], weight.shape[0]))


@torch.library.register_fake("examples::fused_linear_gelu_naive")
def _(x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    return x.new_empty((x.shape[0], weight.shape[0]))


def _x_and_out(shape: tuple) -> tuple[tuple, int]:
    """x's shape and out_features for the conformance suite's case shape: SPEC's shapes are x's shape
    followed by out_features; the suite's 1-D (n,) cases are an x of n features and 7 outputs."""
    shape = tuple(shape)
    if len(shape) >= 2:
        return shape[:-1], shape[-1]
    return (shape[0] if shape else 1,), 7


def _in_features(shape: tuple) -> int:
    return _x_and_out(shape)[0][-1]


SPEC = OpSpec(
    name="fused_linear_gelu",
    op=torch.ops.examples.fused_linear_gelu.default,
    function=fused_linear_gelu,
    reference=reference,
    # Values in [-1, 1]: pre-activations of order 1, where the GELU is neither linear nor zero.
    args={"x": TensorArg(shape=lambda s: _x_and_out(s)[0], domain=(-1.0, 1.0)),
          "weight": TensorArg(shape=lambda s: (_x_and_out(s)[1], _in_features(s)), domain=(-1.0, 1.0)),
          "bias": TensorArg(shape=lambda s: (_x_and_out(s)[1],), domain=(-1.0, 1.0))},
    differentiable=("x", "weight", "bias"),
    # A GEMM's rounding grows with in_features (float16/bfloat16 GEMMs may also add split-K partial
    # sums in that dtype); test_fused_linear_gelu.py calibrates against eager nn.Linear + GELU.
    atol_scale=lambda s: max(1.0, _in_features(s) / 4),
    # x's shape + (out_features,): odd sizes, leading dims, 1-D x, empty batch, in_features or
    # out_features of 0 or 1 (where cuBLASLt is skipped), sizes cuBLASLt vectorizes; on CUDA, batches
    # of at most 32 rows take the small-batch kernel (partial tiles, the 32/33 boundary).
    shapes=[(3, 5, 17, 13), (17, 13), (0, 17, 13), (2, 0, 17, 13), (4, 0, 3), (5, 17, 0), (1, 17, 13),
            (5, 1, 13), (5, 17, 1), (64, 96, 40), (2, 33, 128, 72), (32, 70, 20), (33, 70, 20)],
)
