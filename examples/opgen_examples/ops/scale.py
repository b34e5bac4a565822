"""scale: Say here in a sentence what it computes.

The math is in csrc/scale/scale.h; the rest is derived from SPEC below,
which the build reads too: keep its schema and kind literal.
"""

from torch import Tensor

from .._declare import declare


def reference(x: Tensor, factor: float = 2.0) -> Tensor:
    """scale in plain PyTorch: the tests hold the kernels to it in float64."""
    return x * factor


SPEC = declare(
    "scale(Tensor x, float factor=2.0) -> Tensor",
    kind="elementwise",
    reference=reference,
    domain={"x": (-4.0, 4.0)},  # where the tests draw each tensor's values
    example={"factor": 2.0},  # the scalars tests and benchmarks pass
)
scale = SPEC.function
__all__ = ["scale"]
