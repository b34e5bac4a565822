"""vector_add: c = a + b, element-wise, kernels in csrc/vector_add/ (the math in vector_add.h).

The math is in csrc/vector_add/vector_add.h; the rest is derived from SPEC below,
which the build reads too: keep its schema and kind literal.
"""

from torch import Tensor

from .._declare import declare


def reference(a: Tensor, b: Tensor) -> Tensor:
    """vector_add in plain PyTorch: the tests compare against it in float64, the benchmark times it."""
    return a + b


SPEC = declare(
    "vector_add(Tensor a, Tensor b) -> Tensor",
    kind="elementwise",
    with_out=True,
    # The seed's kernel (float32 on CUDA, one thread per element, int index; csrc/vector_add/vector_add_naive.cpp):
    # a benchmark baseline. Its fake is vector_add's.
    variants={"vector_add_naive(Tensor a, Tensor b) -> Tensor": {"CUDA": "naive"}},
    reference=reference,
    # The > 2**31-element case on CUDA only: the CPU loop it shares (cpu::map) is checked there by scale and
    # fused_bias_gelu (8-37 s of a CPU run each).
    large=("cuda",),
    domain={"a": (-4.0, 4.0), "b": (-4.0, 4.0)},  # where the tests draw each tensor's values
)
vector_add = SPEC.function
vector_add_out = SPEC.twins[0].function
naive = SPEC.variants["vector_add_naive"]
__all__ = ["vector_add", "vector_add_out"]
