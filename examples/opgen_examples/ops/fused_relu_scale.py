"""fused_relu_scale: Say here in a sentence what it computes.

The math is in csrc/fused_relu_scale/fused_relu_scale.h; the rest is derived from SPEC below,
which the build reads too: keep its schema and kind literal.
"""

from torch import Tensor

from .._declare import declare


def reference(x: Tensor, alpha: float) -> Tensor:
    """fused_relu_scale in plain PyTorch: the tests hold the kernels to it in float64."""
    return x * alpha


SPEC = declare(
    "fused_relu_scale(Tensor x, float alpha) -> Tensor",
    kind="elementwise",
    reference=reference,
    domain={"x": (-4.0, 4.0)},  # where the tests draw each tensor's values
    example={"alpha": 1.5},  # the scalars tests and benchmarks pass
)
fused_relu_scale = SPEC.function
__all__ = ["fused_relu_scale"]
