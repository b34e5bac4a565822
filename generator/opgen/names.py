"""Which op names `opgen new` accepts."""
from __future__ import annotations

import keyword
import re

from .errors import OpgenError

_PATTERN = re.compile(r"[a-z][a-z0-9_]*")
MAX_LENGTH = 64

# The op name becomes a C++ namespace, a Python module and function, and file names.
_CPP_KEYWORDS = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class
compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype
default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline
int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public register
reinterpret_cast requires return short signed sizeof static static_assert static_cast struct switch template
this thread_local throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t
while xor xor_eq
""".split())
# Names already taken in a generated project, or by torch.ops / the op's own generated helpers.
_RESERVED = frozenset({
    "common", "ops", "jit", "testing", "harness", "report", "python_module", "torch", "at", "c10", "std",
    "opgen", "cuda", "cpu", "default", "overloads", "name", "test", "tests", "benchmarks", "self",
})


def validate_op_name(name: str, package: str | None = None, namespace: str | None = None) -> str:
    """Return `name` if it can name an op, else raise OpgenError saying why."""
    if not _PATTERN.fullmatch(name):
        raise OpgenError(
            f"invalid op name {name!r}: use lowercase letters, digits and '_', starting with a letter (e.g. gelu_approx)"
        )
    if len(name) > MAX_LENGTH:
        raise OpgenError(f"invalid op name {name!r}: longer than {MAX_LENGTH} characters")
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        raise OpgenError(f"invalid op name {name!r}: it is a Python keyword")
    if name in _CPP_KEYWORDS:
        raise OpgenError(f"invalid op name {name!r}: it is a C++ keyword")
    if name in _RESERVED or name in (package, namespace):
        raise OpgenError(f"invalid op name {name!r}: the name is reserved in a generated project")
    if name.endswith("_backward"):
        raise OpgenError(f"invalid op name {name!r}: names ending in _backward are kept for generated backward ops")
    return name
