"""Parses an op signature in torch's schema syntax, `(Tensor a, Tensor b, float c=1.0) -> Tensor`,
into the arguments and returns the templates render from.

Only what both torch C++ APIs (the stable ABI and ATen) can pass to a kernel is accepted: Tensor,
Tensor?, Tensor[], Tensor(a!) or Tensor! (an output written in place), int, float, bool, int[], float[], str,
ScalarType and their optional (`?`) forms. Every refusal says what to write instead.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass

from .errors import DeclarationError

# schema type -> (C++ parameter type, Python type hint)
_SCALARS = {
    "int": ("int64_t", "int"),
    "SymInt": ("int64_t", "int"),
    "float": ("double", "float"),
    "bool": ("bool", "bool"),
    "str": ("std::string", "str"),
    "ScalarType": ("opgen::ScalarType", "torch.dtype"),
}
_LISTS = {
    "int": ("std::vector<int64_t>", "list[int]"),
    "SymInt": ("std::vector<int64_t>", "list[int]"),
    "float": ("std::vector<double>", "list[float]"),
    "Tensor": ("std::vector<opgen::Tensor>", "list[Tensor]"),
}
_UNSUPPORTED = {
    "Scalar": "the stable ABI has no Scalar: use float (or int)",
    "Device": "pass a tensor on the device instead",
    "Layout": "kernels here take strided tensors only",
    "MemoryFormat": "kernels here write contiguous outputs",
    "Generator": "draw random numbers in Python and pass them as a tensor",
    "bool[]": "use int[] (0/1) or several bool arguments",
}
_NAME = re.compile(r"[a-z_][a-z0-9_]*\Z")
_RESERVED = {"grad", "self", "out_", "ctx", "torch", "Tensor", "result", "stream", "device_guard", "m"}


@dataclass(frozen=True)
class Arg:
    name: str
    type: str  # base type: "Tensor", "int", "float", ..., "int[]", "Tensor[]"
    optional: bool = False  # `Tensor?`, `int?`: may be None
    mutable: bool = False  # `Tensor(a!)`: written in place (an out argument)
    alias: str | None = None  # "a" in `Tensor(a!)`
    default: str | None = None  # schema text of the default value, e.g. "1.0", "None", "[-1]"
    kwarg_only: bool = False  # after `*`
    size: int | None = None  # N in `int[N]`

    @property
    def is_tensor(self) -> bool:
        return self.type == "Tensor"

    @property
    def is_list(self) -> bool:
        return self.type.endswith("[]")

    def schema_text(self) -> str:
        base = self.type
        if self.is_list and self.size is not None:
            base = f"{self.type[:-2]}[{self.size}]"
        if self.alias is not None:
            base += f"({self.alias}{'!' if self.mutable else ''})"
        elif self.mutable:
            base += "!"
        text = f"{base}{'?' if self.optional else ''} {self.name}"
        return text if self.default is None else f"{text}={self.default}"

    @property
    def cpp_type(self) -> str:
        """The type a kernel takes this argument as, on either torch API."""
        if self.is_tensor:
            core = "opgen::Tensor"
        elif self.is_list:
            core = _LISTS[self.type[:-2]][0]
        else:
            core = _SCALARS[self.type][0]
        if self.optional:
            core = f"std::optional<{core}>"
        by_reference = self.is_tensor or self.is_list or self.optional or self.type == "str"
        return f"const {core}&" if by_reference else core

    @property
    def python_type(self) -> str:
        hint = "Tensor" if self.is_tensor else (_LISTS[self.type[:-2]][1] if self.is_list else _SCALARS[self.type][1])
        return f"{hint} | None" if self.optional else hint

    @property
    def python_default(self) -> str | None:
        """The default as Python source (None if the argument has none)."""
        if self.default is None:
            return None
        return {"None": "None", "True": "True", "False": "False"}.get(self.default, self.default)


@dataclass(frozen=True)
class Return:
    type: str  # "Tensor" or "Tensor[]"
    name: str | None = None
    alias: str | None = None
    mutable: bool = False

    def schema_text(self) -> str:
        text = self.type + (f"({self.alias}{'!' if self.mutable else ''})" if self.alias else "")
        return f"{text} {self.name}" if self.name else text


@dataclass(frozen=True)
class Schema:
    args: tuple[Arg, ...]
    returns: tuple[Return, ...]

    def text(self, name: str) -> str:
        """The schema as torch's `m.def` takes it: `name(args) -> returns`."""
        parts, star = [], False
        for arg in self.args:
            if arg.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(arg.schema_text())
        if len(self.returns) == 1 and not self.returns[0].name:
            returns = self.returns[0].schema_text()
        else:
            returns = f"({', '.join(r.schema_text() for r in self.returns)})"
        return f"{name}({', '.join(parts)}) -> {returns}"

    @property
    def tensors(self) -> list[Arg]:
        return [a for a in self.args if a.is_tensor]

    @property
    def inputs(self) -> list[Arg]:
        """Every argument but the outputs written in place."""
        return [a for a in self.args if not a.mutable]

    @property
    def outs(self) -> list[Arg]:
        return [a for a in self.args if a.mutable]


def _split_top_level(text: str) -> list[str]:
    """Split at commas outside brackets and parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


# `Tensor(a!)` names the alias of an output written in place; `Tensor!` (vLLM's spelling) writes in place without one.
_TYPE = re.compile(
    r"(?P<base>[A-Za-z]+)(?:\[(?P<size>\d*)\])?(?:\((?P<alias>[a-z])(?P<bang>!?)\)|(?P<bare>!))?(?P<optional>\??)\Z"
)


def _parse_type(text: str, where: str) -> tuple[str, int | None, str | None, bool, bool]:
    """`Tensor(a!)?` -> (type, list size, alias, mutable, optional)."""
    match = _TYPE.match(text.replace(" ", ""))
    if not match:
        raise DeclarationError(f"{where}: cannot read the type {text!r}")
    base, size, alias = match["base"], match["size"], match["alias"]
    type_ = base if size is None else f"{base}[]"
    if type_ in _UNSUPPORTED or base in _UNSUPPORTED:
        raise DeclarationError(
            f"{where}: type {text!r} is not supported: {_UNSUPPORTED.get(type_) or _UNSUPPORTED[base]}"
        )
    known = _LISTS if size is not None else {**_SCALARS, "Tensor": None}
    if base not in known:
        raise DeclarationError(
            f"{where}: unknown type {text!r}; use Tensor, Tensor?, Tensor(a!), int, float, bool, int[], "
            "float[], Tensor[], str or ScalarType"
        )
    if (alias or match["bare"]) and base != "Tensor":
        raise DeclarationError(f"{where}: only tensors take an alias annotation like Tensor(a!), got {text!r}")
    mutable = bool(match["bang"] or match["bare"])
    return type_, (int(size) if size else None), alias, mutable, bool(match["optional"])


def _parse_arg(text: str, kwarg_only: bool, position: int) -> Arg:
    where = f"argument {position + 1} ({text!r})"
    declaration, _, default = text.partition("=")
    pieces = declaration.rsplit(None, 1)
    if len(pieces) != 2:
        raise DeclarationError(f"{where}: write it as `<type> <name>`, e.g. `Tensor x` or `float alpha=1.0`")
    type_text, name = pieces
    type_, size, alias, mutable, optional = _parse_type(type_text, where)
    if not _NAME.match(name) or keyword.iskeyword(name):
        raise DeclarationError(f"{where}: {name!r} is not a usable argument name (lowercase identifier, not a keyword)")
    if name in _RESERVED:
        raise DeclarationError(f"{where}: the name {name!r} is used by the generated code; pick another")
    if alias and not mutable:
        raise DeclarationError(
            f"{where}: a read-only alias `Tensor({alias})` would make the op return a view, which the "
            f"generated kernels do not do; drop it, or write `Tensor({alias}!)` for an output"
        )
    if mutable and optional:
        raise DeclarationError(f"{where}: an output written in place cannot be optional")
    default = default.strip() or None
    if default is not None:
        _check_default(default, type_, optional, where)
    return Arg(name, type_, optional, mutable, alias, default, kwarg_only, size)


def _check_default(default: str, type_: str, optional: bool, where: str) -> None:
    ok = {
        "int": re.fullmatch(r"-?\d+", default),
        "SymInt": re.fullmatch(r"-?\d+", default),
        "float": re.fullmatch(r"-?(\d+\.?\d*([eE][-+]?\d+)?|inf|nan)", default),
        "bool": default in ("True", "False"),
        "str": re.fullmatch(r"'[^']*'|\"[^\"]*\"", default),
        "int[]": re.fullmatch(r"\[\s*(-?\d+\s*(,\s*-?\d+\s*)*)?\]|-?\d+", default),
        "float[]": re.fullmatch(r"\[[-\d.,\s eE+]*\]", default),
    }.get(type_)
    if default == "None":
        if not optional:
            raise DeclarationError(f"{where}: default None needs an optional type (add `?`)")
        return
    if not ok:
        raise DeclarationError(f"{where}: default {default!r} does not fit type {type_}")


def _parse_returns(text: str) -> tuple[Return, ...]:
    text = text.strip()
    if text == "()":
        return ()
    inner = text[1:-1] if text.startswith("(") and text.endswith(")") else text
    returns = []
    for i, part in enumerate(_split_top_level(inner)):
        pieces = part.split()
        where = f"return {i + 1} ({part!r})"
        type_, size, alias, mutable, optional = _parse_type(pieces[0], where)
        if type_ not in ("Tensor", "Tensor[]") or optional:
            raise DeclarationError(
                f"{where}: an op returns tensors (Tensor, Tensor[], or a tuple of them); "
                "pass other results back as tensors"
            )
        name = pieces[1] if len(pieces) > 1 else None
        returns.append(Return(type_, name, alias, mutable))
    return tuple(returns)


def parse(text: str) -> Schema:
    """Parse `(args) -> returns`; a leading op name (`my_op(...)`) is ignored: the command names the op."""
    text = text.strip()
    match = re.fullmatch(r"(?:[a-z_][a-z0-9_.]*)?\s*\((?P<args>.*)\)\s*->\s*(?P<returns>.+)", text, re.S)
    if not match:
        raise DeclarationError(f"cannot read the schema {text!r}: write it as `(Tensor x, float alpha=1.0) -> Tensor`")
    args, kwarg_only = [], False
    for part in _split_top_level(match["args"]):
        if part == "*":
            kwarg_only = True
            continue
        args.append(_parse_arg(part, kwarg_only, len(args)))
    returns = _parse_returns(match["returns"])
    schema = Schema(tuple(args), returns)
    _check_whole(schema)
    return schema


def _check_whole(schema: Schema) -> None:
    names = [a.name for a in schema.args]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        raise DeclarationError(f"argument name {duplicate!r} is used twice")
    if not any(a.type in ("Tensor", "Tensor[]") for a in schema.args):
        raise DeclarationError("the schema takes no Tensor: an op here works on at least one tensor")
    seen_default = False
    for arg in schema.args:
        if arg.kwarg_only:
            continue
        if arg.default is not None:
            seen_default = True
        elif seen_default:
            raise DeclarationError(
                f"argument {arg.name!r} has no default but follows one that has: give it a default "
                "or move it before them (or after `*`)"
            )
    aliases = [a.alias for a in schema.outs if a.alias is not None]
    if len(set(aliases)) != len(aliases):
        raise DeclarationError("two outputs share an alias: give each Tensor(x!) its own letter")
    if schema.outs and schema.returns:
        raise DeclarationError(
            "an op that writes outputs in place returns `()`: torch.compile cannot trace a custom op "
            "that returns (an alias of) its input, and a new tensor beside the outputs is ambiguous"
        )
    if any(r.alias for r in schema.returns):
        raise DeclarationError(
            "a return with an alias (`-> Tensor(a!)`) is not supported: return `()` and let the "
            "caller use the output argument"
        )
