"""fused_linear_gelu: y = gelu_tanh(x @ weight.T + bias), nn.Linear + nn.GELU(approximate="tanh") in one op.

Kernels in csrc/fused_linear_gelu/: on CUDA one cuBLASLt GEMM with a bias + GELU epilogue (see
fused_linear_gelu_cuda.cu), on CPU addmm and the shared GELU (csrc/gelu_approx/gelu_approx.h).
Unlike the other ops, its autograd formula is C++ (fused_linear_gelu_autograd.cpp): at small batch
sizes the Python one would cost more per call than the GPU work.
"""
import math

import torch
from torch import Tensor

from .._declare import TensorArg, declare
from .._error_model import carried_error, rounding_error, rounding_tolerance, sum_error
from ._gelu_error import EPILOGUE_TAIL_ERROR, GELU_MAX_CURVATURE, GELU_MAX_SLOPE

__all__ = ["fused_linear_gelu"]


def reference(x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    """fused_linear_gelu in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return torch.nn.functional.gelu(torch.nn.functional.linear(x, weight, bias), approximate="tanh")


def fake(x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    """The result's shape, for torch.compile and opcheck (fused_linear_gelu_naive's too)."""
    torch._check(x.dim() >= 1, lambda: "x must have at least 1 dimension (in_features), got a scalar")
    torch._check(weight.dim() == 2, lambda: f"weight must have 2 dimension(s), got shape {tuple(weight.shape)}")
    torch._check(bias.dim() == 1, lambda: f"bias must have 1 dimension(s), got shape {tuple(bias.shape)}")
    torch._check(weight.shape[1] == x.shape[-1], lambda: f"weight must have x.size(-1) = {x.shape[-1]} columns")
    torch._check(bias.shape[0] == weight.shape[0], lambda: f"bias must have weight.size(0) = {weight.shape[0]} elements")
    return x.new_empty((*x.shape[:-1], weight.shape[0]))


def _x_and_out(shape: tuple) -> tuple[tuple, int]:
    """x's shape and out_features for the conformance suite's case shape: SPEC's shapes are x's shape
    followed by out_features; the suite's 1-D (n,) cases are an x of n features and 7 outputs."""
    shape = tuple(shape)
    if len(shape) >= 2:
        return shape[:-1], shape[-1]
    return (shape[0] if shape else 1,), 7


def _in_features(shape: tuple) -> int:
    return _x_and_out(shape)[0][-1]


def _linear(dtype: torch.dtype, x: Tensor, weight: Tensor, bias: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """x as a matrix, z = x @ weight.T + bias, and the error of z as the kernels compute it: an
    in_features-term dot product in float32 (float64 for float64), then at most two roundings to
    the dtype: z stored before the GELU (the CPU path, the backward), and the product before the
    bias is added (cuBLASLt's epilogue, measured on an H100). Split-K partial sums rounded to 16
    bits, which cuBLAS makes only where torch's allow_{fp16,bf16}_reduced_precision_reduction
    flags allow, are outside this bound: the examples' tests turn those flags off."""
    x2d = x.reshape(math.prod(x.shape[:-1]), x.shape[-1])
    product = x2d @ weight.t()
    abs_sum = torch.addmm(bias.abs(), x2d.abs(), weight.abs().t())
    roundings = rounding_error(product, dtype) + rounding_error(product + bias, dtype)
    z_error = sum_error(abs_sum, x2d.shape[1] + 1, dtype) + roundings
    return x2d, product + bias, z_error


def error_bound(dtype: torch.dtype, x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    """What a correct fused_linear_gelu adds to the rounding of its output; see _error_model.py."""
    _, _, z_error = _linear(dtype, x, weight, bias)
    tail = EPILOGUE_TAIL_ERROR if dtype in (torch.float16, torch.bfloat16) else 0.0
    return (GELU_MAX_SLOPE * z_error + tail).reshape(*x.shape[:-1], weight.shape[0])


def grad_error_bound(dtype: torch.dtype, grad: Tensor, x: Tensor, weight: Tensor, bias: Tensor) -> dict[str, Tensor]:
    """The same for the gradients: dz = GELU'(z) * grad (z recomputed, dz stored in the dtype), then
    dx = dz @ weight, dweight = dz^T @ x and dbias = the sum of dz over the rows."""
    x2d, z, z_error = _linear(dtype, x, weight, bias)
    g = grad.reshape(z.shape)
    z = z.requires_grad_()
    (dz,) = torch.autograd.grad(torch.nn.functional.gelu(z, approximate="tanh"), z, g)
    dz_error = (GELU_MAX_CURVATURE * g.abs() * z_error + rounding_error(dz, dtype)).square()
    dx = carried_error(dz_error @ weight.square()) + sum_error(dz.abs() @ weight.abs(), weight.shape[0], dtype)
    dweight = carried_error(dz_error.t() @ x2d.square()) + sum_error(dz.abs().t() @ x2d.abs(), x2d.shape[0], dtype)
    dbias = carried_error(dz_error.sum(0)) + sum_error(dz.abs().sum(0), x2d.shape[0], dtype)
    return {"x": dx.reshape(x.shape), "weight": dweight, "bias": dbias}


SPEC = declare(
    "fused_linear_gelu(Tensor x, Tensor weight, Tensor bias) -> Tensor",
    kind="custom",
    # Host code in csrc/fused_linear_gelu/; the autograd formula is C++ (forward_autograd), so no backward= here.
    kernels={"CPU": "forward_cpu", "CUDA": "forward_cuda", "Autograd": "forward_autograd"},
    # The seed's kernel (float32 on CUDA, 2-D x, one thread per output, no tiling): a benchmark baseline.
    variants={"fused_linear_gelu_naive(Tensor x, Tensor weight, Tensor bias) -> Tensor": {"CUDA": "naive_cuda"}},
    reference=reference,
    fake=fake,
    doc="""tanh-approximation GELU of the linear layer x @ weight.T + bias.

    x is (..., in_features) with any leading dims (or 1-D), weight (out_features, in_features), bias
    (out_features,); the result is (..., out_features), contiguous. float32, float16, bfloat16 and
    float64 on CPU and CUDA, any strides. float32 on CUDA uses TF32 exactly when nn.Linear would
    (torch.backends.cuda.matmul.allow_tf32). Differentiable in all three inputs (the backward
    recomputes x @ weight.T + bias instead of keeping it); traceable by torch.compile(fullgraph=True).
    """,
    # Values in [-1, 1]: pre-activations of order 1, where the GELU is neither linear nor zero.
    args={"x": TensorArg(shape=lambda s: _x_and_out(s)[0], domain=(-1.0, 1.0)),
          "weight": TensorArg(shape=lambda s: (_x_and_out(s)[1], _in_features(s)), domain=(-1.0, 1.0)),
          "bias": TensorArg(shape=lambda s: (_x_and_out(s)[1],), domain=(-1.0, 1.0))},
    differentiable=("x", "weight", "bias"),
    # 16-bit outputs: the GELU of z in float, rounded once (one unit in the last place), plus what z
    # may err (error_bound); float32's GELU is float32 math itself (the suite's default tolerance).
    tolerances={dtype: rounding_tolerance(dtype) for dtype in (torch.float16, torch.bfloat16)},
    error_bound=error_bound,
    grad_error_bound=grad_error_bound,
    # x's shape + (out_features,): odd sizes, leading dims, 1-D x, empty batch, in_features or
    # out_features of 0 or 1 (where cuBLASLt is skipped), sizes cuBLASLt vectorizes; on CUDA, batches
    # of at most 32 rows take the small-batch kernel (partial tiles, the 32/33 boundary).
    shapes=[(3, 5, 17, 13), (17, 13), (0, 17, 13), (2, 0, 17, 13), (4, 0, 3), (5, 17, 0), (1, 17, 13),
            (5, 1, 13), (5, 17, 1), (64, 96, 40), (2, 33, 128, 72), (32, 70, 20), (33, 70, 20),
            (32, 4096, 65), (33, 4096, 65)],
)
fused_linear_gelu = SPEC.function
naive = SPEC.variants["fused_linear_gelu_naive"]
