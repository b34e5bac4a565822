"""The error model (opgen_examples/_error_model.py) against the bugs a matmul-like kernel has: at
K = 4096, in every dtype, the real op passes its spec's check with room to spare, while the same
math with one term skipped, a 64-term tile dropped, or its partial sums kept in a narrower type
(16 bits; float32 for float64) fails it. The old rule (atol times K) let all three pass in 16 bits.

The broken variants are computed here from the op's own arguments, as a kernel with that bug
would compute them: the point is what the check can tell apart, on the values it really draws.
"""
from __future__ import annotations

import opgen_testing as testing
import pytest
import torch

from opgen_examples.ops.fused_linear_gelu import SPEC as LINEAR_GELU
from opgen_examples.ops.gemm import SPEC as GEMM

K = 4096
TILE = 64
MARGIN = 0.5  # correct code passes with its error bound cut to this share


def _gemm_parts(args):
    """The K-term products as (left, right) and what the op does to their sum afterwards."""
    return args["a"], args["b"], lambda s: s


def _linear_parts(args):
    x = args["x"].reshape(-1, K)
    out_shape = (*args["x"].shape[:-1], args["weight"].shape[0])
    bias = args["bias"]
    return x, args["weight"].t(), lambda s: torch.nn.functional.gelu(s + bias, approximate="tanh").reshape(out_shape)


# More outputs than the SPEC's K = 4096 case: the narrow partial sums show at the worst of them.
OPS = {"gemm": (GEMM, (128, K, 96), _gemm_parts), "fused_linear_gelu": (LINEAR_GELU, (128, K, 96), _linear_parts)}


def _narrower(dtype: torch.dtype) -> torch.dtype:
    """A type too narrow for the partial sums of `dtype`'s products."""
    return torch.float32 if dtype == torch.float64 else torch.bfloat16 if dtype == torch.float32 else dtype


def _mutants(left: torch.Tensor, right: torch.Tensor, dtype: torch.dtype) -> dict[str, torch.Tensor]:
    """left @ right in float64 as three broken kernels would sum it."""
    keep = torch.ones(left.shape[1], dtype=torch.bool, device=left.device)
    keep[-1] = False
    skipped = left[:, keep] @ right[keep]
    keep = torch.ones_like(keep)
    keep[TILE : 2 * TILE] = False
    dropped = left[:, keep] @ right[keep]
    partial = torch.zeros(left.shape[0], right.shape[1], dtype=_narrower(dtype), device=left.device)
    for start in range(0, left.shape[1], TILE):
        chunk = slice(start, start + TILE)
        partial = (partial.double() + left[:, chunk] @ right[chunk]).to(partial.dtype)
    return {"skips one k": skipped, "drops a 64-term tile": dropped, "sums in a narrower type": partial.double()}


@pytest.mark.parametrize("device", testing.DEVICES)
@pytest.mark.parametrize("dtype", testing.FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("op", OPS)
def test_correct_code_passes_with_margin_and_broken_sums_fail(op, dtype, device):
    spec, shape, parts = OPS[op]
    args = testing.draw(spec, shape, dtype, device)
    expected = testing.reference_in_float64(spec, args)
    bound = testing.error_bound(spec, args, dtype)
    rtol, atol = spec.tolerances.get(dtype, testing.tolerances(dtype))
    result = testing.call(spec, args)
    # The output's own rounding (within one unit in the last place: tolerances) has no room to
    # spare: an accumulator a hair off a rounding boundary lands one unit away. The margin is in
    # what the sums may add: correct code passes with half the error bound.
    correct, message = testing.compare(result, expected, rtol, atol, MARGIN * bound)
    left, right, finish = parts(testing.float64_args(spec, args))
    broken = {name: testing.compare(finish(s).to(dtype), expected, rtol, atol, bound)[0]
              for name, s in _mutants(left, right, dtype).items()}
    print(f"{op} {dtype} {device}: correct {testing.compare(result, expected, rtol, atol, bound)[0]:.3f} of the "
          "error allowed; " + ", ".join(f"{name} {ratio:.1f}" for name, ratio in broken.items()))
    assert correct <= 1, f"correct code, with {MARGIN} of its error bound: {message}"
    for name, ratio in broken.items():
        assert ratio > 1, f"a kernel that {name} passes the check ({ratio:.2f} of the error allowed)"
