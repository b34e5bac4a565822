"""declare(): an op module's one declaration, from which everything that is not the op's math is made.

    SPEC = declare("scale(Tensor x, float alpha) -> Tensor", kind="elementwise", reference=reference)
    scale = SPEC.function

The build reads the schema and the options it needs (kind, with_out) from the module's source and
writes the op's C++ registration, host code and launches into build/opgen/ (_opgen/cpp.py). On import,
declare() makes the rest: the public function with the schema's parameters and type hints, the fake
kernels torch.compile traces with, the autograd registration, and the SPEC the conformance suite and
the benchmarks read. Template-owned: a fix here reaches every declared op.
"""

from __future__ import annotations
import __future__

import ast
import linecache
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from . import _build, _modes, _triton, _triton_glue
from ._autograd import below_autograd, first_order_only
from ._error_model import carried_error, rounding_error, sum_error
from ._opgen import model as op_model
from ._opgen.declaration import KINDS, derived_tags, split_definition
from ._opgen.errors import DeclarationError
from ._spec import OpSpec, TensorArg

__all__ = ["declare", "DeclarationError", "TensorArg"]

# Sizes the reduction checks run on: short rows (a warp each), long rows (a block each), empty rows and batches.
REDUCTION_SHAPES = [(1,), (7,), (5000,), (33, 65), (3, 5, 1027), (2, 4099), (4, 0), (0, 9), (1000, 3)]
# A row-wise op's (rows..., d / q): rows of one element, odd ones, a block's worth, 16K (a block's, or
# a cluster's for a backward and for 4-byte elements), 64K (a cluster's), longer than shared memory
# holds (> 64K, odd), empty rows and no rows; 5120 and 40960, whole rows that take blocks and
# clusters of other than a power of two of warps and blocks (the kernels' twins for whole rows), and
# 2880 and 36864, whole rows whose last warp or block has idle threads past the row (36864 in 9
# cluster blocks of 128 threads); 8192, a whole row of 2-byte elements in an 8-vector block of 128
# threads on devices with more bandwidth an SM than an H100's (for a LayerNorm, reading weight and
# bias where used); there, 36864, 40960 and 65536 of 2-byte elements in clusters of 9 blocks of 64
# threads and 5 and 8 blocks of 128, 8 vectors a thread, for a forward that fits them (a softmax, a
# log-softmax rereading its row in each loop), else of 9, 10 and 16 blocks of 128 threads.
ROWWISE_SHAPES = [
    (1,),
    (7,),
    (3, 1),
    (5, 33),
    (4, 1024),
    (2, 3, 100),
    (1, 4099),
    (2, 16384),
    (2, 65536),
    (2, 70001),
    (3, 5120),
    (2, 40960),
    (3, 2880),
    (2, 36864),
    (2, 8192),
    (3, 0),
    (0, 16),
]
# A Triton row-wise op keeps a row in registers: rows up to 64K (the CUDA kind's > 64K case is refused).
TRITON_ROWWISE_SHAPES = [s for s in ROWWISE_SHAPES if s[-1] <= _triton_glue.MAX_ROW]
DEFAULT_DOMAIN = {"elementwise": (-4.0, 4.0), "reduction": (-1.0, 1.0), "rowwise": (-4.0, 4.0)}


def declare(
    schema: str,
    *,
    kind: str,
    reference: Callable | None = None,
    term: Callable | None = None,
    domain: dict[str, tuple[float, float]] | None = None,
    example: dict[str, Any] | None = None,
    with_out: bool = False,
    broadcast: tuple[str, ...] | list[str] = (),
    out_cols: str = "d",
    storage: bool = False,
    triton: Callable | tuple[Callable, ...] | None = None,
    kernels: dict[str, str] | None = None,
    variants: dict[str, dict[str, str]] | None = None,
    fake: Callable | dict[str, Callable] | None = None,
    backward: Callable | None = None,
    setup_context: Callable | None = None,
    doc: str | None = None,
    **spec_options: Any,
) -> OpSpec:
    """Declare the op `schema` names (the module's own name), whose math is csrc/<op>/<op>.h.

    kind: "elementwise" (Forward/Backward functors over same-shape tensors) or "reduction" (a sum of
      Term over one dimension, TermGrad its derivative).
    reference: the op in plain PyTorch, with the schema's parameters (elementwise); a reduction's is
      the sum of `term`, the per-element math in plain PyTorch.
    domain: {tensor: (low, high)}, where the tests draw its values (default -4..4; -1..1 for a sum).
    example: {scalar: value} that tests and benchmarks pass where the schema gives no default.
    with_out: also an `<op>_out(..., *, Tensor(a!) out)` twin.
    kind "rowwise": Forward/Backward functors over one row of the last dimension at a time
      (common/rowwise.h); out_cols: the result's row length from the input's d ("d", "d/2", "2*d");
      broadcast: the inputs that are one vector of d elements every row reads (a norm's weight);
      differentiable: the inputs that get gradients (default every tensor; () for none).
    storage: an elementwise op's functors take the dtype's type as well, Forward<T, S>, to round an
      intermediate as a kernel computing in the dtype would (opgen::rounded<S>(v)).
    broadcast: an elementwise op's inputs that broadcast over its first tensor (a bias over the last
      dims, a scale of shape [C, 1, 1]); the tests draw them along the last dim unless args= says else,
      their gradients are summed back to their shape.

    triton: (forward, backward), the op's math as @triton.jit functions (an elementwise or rowwise op
      without C++: _triton_glue.py says what they take); its CPU path is the reference.

    kind "custom" (the host functions and kernels in csrc/<op>/ are the user's; the registration and the
    Python glue are derived):
    kernels: {dispatch key: C++ host function in namespace <ns>::<op>}, default {"CPU": "forward", "CUDA": "forward"}.
    fake: the results' shapes for torch.compile, with the schema's parameters (a dict {op: fake} for variants).
    backward, setup_context: its autograd formula, as torch.library.register_autograd takes them.
    doc: the public function's docstring.
    checked_as: "elementwise" also runs the element-wise checks on it (its host code keeps that kind's rules).

    variants: {schema: kernels} of other ops the module registers (its seed kernel, say), any kind;
      SPEC.variants has their functions. fake= gives their fakes ({variant: fake} for a derived kind);
      a variant with the op's own arguments takes the op's fake by default.
    spec_options: any other OpSpec field (tolerances, error_bound, shapes, dtypes, compiles, ...).
    """
    op, signature = split_definition(schema, "declare()")
    if kind not in KINDS:
        raise DeclarationError(f"{op}: kind must be one of {', '.join(map(repr, KINDS))}, got {kind!r}")
    if triton is not None and kind not in ("elementwise", "rowwise"):
        raise DeclarationError(f"{op}: triton= is for the elementwise and rowwise kinds, not {kind}")
    if kind != "custom" and (kernels or backward or setup_context or doc):
        raise DeclarationError(
            f"{op}: kernels=, backward=, setup_context= and doc= are a custom op's; the {kind} kind derives them"
        )
    grads = spec_options.pop("differentiable", None) if kind == "rowwise" else None
    m = op_model.build(op, kind, signature, with_out, broadcast, out_cols, grads, storage)
    glue = _Glue(m, _build.NAMESPACE, spec_options.get("deterministic", True))
    if triton is None:  # what the build registered the op with (a Triton op's registration takes none)
        spec_options["tags"] = derived_tags(
            *(spec_options.get(name, True) for name in ("compiles", "deterministic", "cuda_graphs"))
        )
    if spec_options.get("autocast") is not None and m.out is not None:
        raise DeclarationError(
            f"{op}: autocast= casts inputs to a new dtype, which an op writing into {m.out.name} cannot take"
        )
    # (a custom op's host code may call ATen ops, which autocast would otherwise recast)
    _modes.register_autocast(f"{glue.ns}::{op}", spec_options.get("autocast"), isolate=kind == "custom")
    # A variant takes the op's fake (derived, for the derived kinds) where it does not declare its own.
    if kind != "custom" and fake is not None and not isinstance(fake, dict):
        raise DeclarationError(
            f"{op}: the {kind} kind derives its fake; fake= can only give its variants' ({{name: fake}})"
        )
    fakes = _fakes(op, fake, variants or {})
    if kind != "custom":
        same = [name for name, text in _split_variants(op, variants or {}) if text == signature and name not in fakes]
        fakes.update(dict.fromkeys(same, glue.fake()))
    variant_functions = {name: _variant(name, text, fakes) for name, text in _split_variants(op, variants or {})}
    if kind == "custom":
        if reference is None:
            raise DeclarationError(f"{op}: declare reference=, the op in plain PyTorch that the tests hold it to")
        return _custom(m, glue, reference, fakes, backward, setup_context, doc, variant_functions, spec_options)
    if kind == "reduction":
        if term is None:
            raise DeclarationError(f"{op}: a reduction declares term=, what it sums in plain PyTorch")
        reference = reference or glue.reduction_reference(term)
        spec_options.setdefault("error_bound", glue.reduction_error_bound(term))
        spec_options.setdefault("shapes", REDUCTION_SHAPES)
    elif reference is None:
        raise DeclarationError(f"{op}: declare reference=, the op in plain PyTorch that the tests hold it to")
    if kind == "rowwise":
        spec_options.setdefault("shapes", ROWWISE_SHAPES if triton is None else TRITON_ROWWISE_SHAPES)
    if triton is not None:
        forward, backward_math = (tuple(triton) + (None,))[:2] if isinstance(triton, (tuple, list)) else (triton, None)
        glue.direct = _triton_glue.register(m, _build.NAMESPACE, forward, backward_math, reference, signature)
    else:
        glue.register_fakes()
    if m.differentiable:
        # first_order_only=False: the module registers its backward op's own autograd formula.
        glue.register_autograd(first_order=spec_options.get("first_order_only", True))
    args = _spec_args(
        m, {**dict.fromkeys([a.name for a in m.tensors], DEFAULT_DOMAIN[kind]), **(domain or {})}, example or {}
    )
    args.update(spec_options.pop("args", {}))  # what the module says of an input (a broadcast one's shape, say)
    if m.broadcast:
        if "grad_error_bound" not in spec_options and m.differentiable:
            spec_options["grad_error_bound"] = glue.broadcast_grad_error_bound(reference)
    common = dict(
        reference=reference,
        args=args,
        kind=kind,
        derived=True,
        broadcast=m.broadcast,
        triton=triton is not None,
        **spec_options,
    )
    if m.out is None:  # a Triton op's CPU path is the reference, whose float32 copies would not fit
        common.setdefault("large", kind == "elementwise" and (("cuda",) if triton is not None else True))
    twins = ()
    if with_out:
        # (autocast= casts the functional op's inputs; an out= twin computes in its out's dtype)
        twin_options = {k: v for k, v in common.items() if k not in ("large", "differentiable", "autocast")}
        twins = (
            OpSpec(name=f"{op}_out", op=glue.overload("_out"), function=glue.out_twin(), out="out", **twin_options),
        )
    return OpSpec(
        name=op,
        op=glue.overload(),
        function=glue.function(),
        differentiable=tuple(a.name for a in m.differentiable),
        out=m.out.name if m.out is not None else None,
        twins=twins,
        variants=variant_functions,
        **common,
    )


# ---- custom ops: the user's host functions, registered from the declaration ----------------------
def _split_variants(op: str, variants: dict) -> list[tuple[str, str]]:
    return [split_definition(text, f"{op}: variants=") for text in variants]


def _fakes(op: str, fake, variants: dict) -> dict[str, Callable]:
    """{op name: fake kernel}: a dict as given, or one fake for the op and for each variant."""
    if isinstance(fake, dict):
        return dict(fake)
    if fake is None:
        return {}
    return {op: fake, **{name: fake for name, _ in _split_variants(op, variants)}}


def _variant(name: str, signature: str, fakes: dict) -> Callable:
    glue = _Glue(op_model.build(name, "custom", signature), _build.NAMESPACE)
    glue.register_custom_fake(fakes.get(name))
    return glue.custom_function(autograd_inputs=(), doc=f"{name}: a variant registered beside its op.")


def _custom(m, glue, reference, fakes, backward, setup_context, doc, variant_functions, spec_options) -> OpSpec:
    glue.register_custom_fake(fakes.get(m.op))
    plain = [a.name for a in m.tensors if not a.optional and not a.is_list]
    differentiable = tuple(spec_options.pop("differentiable", () if backward is None else plain))
    # The public function skips the autograd layer when none of these needs a gradient: every input
    # that a Python formula may differentiate, else the ones a C++ one does.
    autograd_inputs = plain if backward is not None else differentiable
    if backward is not None:
        torch.library.register_autograd(f"{glue.ns}::{m.op}", backward, setup_context=setup_context)
    elif setup_context is not None:
        raise DeclarationError(f"{m.op}: setup_context= goes with backward=")
    args = spec_options.pop("args", None) or _spec_args(m, dict.fromkeys(plain, DEFAULT_DOMAIN["elementwise"]), {})
    return OpSpec(
        name=m.op,
        op=glue.overload(),
        function=glue.custom_function(autograd_inputs, doc),
        reference=reference,
        args=args,
        kind=spec_options.pop("checked_as", "custom"),
        differentiable=differentiable,
        out=m.out.name if m.out is not None else None,
        variants=variant_functions,
        **spec_options,
    )


def _spec_args(m, domain: dict, example: dict) -> dict[str, Any]:
    unknown = sorted(set(domain) - {a.name for a in m.tensors}) + sorted(set(example) - {a.name for a in m.scalars})
    if unknown:
        raise DeclarationError(f"{m.op}: domain= and example= name arguments the schema lacks: {', '.join(unknown)}")
    args = {}
    for arg in m.schema.args:
        if arg.mutable:
            continue
        if arg.is_tensor:
            args[arg.name] = TensorArg(shape=_drawn_shape(m, arg), domain=tuple(domain[arg.name]))
        else:
            args[arg.name] = example.get(arg.name, ast.literal_eval(m.sample_scalars[arg.name]))
    return args


def _drawn_shape(m, arg) -> Callable | None:
    """The shape the tests draw an input with, from the case's: an elementwise op's broadcast input
    along the last dimension; a row-wise op's inputs with rows of q * d (out_cols = d * p / q), its
    broadcast ones one such row."""
    if m.kind == "rowwise":
        q = m.out_cols_ratio[1]
        if arg.name in m.broadcast:
            return lambda shape: (q * tuple(shape)[-1],) if tuple(shape) else (q,)
        return lambda shape: (*tuple(shape)[:-1], q * tuple(shape)[-1]) if tuple(shape) else (q,)
    return (lambda shape: tuple(shape)[-1:]) if arg.name in m.broadcast else None


# What the functions compiled from source call, besides their op.
_FUNCTION_HELPERS = {
    "grad_enabled": torch.is_grad_enabled,
    "is_compiling": torch.compiler.is_compiling,
    "below_autograd": below_autograd,
    "alert_not_deterministic": _modes.alert_not_deterministic,
}


class _Glue:
    """Python made from the op model: functions with the schema's own parameters are compiled from
    source (as dataclasses does), so they cost no more a call than hand-written ones."""

    def __init__(self, m, namespace: str, deterministic: bool = True):
        self.m, self.ns = m, namespace
        self.deterministic = deterministic
        self.direct = None  # a Triton op's forward launcher, for calls that need no dispatcher

    def _alert(self, suffix: str = "") -> str:
        """A nondeterministic op's functions alert as torch's own do (_modes.alert_not_deterministic)."""
        return "" if self.deterministic else f"    alert_not_deterministic('{self.ns}.{self.m.op}{suffix}')\n"

    def overload(self, suffix: str = ""):
        return getattr(getattr(torch.ops, self.ns), self.m.op + suffix).default

    def _compile(self, name: str, source: str, **names: Any) -> Callable:
        filename = f"<{self.ns}::{self.m.op} {name}, made by declare()>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # for tracebacks
        code = compile(source, filename, "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True)
        scope = {"torch": torch, "Tensor": Tensor, **_FUNCTION_HELPERS, **names}
        exec(code, scope)
        return scope[name]

    # ---- the public functions -------------------------------------------------------------------
    def function(self) -> Callable:
        m = self.m
        call = f"_op({m.python_call_args})"
        if m.out is not None:  # returns out, as torch's own out= functions do
            body = f"    {call}\n    return {m.out.name}\n"
            returns, doc = (
                "Tensor",
                f"Write {m.op} of {m.tensor_names} into {m.out.name} (any strides, not overlapping an input); "
                f"return {m.out.name}.",
            )
        else:
            launch = ""
            if self.direct is not None:  # a Triton op: its launcher, where no mode or transform would see the call
                args = ", ".join(a.name for a in m.schema.args)
                launch = f"    if plain_eager({m.tensor_names}):\n        return _launch({args})\n"
            names = [name for name in m.autograd_inputs.split(", ") if name]
            body = self._autograd_or_below(names, launch)
            returns, doc = "Tensor", self._doc()
        source = f'def {m.op}({m.python_params()}) -> {returns}:\n    """{doc}"""\n{self._alert()}{body}'
        op = self.overload()
        return self._compile(
            m.op, source, _op=op, _launch=self.direct, plain_eager=_triton.plain_eager, _builtin=op._op
        )

    def _autograd_or_below(self, names: list[str], between: str = "") -> str:
        """The body of a function that calls the op through its autograd layer only where that layer
        has work: gradient mode on and an input (of `names`) requiring grad, or torch.compile tracing
        the call. Otherwise it dispatches below the layer (whose Python costs about 10 us a call), as
        the layer itself would, calling the overload's C++ function: no Python frame of its own. The
        test is written out inline for the same reason (torch.library's own, torch/_library/autograd.py)."""
        call_args = self.m.python_call_args
        optional = {a.name for a in self.m.tensors if a.optional}
        grads = " or ".join(
            f"({n} is not None and {n}.requires_grad)" if n in optional else f"{n}.requires_grad" for n in names
        )
        condition = f"({grads}) and grad_enabled() or is_compiling()" if grads else "is_compiling()"
        return (
            f"    if {condition}:\n        return _op({call_args})\n"
            + between
            + "    with below_autograd():  # nothing to differentiate: skip the autograd layer\n"
            f"        return _builtin({call_args})\n"
        )

    def custom_function(self, autograd_inputs, doc: str | None) -> Callable:
        """A custom op's public function: the op, below the autograd layer where nothing needs a gradient."""
        m = self.m
        call = f"_op({m.python_call_args})"
        if autograd_inputs:
            body = self._autograd_or_below(list(autograd_inputs))
        elif m.out is not None:  # an op writing in place returns its output, as torch's out= functions do
            body = f"    {call}\n    return {m.out.name}\n"
        else:
            body = f"    return {call}\n"
        returns = "Tensor" if m.out is not None else m.python_return_type
        doc = (doc or f"{m.op}: its host code is in csrc/{m.op}/.").replace('"""', "'''")
        source = f'def {m.op}({m.python_params()}) -> {returns}:\n    """{doc}"""\n{self._alert()}{body}'
        op = self.overload()
        return self._compile(m.op, source, _op=op, _builtin=op._op)

    def register_custom_fake(self, fake: Callable | None) -> None:
        """The user's fake kernel, or one returning None for an op that returns nothing."""
        m = self.m
        if fake is None:
            if m.schema.returns:
                raise DeclarationError(
                    f"{m.op}: declare fake=, a function of the schema's parameters that returns its results as "
                    "empty tensors of the right shape and dtype (torch.compile and opcheck trace with it)"
                )
            fake = self._compile("fake", f"def fake({m.python_params()}):\n    return None\n")
        torch.library.register_fake(f"{self.ns}::{m.op}", fake)

    def out_twin(self) -> Callable:
        m = self.m
        source = (
            f"def {m.op}_out({m.python_params(with_out=True)}) -> Tensor:\n"
            f'    """{m.op}(...) written into out (any strides; not overlapping an input); returns out."""\n'
            f"{self._alert('_out')}    _op({m.python_call_args}, out=out)\n"
            "    return out\n"
        )
        return self._compile(f"{m.op}_out", source, _op=self.overload("_out"))

    def _doc(self) -> str:
        m = self.m
        if m.kind == "reduction":
            where = "dimension `dim`" if m.has_dim else "the last dimension"
            return (
                f"Sum {m.op}'s term over {where} of {m.reduce_arg}.\n\n    float32, float16, bfloat16 and float64 "
                "on CPU and CUDA, accumulated in float32 (float64 for float64);\n    differentiable; traceable by "
                "torch.compile(fullgraph=True).\n    "
            )
        if m.kind == "rowwise":
            first = m.tensors[0].name
            return (
                f"Apply {m.op} to each row of {first}'s last dimension (d); the result's rows are "
                f"{m.out_cols} long.\n\n"
                "    float32, float16, bfloat16 or float64 tensors of one dtype and device (CPU or CUDA), any\n"
                "    strides; the result is contiguous. Traceable by torch.compile(fullgraph=True).\n    "
            )
        return (
            f"Apply {m.op} element-wise.\n\n    {m.tensor_names}: float32, float16, bfloat16 or float64 tensors "
            "of one shape, dtype and device\n    (CPU or CUDA), any strides; the result is contiguous. "
            "Differentiable; traceable by torch.compile(fullgraph=True).\n    "
        )

    # ---- what the tests and benchmarks call a reduction's reference and error bound -------------
    def _reduction_dims(self) -> tuple[str, str]:
        m = self.m
        return ("dim" if m.has_dim else "-1"), ("keepdim" if m.has_keepdim else "False")

    def reduction_reference(self, term: Callable) -> Callable:
        m, (dim, keepdim) = self.m, self._reduction_dims()
        source = (
            f"def reference({m.python_params()}) -> Tensor:\n"
            f'    """{m.op} in plain PyTorch: term() summed."""\n'
            f"    return term({m.reduce_arg}).sum(dim={dim}, keepdim={keepdim})\n"
        )
        return self._compile("reference", source, term=term)

    def reduction_error_bound(self, term: Callable) -> Callable:
        """What a correct sum adds to its result's rounding: size(dim) terms accumulated in float32
        (float64 for float64); see _error_model.py."""
        m, (dim, keepdim) = self.m, self._reduction_dims()
        x = m.reduce_arg
        source = (
            f"def error_bound(dtype, {m.python_params()}) -> Tensor:\n"
            f"    length = {x}.shape[{dim}] if {x}.dim() else 1\n"
            f"    return sum_error(term({x}).abs().sum(dim={dim}, keepdim={keepdim}), length, dtype)\n"
        )
        return self._compile("error_bound", source, term=term, sum_error=sum_error)

    def broadcast_grad_error_bound(self, reference: Callable) -> Callable:
        """What a broadcast input's gradient adds to its rounding: its per-element gradients, each
        rounded to the dtype, summed over the broadcast dimensions by torch in float32 (float64 for
        float64); see _error_model.py."""
        names = [a.name for a in self.m.tensors if a.name in self.m.broadcast]
        first = self.m.tensors[0].name

        def per_element_grads(grad, args):
            """Each broadcast input's gradient before torch sums it: one term per element it met."""
            expanded = {name: args[name].expand_as(args[first]).detach().clone().requires_grad_() for name in names}
            try:
                return torch.autograd.grad(reference(**{**args, **expanded}), list(expanded.values()), grad)
            except RuntimeError:  # a reference that wants them at their own shape (F.layer_norm's weight)
                return per_row_grads(grad, args)

        def per_row_grads(grad, args):
            # A row-wise op: the gradient each row alone gives each broadcast input, rows batched by vmap.
            rows = {
                a.name: args[a.name].reshape(-1, args[a.name].shape[-1]) for a in self.m.tensors if a.name not in names
            }

            def one_row(row_args, row_grad):
                def f(*broadcast):
                    return reference(**{**args, **row_args, **dict(zip(names, broadcast))})

                return torch.func.vjp(f, *[args[name] for name in names])[1](row_grad)

            return torch.func.vmap(one_row)(rows, grad.reshape(-1, grad.shape[-1]))

        def grad_error_bound(dtype, grad, **args):
            per_element = per_element_grads(grad, args)
            bounds = {}
            for name, g in zip(names, per_element):
                shape, terms = args[name].shape, max(g.numel() // max(args[name].numel(), 1), 1)
                carried = carried_error(rounding_error(g, dtype).square().sum_to_size(shape))
                bounds[name] = carried + sum_error(g.abs().sum_to_size(shape), terms, dtype)
            return bounds

        return grad_error_bound

    # ---- fake kernels: the results' shapes, for torch.compile and opcheck -----------------------
    def register_fakes(self) -> None:
        name = f"{self.ns}::{self.m.op}"
        torch.library.register_fake(name, self.fake())
        self._register_other_fakes(name)

    def fake(self) -> Callable:
        """The derived fake kernel of an elementwise or reduction op."""
        m = self.m
        if m.kind == "reduction":
            dim, keepdim = self._reduction_dims()
            x = m.reduce_arg
            return self._compile(
                "fake",
                f"def fake({m.python_params()}):\n"
                f"    return {x}.new_empty(reduced_shape({x}, {dim}, {keepdim}, {x!r}))\n",
                reduced_shape=reduced_shape,
            )
        if m.kind == "rowwise":
            return self._rowwise_fake()
        if m.out is not None:
            return self._compile("fake", f"def fake({m.python_params()}):\n    return None\n")
        first = m.tensors[0].name
        checks = "".join(
            f"    torch._check(torch.broadcast_shapes({b}.shape, {first}.shape) == {first}.shape,\n"
            f'                 lambda: f"{b} must broadcast over {first}, got {b} {{tuple({b}.shape)}} and {first} '
            f'{{tuple({first}.shape)}}")\n'
            for b in m.broadcast
        )
        return self._compile(
            "fake",
            f"def fake({m.python_params()}):\n{checks}"
            f"    return torch.empty_like({first}, memory_format=torch.contiguous_format)\n",
        )

    def _rowwise_fake(self) -> Callable:
        m = self.m
        first = m.tensors[0].name
        p, q = m.out_cols_ratio
        checks = [
            f"    torch._check({first}.dim() >= 1, lambda: '{first} must have at least one dimension (its rows are "
            "along the last), got a scalar')\n",
            f"    torch._check({first}.shape[-1] % {q} == 0, lambda: f\"{first}'s last dimension must be a multiple "
            f'of {q}, got {{{first}.shape[-1]}}")\n',
        ]
        for a in m.tensors[1:]:
            rule = f"({first}.shape[-1],)" if a.name in m.broadcast else f"{first}.shape"
            checks.append(
                f'    torch._check(tuple({a.name}.shape) == tuple({rule}), lambda: f"{a.name} must have shape '
                f'{{tuple({rule})}}, got {{tuple({a.name}.shape)}}")\n'
            )
        result = f"{first}.new_empty((*{first}.shape[:-1], {first}.shape[-1] * {p} // {q}))"
        returns = "    return None\n" if m.out is not None else f"    return {result}\n"
        return self._compile("fake", f"def fake({m.python_params()}):\n{''.join(checks)}{returns}")

    def _register_other_fakes(self, name: str) -> None:
        m = self.m
        if m.with_out:
            torch.library.register_fake(
                f"{name}_out", self._compile("fake", f"def fake({m.python_params(with_out=True)}):\n    return None\n")
            )
        if m.differentiable:
            torch.library.register_fake(f"{name}_backward", self._backward_fake())

    def _backward_fake(self) -> Callable:
        m = self.m
        if m.kind == "rowwise":  # each gradient shaped like the first input (a broadcast one's, per row)
            first = m.tensors[0].name
            if len(m.differentiable) == 1:
                source = f"def fake(grad, {m.python_args}):\n    return torch.empty_like({first})\n"
            else:
                source = (
                    f"def fake(grad, {m.python_args}, {m.needs_names}):\n"
                    f"    shapes = ({first}.shape if needed else (0,) for needed in ({m.needs_names},))\n"
                    f"    return tuple({first}.new_empty(shape) for shape in shapes)\n"
                )
            return self._compile("fake", source)
        if m.kind == "reduction":
            dim, keepdim = self._reduction_dims()
            x = m.reduce_arg
            source = (
                f"def fake(grad, {m.python_args}):\n"
                f"    torch._check(list(grad.shape) == reduced_shape({x}, {dim}, {keepdim}, {x!r}),\n"
                f'                 lambda: "grad must have the shape of the result")\n'
                f"    return torch.empty_like({x}, memory_format=torch.contiguous_format)\n"
            )
        elif len(m.differentiable) == 1:
            source = (
                f"def fake(grad, {m.python_args}):\n"
                "    return torch.empty_like(grad, memory_format=torch.contiguous_format)\n"
            )
        else:
            source = (
                f"def fake(grad, {m.python_args}, {m.needs_names}):\n"
                f"    return tuple(grad.new_empty(grad.shape if needed else (0,)) for needed in ({m.needs_names},))\n"
            )
        return self._compile("fake", source, reduced_shape=reduced_shape)

    # ---- autograd: save the tensor inputs and the scalars, call <op>_backward -------------------
    def register_autograd(self, first_order: bool = True) -> None:
        m = self.m
        arguments = m.schema.args
        is_tensor = [a.is_tensor for a in arguments]
        tensor_at = [i for i, t in enumerate(is_tensor) if t]
        scalar_at = [i for i, t in enumerate(is_tensor) if not t]
        grad_at = [arguments.index(a) for a in m.differentiable]
        backward_op = self.overload("_backward")
        several = m.kind != "reduction" and len(grad_at) > 1  # then <op>_backward takes needs_<x> flags
        broadcast_at = [arguments.index(a) for a in m.tensors if a.name in m.broadcast]

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*(inputs[i] for i in tensor_at))
            ctx.scalars = [inputs[i] for i in scalar_at]

        def backward(ctx, grad):
            tensors, scalars = iter(ctx.saved_tensors), iter(ctx.scalars)
            call_args = [next(tensors) if t else next(scalars) for t in is_tensor]
            needs = ctx.needs_input_grad
            grads = [None] * len(arguments)
            if several:
                results = backward_op(grad, *call_args, *(needs[i] for i in grad_at))
                for i, result in zip(grad_at, results):
                    grads[i] = result if needs[i] else None
            else:
                grads[grad_at[0]] = backward_op(grad, *call_args)
            for i in broadcast_at:  # the kernel's per-element gradients, summed over the broadcast dims
                if grads[i] is not None:
                    grads[i] = grads[i].sum_to_size(call_args[i].shape)
            return tuple(grads)

        torch.library.register_autograd(f"{self.ns}::{m.op}", backward, setup_context=setup_context)
        if first_order:
            first_order_only(f"{self.ns}::{m.op}_backward")


def reduced_shape(x: Tensor, dim: int, keepdim: bool, name: str = "x") -> list[int]:
    """x's shape without dimension `dim` (or with size 1 there, for keepdim), as the kernels check it."""
    torch._check(x.dim() >= 1, lambda: f"{name} must have at least one dimension (the one reduced), got a scalar")
    torch._check(-x.dim() <= dim < x.dim(), lambda: f"dim must be in [{-x.dim()}, {x.dim() - 1}], got {dim}")
    dim = dim % x.dim()
    return [1 if d == dim else size for d, size in enumerate(x.shape) if keepdim or d != dim]
