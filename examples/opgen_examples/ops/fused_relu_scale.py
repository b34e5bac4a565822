"""fused_relu_scale: y = max(x, 0) * alpha, element-wise in one pass, kernels in
csrc/fused_relu_scale/ (the math in fused_relu_scale.h); ReluScaleModel uses it inside an nn.Module.

The math is in csrc/fused_relu_scale/fused_relu_scale.h; the rest is derived from SPEC below,
which the build reads too: keep its schema and kind literal.
"""

import torch
from torch import Tensor

from .._declare import declare


def reference(x: Tensor, alpha: float) -> Tensor:
    """fused_relu_scale in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return torch.relu(x) * alpha


SPEC = declare(
    "fused_relu_scale(Tensor x, float alpha) -> Tensor",
    kind="elementwise",
    # The seed's kernel (float32 on CUDA, one thread per element, int index; csrc/fused_relu_scale/
    # fused_relu_scale_naive.cpp): a benchmark baseline. Its fake is fused_relu_scale's.
    variants={"fused_relu_scale_naive(Tensor x, float alpha) -> Tensor": {"CUDA": "naive"}},
    reference=reference,
    # The > 2**31-element case on CUDA only: the CPU loop it shares (cpu::map) is checked there by scale and
    # fused_bias_gelu (8-37 s of a CPU run each).
    large=("cuda",),
    domain={"x": (-4.0, 4.0)},  # where the tests draw each tensor's values
    example={"alpha": 1.5},  # the scalars tests and benchmarks pass
)
fused_relu_scale = SPEC.function
naive = SPEC.variants["fused_relu_scale_naive"]
__all__ = ["fused_relu_scale", "ReluScaleModel"]


class ReluScaleModel(torch.nn.Module):
    """The seed's model: Linear(features, features), then fused_relu_scale(alpha)."""

    def __init__(self, features: int = 100, alpha: float = 1.5):
        super().__init__()
        self.linear = torch.nn.Linear(features, features)
        self.alpha = alpha

    def forward(self, x: Tensor) -> Tensor:
        return fused_relu_scale(self.linear(x), alpha=self.alpha)
