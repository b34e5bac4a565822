"""fused_bias_gelu: y = gelu_tanh(x + bias), bias broadcast over the leading dims of x, in one pass.

Reads x once and writes y once (eager PyTorch makes a round trip to memory for x + bias); the sum is
taken in float (double for float64) and rounded once. The math is csrc/fused_bias_gelu/fused_bias_gelu.h
(the GELU is gelu_approx's); the rest is derived from the declaration below.
"""

import torch
from torch import Tensor

from .._declare import TensorArg, declare


def reference(x: Tensor, bias: Tensor) -> Tensor:
    """fused_bias_gelu in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return torch.nn.functional.gelu(x + bias, approximate="tanh")


SPEC = declare(
    "fused_bias_gelu(Tensor x, Tensor bias) -> Tensor",
    kind="elementwise",
    broadcast=["bias"],  # over x's last dimensions (or any block of them, as a [C, 1, 1] scale would)
    reference=reference,
    args={"bias": TensorArg(shape=lambda s: s[-1:])},  # the tests draw bias along the last dim
    # At least one dim (bias runs along the last), plus rows a whole number of 16-byte vectors wide
    # (the CUDA vector path) of several widths.
    shapes=[(0,), (1,), (7,), (1031,), (4, 0, 3), (33, 65), (3, 5, 1027), (70001,),
            (8,), (3, 16), (129, 24), (2, 3, 768), (1, 8192), (7001, 8)],
)
fused_bias_gelu = SPEC.function
__all__ = ["fused_bias_gelu"]
