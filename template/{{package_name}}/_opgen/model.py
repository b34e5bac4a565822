"""From an op's name, kind and schema to what its templates render: the arguments split into
tensors, scalars and outputs, C++ and Python signatures, and the placeholder math.

One model serves every file of the op (C++ host and kernels, Python wrapper, spec, benchmark), so
they cannot disagree about the signature.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import schema as schema_mod
from .errors import DeclarationError
from .schema import Arg, Schema

DEFAULT_SCHEMAS = {
    "elementwise": "(Tensor x) -> Tensor",
    "reduction": "(Tensor x) -> Tensor",
    "blank": "(Tensor x) -> Tensor",
    "rowwise": "(Tensor x) -> Tensor",
    "custom": "(Tensor x) -> Tensor",
}
_NUMERIC_SCALARS = ("int", "SymInt", "float", "bool")
# Values the generated spec passes for scalars without a default (tests and benchmarks call the op).
_SAMPLE = {"int": "3", "SymInt": "3", "float": "1.5", "bool": "True", "str": '"a"', "ScalarType": "torch.float32"}
_LIST_SAMPLE = {"int[]": "[-1]", "SymInt[]": "[-1]", "float[]": "[1.0]", "Tensor[]": "[]"}


@dataclass
class OpModel:
    op: str
    kind: str
    schema: Schema
    with_out: bool = False
    tensors: list[Arg] = field(default_factory=list)  # tensor inputs, in schema order
    scalars: list[Arg] = field(default_factory=list)  # everything else the op reads
    out: Arg | None = None  # the output written in place (out= ops)
    broadcast: tuple[str, ...] = ()  # inputs broadcast over the first one (declare(broadcast=...))
    out_cols: str = "d"  # a row-wise op's output row length, from its input's d: "d", "d/2", "2*d"
    grads: tuple[str, ...] | None = None  # a row-wise op's differentiable inputs (None: every one)
    storage: bool = False  # an elementwise op's functors take the dtype's type too: Forward<T, S>

    # ---- schema texts -------------------------------------------------------------------------
    @property
    def definition(self) -> str:
        return self.schema.text(self.op)

    @property
    def out_variant_definition(self) -> str:
        """`<op>_out(<inputs>, *, Tensor(a!) out) -> ()`: the functional op's twin that writes into out."""
        args = list(self.schema.args) + [Arg("out", "Tensor", mutable=True, alias="a", kwarg_only=True)]
        return Schema(tuple(args), ()).text(f"{self.op}_out")

    @property
    def differentiable(self) -> list[Arg]:
        """Inputs that get a gradient: every tensor input of a functional element-wise op (those a
        row-wise op declares)."""
        if self.out is not None:
            return []
        return [a for a in self.tensors if self.grads is None or a.name in self.grads]

    @property
    def functor_types(self) -> str:
        """The functors' template arguments: the math type T, and the dtype's S where declared (storage=True)."""
        return "T, scalar_t" if self.storage else "T"

    @property
    def out_cols_ratio(self) -> tuple[int, int]:
        """(p, q): a row-wise op's output rows have d * p / q elements for input rows of d."""
        return parse_out_cols(self.out_cols)

    def out_cols_cpp(self, d: str) -> str:
        p, q = self.out_cols_ratio
        return d if (p, q) == (1, 1) else f"{d} * {p} / {q}" if q != 1 else f"{d} * {p}"

    @property
    def plain_buffer_params(self) -> str:
        """`const Buffer& x, const Buffer& weight`: a row-wise op's tensors as its kernels take them."""
        return ", ".join(f"const Buffer& {a.name}" for a in self.tensors)

    @property
    def broadcast_flags(self) -> str:
        """`false, true`: which of the tensors are broadcast vectors, for opgen::row_tensors."""
        return ", ".join("true" if a.name in self.broadcast else "false" for a in self.tensors)

    @property
    def _backward_params(self) -> list[str]:
        # Every argument positionally and without defaults: only the generated autograd calls it.
        return ["Tensor grad", *(a.schema_text().split("=")[0] for a in self.schema.args)]

    @property
    def backward_definition(self) -> str:
        params = self._backward_params
        grads = self.differentiable
        if len(grads) == 1:
            return f"{self.op}_backward({', '.join(params)}) -> Tensor"
        params += [f"bool needs_{a.name}" for a in grads]
        return f"{self.op}_backward({', '.join(params)}) -> ({', '.join('Tensor' for _ in grads)})"

    # ---- C++ ----------------------------------------------------------------------------------
    def cpp_params(self, args: list[Arg] | None = None) -> str:
        args = self.schema.args if args is None else args
        return ", ".join(f"{a.cpp_type} {a.name}" for a in args)

    @property
    def scalar_members(self) -> list[tuple[str, str]]:
        """(C++ type, name) of each scalar the functors carry: numbers in the math type T."""
        return [("bool" if a.type == "bool" else "T", a.name) for a in self.scalars]

    def functor_init(self, math_type: str = "T") -> str:
        """Brace initializer of a functor from the op's scalar arguments, e.g. `{static_cast<T>(alpha)}`."""
        parts = [a.name if a.type == "bool" else f"static_cast<{math_type}>({a.name})" for a in self.scalars]
        return "{" + ", ".join(parts) + "}"

    @property
    def scalar_cpp_params(self) -> str:
        return ", ".join(f"{a.cpp_type} {a.name}" for a in self.scalars)

    @property
    def numeric_scalars(self) -> list[Arg]:
        return [a for a in self.scalars if a.type != "bool"]

    @property
    def functor_params(self) -> str:
        """`T a, T b`: the functors' per-element parameters, one per tensor input."""
        return ", ".join(f"T {a.name}" for a in self.tensors)

    @property
    def tensor_names(self) -> str:
        return ", ".join(a.name for a in self.tensors)

    @property
    def autograd_inputs(self) -> str:
        """`a, b`: the tensor inputs the Python function checks for requires_grad before it skips the
        autograd layer; empty where an input is a tensor list (those calls always take that layer)."""
        if any(a.is_list and a.type.startswith("Tensor") for a in self.schema.args):
            return ""
        return self.tensor_names

    @property
    def buffer_params(self) -> str:
        """`const Buffer& a, const Buffer& b`: the tensor inputs as a .cu kernel entry takes them (one
        broadcast over the first as a BroadcastBuffer)."""
        return ", ".join(
            f"const {'opgen::BroadcastBuffer' if a.name in self.broadcast else 'Buffer'}& {a.name}"
            for a in self.tensors
        )

    def kernel_input(self, a: Arg) -> str:
        """The input as a kernel loop reads it, inside the dtype dispatch: a pointer, or a Broadcast."""
        return f"{a.name}.as<scalar_t>()" if a.name in self.broadcast else f"{a.name}.as<const scalar_t>()"

    def host_input(self, a: Arg) -> str:
        """The (contiguous) input as the host code hands it to a kernel."""
        if a.name in self.broadcast:
            first = self.tensors[0].name
            return f'opgen::broadcast_input({a.name}_contiguous, "{a.name}", {first}, "{first}")'
        return f"opgen::input({a.name}_contiguous)"

    @property
    def grad_buffer_params(self) -> str:
        return ", ".join(f"const Buffer& grad_{a.name}" for a in self.differentiable)

    @property
    def needs_params(self) -> str:
        return ", ".join(f"bool needs_{a.name}" for a in self.differentiable)

    @property
    def backward_return_type(self) -> str:
        n = len(self.differentiable)
        return "Tensor" if n == 1 else f"std::tuple<{', '.join(['Tensor'] * n)}>"

    @property
    def grad_return(self) -> str:
        names = [f"grad_{a.name}" for a in self.differentiable]
        return names[0] if len(names) == 1 else "{" + ", ".join(names) + "}"

    # ---- placeholder math (the user replaces it) ----------------------------------------------
    @property
    def forward_expression(self) -> str:
        if self.is_default_unary:
            return ""
        factors = [a.name for a in self.tensors] + [a.name for a in self.numeric_scalars]
        return " * ".join(factors)

    def grad_expression(self, arg: Arg) -> str:
        factors = ["grad"] + [a.name for a in self.tensors if a is not arg] + [a.name for a in self.numeric_scalars]
        return " * ".join(factors)

    @property
    def is_default_unary(self) -> bool:
        return self.definition == f"{self.op}(Tensor x) -> Tensor"

    # ---- Python -------------------------------------------------------------------------------
    def python_params(self, with_out: bool = False) -> str:
        parts, star = [], False
        for arg in self.schema.args:
            if arg.kwarg_only and not star:
                parts.append("*")
                star = True
            text = f"{arg.name}: {arg.python_type}"
            parts.append(text if arg.python_default is None else f"{text} = {arg.python_default}")
        if with_out:
            parts += ([] if star else ["*"]) + ["out: Tensor"]
        return ", ".join(parts)

    @property
    def python_args(self) -> str:
        """The parameter names, for a def that takes the op's arguments (a fake kernel)."""
        return ", ".join(a.name for a in self.schema.args)

    @property
    def python_call_args(self) -> str:
        """The arguments of a call of the op: keyword-only ones by keyword."""
        return ", ".join(f"{a.name}={a.name}" if a.kwarg_only else a.name for a in self.schema.args)

    @property
    def reference_params(self) -> str:
        """The op's Python parameters without the output it writes in place."""
        inputs = Schema(tuple(a for a in self.schema.args if not a.mutable), ())
        return OpModel(self.op, self.kind, inputs).python_params()

    @property
    def needs_names(self) -> str:
        return ", ".join(f"needs_{a.name}" for a in self.differentiable)

    @property
    def grad_names(self) -> str:
        return ", ".join(f"grad_{a.name}" for a in self.differentiable)

    @property
    def backward_call_args(self) -> str:
        """The backward op's arguments in _backward: saved tensors by name, scalars from ctx."""
        return ", ".join(["grad"] + [a.name if a.is_tensor else f"ctx.{a.name}" for a in self.schema.args])

    @property
    def needs_from_ctx(self) -> str:
        return ", ".join(f"needs[{self.schema.args.index(a)}]" for a in self.differentiable)

    @property
    def grads_or_none(self) -> str:
        """What _backward returns: one entry per argument, None for scalars and unneeded gradients."""
        return ", ".join(
            f"grad_{a.name} if needs[{i}] else None" if a in self.differentiable else "None"
            for i, a in enumerate(self.schema.args)
        )

    @property
    def spec_args(self) -> str:
        """The spec's `args`: a TensorArg per tensor input, a sample value per scalar."""
        samples = self.sample_scalars
        return ", ".join(
            f'"{a.name}": TensorArg(domain=(-4.0, 4.0))' if a.is_tensor else f'"{a.name}": {samples[a.name]}'
            for a in self.schema.args
            if not a.mutable
        )

    @property
    def bench_call_args(self) -> str:
        """The benchmark's call of the op: tensors by name, scalars at their sample values."""
        samples = self.sample_scalars
        return ", ".join(a.name if a.is_tensor else f"{a.name}={samples[a.name]}" for a in self.schema.args)

    @property
    def bench_reference_args(self) -> str:
        samples = self.sample_scalars
        return ", ".join(
            a.name if a.is_tensor else f"{a.name}={samples[a.name]}" for a in self.schema.args if not a.mutable
        )

    # ---- reductions ---------------------------------------------------------------------------
    @property
    def reduce_arg(self) -> str:
        return self.schema.args[0].name

    @property
    def has_dim(self) -> bool:
        return any(a.name == "dim" for a in self.schema.args)

    @property
    def has_keepdim(self) -> bool:
        return any(a.name == "keepdim" for a in self.schema.args)

    @property
    def reduction_backward_definition(self) -> str:
        return f"{self.op}_backward({', '.join(self._backward_params)}) -> Tensor"

    @property
    def reduction_call_args(self) -> str:
        return ", ".join(a.name for a in self.schema.args)

    # ---- blank ops ----------------------------------------------------------------------------
    @property
    def plain_tensors(self) -> list[Arg]:
        """Tensor inputs that are neither optional nor lists: checked and handed to the kernels."""
        return [a for a in self.tensors if not a.optional and not a.is_list]

    @property
    def kernel_scalars(self) -> list[Arg]:
        """Scalars a .cu kernel entry can take as they are (numbers and bools)."""
        return [a for a in self.scalars if a.type in _NUMERIC_SCALARS and not a.optional and not a.is_list]

    @property
    def results(self) -> list[str]:
        """Names of the tensors the kernels write: the returned ones (result0, ...) and the outputs."""
        returned = [
            r.name or (f"result{i}" if len(self.schema.returns) > 1 else "result")
            for i, r in enumerate(self.schema.returns)
        ]
        return returned + [a.name for a in self.schema.outs]

    @property
    def return_type(self) -> str:
        n = len(self.schema.returns)
        return "void" if n == 0 else "Tensor" if n == 1 else f"std::tuple<{', '.join(['Tensor'] * n)}>"

    @property
    def blank_kernel_params(self) -> str:
        buffers = [f"const Buffer& {r}" for r in self.results] + [f"const Buffer& {a.name}" for a in self.plain_tensors]
        return ", ".join(buffers + [f"{a.cpp_type} {a.name}" for a in self.kernel_scalars])

    @property
    def python_return_type(self) -> str:
        n = len(self.schema.returns)
        return "None" if n == 0 else "Tensor" if n == 1 else f"tuple[{', '.join(['Tensor'] * n)}]"

    @property
    def blank_differentiable(self) -> list[Arg]:
        """The placeholder (a copy of the first input) has a gradient when it returns one tensor."""
        if len(self.schema.returns) == 1 and not self.schema.outs and self.schema.returns[0].type == "Tensor":
            return [self.plain_tensors[0]]
        return []

    @property
    def blank_spec_args(self) -> str:
        samples = {**self.sample_scalars}
        parts = []
        for a in self.schema.args:
            if a.mutable:
                continue
            if a.is_tensor:
                value = "None" if a.optional else "TensorArg(domain=(-4.0, 4.0))"
            elif a.type == "Tensor[]":
                value = "[TensorArg(), TensorArg()]"
            else:
                value = samples[a.name]
            parts.append(f'"{a.name}": {value}')
        return ", ".join(parts)

    @property
    def sample_scalars(self) -> dict[str, str]:
        """Python source of the value the tests pass for each scalar: its default, else a sample."""
        return {
            a.name: a.python_default
            if a.python_default is not None
            else "None"
            if a.optional
            else _SAMPLE.get(a.type, _LIST_SAMPLE.get(a.type))
            for a in self.scalars
        }


_OUT_COLS = re.compile(r"\s*(?:(\d+)\s*\*\s*)?d\s*(?:\*\s*(\d+)|//?\s*(\d+))?\s*\Z")


def parse_out_cols(text: str) -> tuple[int, int]:
    """ "d" -> (1, 1), "d/2" -> (1, 2), "2*d" -> (2, 1): a row length as a multiple of the input's d."""
    match = _OUT_COLS.match(text) if isinstance(text, str) else None
    if not match or (match[1] and match[2]):
        raise DeclarationError(
            f'out_cols= is the output row length from the input\'s, d: "d", "d/2" or "2*d"; got {text!r}'
        )
    p, q = int(match[1] or match[2] or 1), int(match[3] or 1)
    if p == 0 or q == 0:
        raise DeclarationError(f"out_cols= must be a positive multiple of d, got {text!r}")
    return p, q


def build(
    op: str,
    kind: str,
    schema_text: str | None,
    with_out: bool = False,
    broadcast=(),
    out_cols="d",
    grads=None,
    storage: bool = False,
) -> OpModel:
    text = schema_text or DEFAULT_SCHEMAS[kind]
    schema = schema_mod.parse(text)
    model = OpModel(
        op,
        kind,
        schema,
        with_out,
        broadcast=tuple(broadcast),
        out_cols=out_cols,
        grads=None if grads is None else tuple(grads),
        storage=storage,
    )
    model.tensors = [a for a in schema.args if a.is_tensor and not a.mutable]
    model.scalars = [a for a in schema.args if not a.is_tensor]
    outs = schema.outs
    model.out = outs[0] if outs else None
    checks = {
        "elementwise": _check_elementwise,
        "reduction": _check_reduction,
        "blank": _check_blank,
        "rowwise": _check_rowwise,
    }
    checks.get(kind, _check_custom)(model)
    if kind != "custom":  # a custom op's generated code names no locals after its arguments
        _check_generated_names(model)
    _check_broadcast(model)
    return model


def _check_broadcast(model: OpModel) -> None:
    if model.kind != "rowwise" and (model.out_cols != "d" or model.grads is not None):
        raise DeclarationError("out_cols= and differentiable= in the declaration are a row-wise op's")
    if model.storage and model.kind != "elementwise":
        raise DeclarationError("storage= is an elementwise op's (a row-wise op's rows know their dtype: x.round(v))")
    if not model.broadcast:
        return
    if model.kind not in ("elementwise", "rowwise"):
        raise DeclarationError(f"broadcast= is for elementwise ops; a {model.kind} op's host code decides its shapes")
    names = [a.name for a in model.tensors]
    for name in model.broadcast:
        if name not in names:
            raise DeclarationError(f"broadcast= names {name!r}, which is not a tensor input of the schema")
        if name == names[0]:
            raise DeclarationError(
                f"{name!r}, the first tensor input, gives the result's shape and cannot broadcast: "
                "put the full-size input first"
            )


def _check_generated_names(model: OpModel) -> None:
    """The generated code names locals after the arguments (grad_<x>, <x>_contiguous, needs_<x>)."""
    names = {a.name for a in model.schema.args}
    generated = {"result", "stream", "grads"} | {
        f"{prefix}{a.name}{suffix}"
        for a in model.schema.args
        for prefix, suffix in [("grad_", ""), ("", "_contiguous"), ("needs_", ""), ("", "_data")]
    }
    clash = sorted(names & generated)
    if clash:
        raise DeclarationError(f"argument name {clash[0]!r} is also a name the generated code uses; rename it")


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _check_elementwise(model: OpModel, kind: str = "elementwise") -> None:
    schema = model.schema
    hint = "; --kind blank takes any schema"
    for arg in schema.args:
        if arg.is_tensor and (arg.optional or arg.is_list):
            raise DeclarationError(f"{kind} ops take plain tensors, got {arg.schema_text()!r}{hint}")
        if not arg.is_tensor and (arg.type not in _NUMERIC_SCALARS or arg.optional or arg.is_list):
            raise DeclarationError(f"{kind} ops take int, float and bool scalars, got {arg.schema_text()!r}{hint}")
    if len(schema.outs) > 1:
        raise DeclarationError(f"{_article(kind)} {kind} op writes one output, got {len(schema.outs)}{hint}")
    if schema.outs:
        if model.with_out:
            raise DeclarationError("--with-out adds an out= twin to a functional op; this schema already writes `out`")
    elif len(schema.returns) != 1 or schema.returns[0].type != "Tensor":
        raise DeclarationError(
            f"{_article(kind)} {kind} op returns one Tensor (or writes one Tensor(a!) and returns ()){hint}"
        )


def _check_reduction(model: OpModel) -> None:
    schema = model.schema
    usage = (
        "the reduction kind takes `(Tensor x, int dim=-1, bool keepdim=False) -> Tensor` (dim and keepdim "
        "optional, any defaults): a sum over one dimension; write other reductions with --kind blank"
    )
    first, *rest = schema.args
    if (
        not first.is_tensor
        or first.optional
        or first.mutable
        or len(schema.returns) != 1
        or schema.returns[0].type != "Tensor"
    ):
        raise DeclarationError(usage)
    allowed = {"dim": ("int", "SymInt"), "keepdim": ("bool",)}
    for arg in rest:
        if arg.name not in allowed or arg.type not in allowed[arg.name] or arg.optional:
            raise DeclarationError(f"{usage} (got {arg.schema_text()!r})")
    if model.with_out:
        raise DeclarationError("--with-out is for elementwise ops")
    if first.name in {"reduced", "rows", "cols", "grad_rows", "grad_input"}:
        raise DeclarationError(f"argument name {first.name!r} is also a name the generated code uses; rename it")


def _check_blank(model: OpModel) -> None:
    if model.with_out:
        raise DeclarationError("--with-out is for elementwise ops; a blank op's schema can declare Tensor(a!) outputs")
    if not model.plain_tensors:
        raise DeclarationError(
            "a blank op takes a plain Tensor input (not optional, not a list, not written in place): the "
            "generated code takes the device and dtype from the first one"
        )


def _check_custom(model: OpModel) -> None:
    """A custom op's host functions take any schema torch does; only an out= twin is not derived for it."""
    if model.with_out:
        raise DeclarationError("with_out= is for elementwise ops; a custom op declares its out= op as a variant")


def _check_rowwise(model: OpModel) -> None:
    """A row-wise op: tensors cut into rows of their last dimension, int/float/bool scalars, one
    result (returned, or written into one `Tensor! out`) with rows of out_cols."""
    _check_elementwise(model, kind="row-wise")
    parse_out_cols(model.out_cols)  # refuses a row length it cannot read
    if model.with_out:
        raise DeclarationError("with_out= is for elementwise ops; declare a row-wise op's out= form as its schema")
    for name in model.grads or ():
        if name not in [a.name for a in model.tensors]:
            raise DeclarationError(f"differentiable= names {name!r}, which is not a tensor input of the schema")
