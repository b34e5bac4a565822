"""vector_add: Say here in a sentence what it computes.

The math is in csrc/vector_add/vector_add.h; the rest is derived from SPEC below,
which the build reads too: keep its schema and kind literal.
"""

from torch import Tensor

from .._declare import declare


def reference(a: Tensor, b: Tensor) -> Tensor:
    """vector_add in plain PyTorch: the tests hold the kernels to it in float64."""
    return a * b


SPEC = declare(
    "vector_add(Tensor a, Tensor b) -> Tensor",
    kind="elementwise",
    with_out=True,
    reference=reference,
    domain={"a": (-4.0, 4.0), "b": (-4.0, 4.0)},  # where the tests draw each tensor's values
)
vector_add = SPEC.function
vector_add_out = SPEC.twins[0].function
__all__ = ["vector_add", "vector_add_out"]
