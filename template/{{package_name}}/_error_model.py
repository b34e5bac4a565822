"""How far an op's result may be from the exact one: the error model every op is tested against.

The conformance suite compares each result with the float64 reference rounded to the result's dtype:

    |actual - expected| <= atol(dtype) + rtol(dtype) * |expected| + bound

The first two terms are the output's own rounding (one or two units in its last place, with the
suite's per-dtype defaults or the op's `tolerances`: `rounding_tolerance`); `bound` is what the op's arithmetic adds on
top: its spec's `error_bound` (forward) and `grad_error_bound` (gradients), built from the
functions below. An op whose every result is one rounding of float math needs neither.

Sums. A sum of n terms accumulated with unit roundoff u errs by at most about n * u * sum|terms|
(worst case). Round-to-nearest errors behave as independent and of mean zero; then the error stays
below LAMBDA * sqrt(n) * u * sum|terms| except with probability 2 * exp(-LAMBDA**2 / 2) per
element (Higham and Mary, "A new approach to probabilistic rounding error analysis", SIAM J. Sci.
Comput. 41(5), 2019): with LAMBDA = 8, below 3e-14. Blocked, pairwise and tree-shaped sums (every
GEMM, every parallel reduction) err less than the recursive sum this bounds. `sum_error`.

Errors carried in. Terms that already carry independent errors e_k (an intermediate stored in the
op's 16-bit dtype before it is summed, say) give a sum whose error is below
LAMBDA * sqrt(sum e_k**2) with the same probability: `carried_error`, with `rounding_error(x)` the
error of storing x in a dtype.

What the model rules out, and the tests show (examples/tests/test_error_model.py): a dot product
that skips one term, drops a 64-term tile, or keeps its partial sums in 16 bits fails at K = 4096
in every dtype, where a bound that grows like K (an atol times K) let all three pass.
"""

from __future__ import annotations

import math

import torch

LAMBDA = 8.0

_UNIT_ROUNDOFF = {
    torch.float64: 2.0**-53,
    torch.float32: 2.0**-24,
    torch.float16: 2.0**-11,
    torch.bfloat16: 2.0**-8,
}


def unit_roundoff(dtype: torch.dtype) -> float:
    """Half the distance from 1 to the next number of `dtype`: the relative error of one rounding."""
    return _UNIT_ROUNDOFF[dtype]


def rounding_tolerance(dtype: torch.dtype, ulps: float = 1.0) -> tuple[float, float]:
    """(rtol, atol) for results within `ulps` units in the last place of the exact value rounded
    to `dtype` (for an op whose results are rounded once; its sums' error comes on top, from its
    error_bound); atol is the spacing of subnormal numbers, where the relative spacing ends."""
    ulp = 2 * unit_roundoff(dtype)
    return ulps * ulp, ulps * ulp * torch.finfo(dtype).smallest_normal


def accumulation_dtype(dtype: torch.dtype) -> torch.dtype:
    """What an op on `dtype` sums in: float64 for float64, float32 otherwise (torch's opmath)."""
    return torch.float64 if dtype == torch.float64 else torch.float32


def sum_error(abs_sum: torch.Tensor, terms: int, dtype: torch.dtype) -> torch.Tensor:
    """The error of sums of `terms` terms each, accumulated in `dtype`'s accumulation dtype, where
    abs_sum holds each sum's absolute terms added up (|a| @ |b| for a @ b)."""
    return LAMBDA * math.sqrt(max(terms, 1)) * unit_roundoff(accumulation_dtype(dtype)) * abs_sum


def rounding_error(value: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The error of storing `value` in `dtype`."""
    return value.abs() * unit_roundoff(dtype)


def carried_error(squared_errors_summed: torch.Tensor) -> torch.Tensor:
    """The error of sums whose terms carry independent errors e_k, from sum(e_k**2) per sum: for
    errors E in the left operand of a @ b, squared_errors_summed is E**2 @ b**2."""
    return LAMBDA * squared_errors_summed.sqrt()
