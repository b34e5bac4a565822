"""What each op declares about itself so that one conformance suite (tests/test_opgen_conformance.py)
can test every op: how to call it, its plain-PyTorch reference, the arguments to draw, dtypes,
tolerances, value domain, and what it supports.

Pure data: importing it needs only torch, and nothing here runs a test.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

FLOATING = (torch.float32, torch.float16, torch.bfloat16, torch.float64)


@dataclass(frozen=True)
class TensorArg:
    """A tensor argument the tests draw at random for each case.

    shape: None for the case's shape, or a function of it (e.g. `lambda s: s[-1:]` for a bias).
    dtype: None for the case's dtype, or a fixed one (an index tensor, say).
    domain: the interval the values are drawn from, so that sqrt gets x >= 0 rather than NaNs.
    """

    shape: Callable[[tuple], tuple] | None = None
    dtype: torch.dtype | None = None
    domain: tuple[float, float] = (-4.0, 4.0)


@dataclass(frozen=True)
class OpSpec:
    """One op, as the conformance suite sees it.

    name: the op's name under torch.ops.<namespace>.
    op: its torch.ops overload (opcheck takes it).
    function: the public Python function; it takes `args` by name and returns the result (an out=
      op writes into the argument named by `out` and returns it).
    reference: plain PyTorch with the same parameters (without `out`), returning what the op computes.
    args: each parameter, in order: a TensorArg to draw, or a fixed value for a scalar.
    kind: "elementwise" (all TensorArgs share the case's shape: the suite checks shape mismatches
      are refused), "reduction", "custom" (declared, host code the user's) or "blank".
    differentiable: the parameters that get gradients (empty: no autograd).
    """

    name: str
    op: Any  # the torch.ops overload, e.g. torch.ops.<namespace>.<name>.default
    function: Callable
    reference: Callable
    args: dict[str, Any]
    kind: str = "blank"
    dtypes: Sequence[torch.dtype] = FLOATING
    devices: Sequence[str] = ("cpu", "cuda")
    differentiable: Sequence[str] = ()
    out: str | None = None
    # (rtol, atol) per dtype against the float64 reference: the output's own rounding; dtypes left
    # out use the suite's defaults.
    tolerances: dict = field(default_factory=dict)
    # What the op's arithmetic adds to that rounding, per element (see _error_model.py): called as
    # error_bound(dtype, **args) with the float64 arguments, it returns a float64 tensor per result
    # (a tuple for several results), e.g. sum_error(a.abs() @ b.abs(), k, dtype) for a @ b.
    error_bound: Callable[..., Any] | None = None
    # The same for gradients: grad_error_bound(dtype, grad, **args) with the result's grad and the
    # arguments in float64 returns {input name: bound of its gradient}; inputs left out get none.
    grad_error_bound: Callable[..., dict] | None = None
    # Deprecated, coarse: multiply atol by this function of the case's shape, for every result and
    # gradient alike. error_bound says what the slack is for, and applies it only there.
    atol_scale: Callable[[tuple], float] | None = None
    # Shapes the reference checks run on (None: the suite's own: empty, scalar, odd, several dims).
    shapes: Sequence[tuple] | None = None
    compiles: bool = True  # torch.compile(fullgraph=True) traces it
    # What models do to an op (the suite checks each): run it twice (False: its bits may differ, and
    # under torch.use_deterministic_algorithms(True) it raises), capture it in a CUDA graph, call it
    # in an autocast region (None: it computes in its inputs' dtype; a dtype: its floating inputs are
    # cast to it there), export it and run it from an AOTInductor package.
    deterministic: bool = True
    cuda_graphs: bool = True
    autocast: torch.dtype | None = None
    exports: bool = True
    # The torch.Tag names its registration gives it (from the above); None: it registers itself.
    tags: tuple[str, ...] | None = None
    first_order_only: bool = True  # a second derivative raises (its backward is a kernel)
    large: bool | Sequence[str] = (
        False  # run the > 2**31-element case (on these devices; True: all, where memory allows)
    )
    # Called on every draw's arguments (in place) to move them off the op's discontinuities, where the
    # op and its float64 reference may rightly differ (a top-k routing tie, an argmax between equals).
    condition: Callable[[dict], None] | None = None
    # Declared with declare(): the suite also runs the checks of what its derived glue promises
    # (special values for an element-wise op; scalars, empty rows, every dim for a reduction).
    derived: bool = False
    # Inputs broadcast over the first tensor (an elementwise op's bias, say): their shape is their
    # TensorArg's, and a shape that does not broadcast is refused in its own words.
    broadcast: Sequence[str] = ()
    triton: bool = False  # its kernels are Triton's (declare(triton=...)): rows of at most 64K, say
    twins: Sequence[OpSpec] = ()  # variants declared with it (its out= twin), tested as ops of their own
    # Other ops declared with it (declare(variants=...), its seed kernel, say), by name: their public
    # functions, for the op's own tests and benchmarks; the suite does not test them.
    variants: dict[str, Callable] = field(default_factory=dict)

    @property
    def tensor_args(self) -> list[str]:
        return [name for name, value in self.args.items() if isinstance(value, TensorArg)]
