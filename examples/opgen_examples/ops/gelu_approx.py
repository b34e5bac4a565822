"""gelu_approx: Say here in a sentence what it computes.

The math is in csrc/gelu_approx/gelu_approx.h; the rest is derived from SPEC below,
which the build reads too: keep its schema and kind literal.
"""

import torch
from torch import Tensor

from .._declare import declare


def reference(x: Tensor) -> Tensor:
    """gelu_approx in plain PyTorch: the tests hold the kernels to it in float64."""
    return x * torch.sigmoid(x)


SPEC = declare(
    "gelu_approx(Tensor x) -> Tensor",
    kind="elementwise",
    reference=reference,
    domain={"x": (-4.0, 4.0)},  # where the tests draw each tensor's values
)
gelu_approx = SPEC.function
__all__ = ["gelu_approx"]
