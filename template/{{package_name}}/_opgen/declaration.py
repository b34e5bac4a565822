"""Reads an op's declaration, `SPEC = declare("<op>(<args>) -> <returns>", kind=..., ...)` in
<package>/ops/<op>.py, from the module's source: the build needs the schema and options before the
package (or torch) can be imported, so they must be literals."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import DeclarationError

# The kinds whose glue is derived: all of it for "elementwise", "reduction" and "rowwise" (the math is
# the user's functors), the registration for "custom" (the host functions and kernels are the user's).
KINDS = ("elementwise", "reduction", "rowwise", "custom")
# What the build reads, besides the schema (the last three for the op's tags, see tags()).
_OPTIONS = {
    "kind": str,
    "with_out": bool,
    "out_cols": str,
    "storage": bool,
    "compiles": bool,
    "deterministic": bool,
    "cuda_graphs": bool,
}
# read with ast.literal_eval: dicts and lists of strings
_LITERALS = ("kernels", "variants", "broadcast", "differentiable")
# The host function each dispatch key runs, where kernels= does not say: `forward` on CPU and CUDA.
DEFAULT_KERNELS = {"CPU": "forward", "CUDA": "forward"}
_DEFINITION = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\(.*)\Z", re.S)


@dataclass(frozen=True)
class Declaration:
    op: str
    schema: str  # without the name: "(Tensor x) -> Tensor"
    kind: str
    with_out: bool
    path: Path
    line: int
    # {dispatch key: C++ host function} of a custom op, e.g. {"CPU": "forward_cpu", "CUDA": "forward_cuda"}
    kernels: dict = field(default_factory=dict)
    # Other ops the module registers beside the main one (its seed kernel, say): ((name, schema, kernels), ...)
    variants: tuple = ()
    # Inputs of an elementwise op broadcast over its first tensor (a bias, a per-channel scale)
    broadcast: tuple = ()
    out_cols: str = "d"  # a row-wise op's output row length, from its input's d
    grads: tuple | None = None  # a row-wise op's differentiable inputs (None: every tensor input)
    storage: bool = False  # an elementwise op's functors take the dtype's type: Forward<T, S>
    triton: bool = False  # its math is @triton.jit functions (declare(triton=...)): no C++ to build
    compiles: bool = True  # torch.compile(fullgraph=True) traces it
    deterministic: bool = True  # two runs on the same inputs give the same bits
    cuda_graphs: bool = True  # a CUDA graph can capture it

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def tags(self) -> tuple[str, ...]:
        return derived_tags(self.compiles, self.deterministic, self.cuda_graphs)


def derived_tags(compiles: bool, deterministic: bool, cuda_graphs: bool) -> tuple[str, ...]:
    """The torch.Tag names an op registers with, from what its declaration says of it (the
    conformance suite checks each claim): pt2_compliant_tag where torch.compile traces it,
    nondeterministic_bitwise where two runs may differ, cudagraph_unsafe where no graph captures it."""
    return (
        (("pt2_compliant_tag",) if compiles else ())
        + (() if deterministic else ("nondeterministic_bitwise",))
        + (() if cuda_graphs else ("cudagraph_unsafe",))
    )


def split_definition(text: str, where: str) -> tuple[str, str]:
    """("foo", "(Tensor x) -> Tensor") from "foo(Tensor x) -> Tensor"."""
    match = _DEFINITION.match(text)
    if not match:
        raise DeclarationError(f"{where}: the schema {text!r} should read `<op>(<arguments>) -> <returns>`")
    return match[1], match[2].strip()


def _declare_call(tree: ast.Module) -> ast.Call | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name == "declare":
                return node
    return None


def read(path: Path) -> Declaration | None:
    """The declaration in an op module, or None where it has none (a blank op, a helper module)."""
    text = path.read_text(errors="replace")
    if "declare(" not in text:
        return None
    try:
        call = _declare_call(ast.parse(text, str(path)))
    except SyntaxError as error:
        raise DeclarationError(
            f"{path}:{error.lineno}: {error.msg} (the build reads the op's declaration here)"
        ) from None
    if call is None:
        return None
    where = f"{path}:{call.lineno}"
    literal = "the build reads it without running the module, so write it as a literal"
    if not call.args or not isinstance(call.args[0], ast.Constant) or not isinstance(call.args[0].value, str):
        raise DeclarationError(f"{where}: declare()'s first argument, the schema, must be a string: {literal}")
    op, schema = split_definition(call.args[0].value, where)
    if op != path.stem:
        raise DeclarationError(
            f"{where}: the schema names the op {op!r}, but the module is {path.name}: make them agree"
        )
    options = {
        "kind": None,
        "with_out": False,
        "out_cols": "d",
        "storage": False,
        "compiles": True,
        "deterministic": True,
        "cuda_graphs": True,
    }
    nodes = {}
    triton = any(keyword.arg == "triton" for keyword in call.keywords)
    for keyword in call.keywords:
        if keyword.arg in _LITERALS:
            nodes[keyword.arg] = keyword.value
        elif keyword.arg in _OPTIONS:
            if not isinstance(keyword.value, ast.Constant) or not isinstance(
                keyword.value.value, _OPTIONS[keyword.arg]
            ):
                raise DeclarationError(
                    f"{where}: declare()'s {keyword.arg}= must be a {_OPTIONS[keyword.arg].__name__}: {literal}"
                )
            options[keyword.arg] = keyword.value.value
    if options["kind"] not in KINDS:
        raise DeclarationError(
            f"{where}: declare() needs kind= one of {', '.join(map(repr, KINDS))}, got "
            f"{options['kind']!r} (a blank op writes its own glue and declares nothing)"
        )
    if options["kind"] != "rowwise":
        nodes.pop("differentiable", None)  # the other kinds' differentiable= is not the build's business
    literals = {}
    for name, node in nodes.items():
        try:
            literals[name] = ast.literal_eval(node)
        except ValueError:
            raise DeclarationError(f"{where}: declare()'s {name}= must be a literal: {literal}") from None
    kernels = _kernels(literals.get("kernels", DEFAULT_KERNELS), f"{where}: kernels=")
    if kernels != DEFAULT_KERNELS and options["kind"] != "custom":
        raise DeclarationError(
            f"{where}: kernels= names a custom op's host functions; the {options['kind']} kind derives them"
        )
    variants = []
    for text, variant_kernels in _dict(literals.get("variants", {}), f"{where}: variants=").items():
        name, variant_schema = split_definition(text, f"{where}: variants=")
        if not name.startswith(f"{op}_"):
            raise DeclarationError(f"{where}: the variant {name!r} should be named {op}_<something>, after its op")
        variants.append((name, variant_schema, _kernels(variant_kernels, f"{where}: variants[{name!r}]")))
    return Declaration(
        op,
        schema,
        options["kind"],
        options["with_out"],
        path,
        call.lineno,
        kernels if options["kind"] == "custom" else {},
        tuple(variants),
        _names(literals.get("broadcast", ()), f"{where}: broadcast="),
        options["out_cols"],
        _names(literals["differentiable"], f"{where}: differentiable=") if "differentiable" in literals else None,
        options["storage"],
        triton,
        options["compiles"],
        options["deterministic"],
        options["cuda_graphs"],
    )


def _names(value, where: str) -> tuple:
    if not isinstance(value, (list, tuple)) or not all(isinstance(name, str) for name in value):
        raise DeclarationError(f"{where} must be a list of the schema's tensor names, got {value!r}")
    return tuple(value)


def _dict(value, where: str) -> dict:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise DeclarationError(f"{where} must be a dict with string keys, got {value!r}")
    return value


_CPP_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _kernels(value, where: str) -> dict:
    """{dispatch key: C++ function name}, checked."""
    kernels = _dict(value, where)
    for key, function in kernels.items():
        if not _CPP_NAME.match(key) or not isinstance(function, str) or not _CPP_NAME.match(function):
            raise DeclarationError(
                f"{where} maps a dispatch key (CPU, CUDA, Autograd, ...) to a C++ function's name, "
                f"got {key!r}: {function!r}"
            )
    if not kernels:
        raise DeclarationError(f"{where} names no host function: the op would run nowhere")
    return dict(kernels)


def find(ops_dir: Path) -> dict[str, Declaration]:
    """{op: declaration} for every op module in <package>/ops/ that declares one."""
    if not ops_dir.is_dir():
        return {}
    found = {}
    for path in sorted(ops_dir.glob("*.py")):
        if not path.name.startswith("_"):
            declaration = read(path)
            if declaration is not None:
                found[declaration.op] = declaration
    return found
