"""Reads an op's declaration, `SPEC = declare("<op>(<args>) -> <returns>", kind=..., ...)` in
<package>/ops/<op>.py, from the module's source: the build needs the schema and options before the
package (or torch) can be imported, so they must be literals."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import DeclarationError

KINDS = ("elementwise", "reduction")  # the kinds whose glue is derived; "blank" ops own theirs
_OPTIONS = {"kind": str, "with_out": bool}  # what the build reads, besides the schema
_DEFINITION = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\(.*)\Z", re.S)


@dataclass(frozen=True)
class Declaration:
    op: str
    schema: str  # without the name: "(Tensor x) -> Tensor"
    kind: str
    with_out: bool
    path: Path
    line: int

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


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
    options = {"kind": None, "with_out": False}
    for keyword in call.keywords:
        if keyword.arg in _OPTIONS:
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
    return Declaration(op, schema, options["kind"], options["with_out"], path, call.lineno)


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
