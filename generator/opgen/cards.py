"""`opgen docs`: each op's doc card, docs/ops/<op>.md (@generated), from what the op declares: its
schema, kind and module docstring. A declared op's schema is its declaration's; an op with its own
glue gives it in the manifest or in its `m.def("<op>(...) -> ...")`. The benchmark figures between
the card's markers stay."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from . import manifest, render
from .errors import OpgenError
from .project import Project

START, END = "<!-- opgen:benchmarks -->", "<!-- /opgen:benchmarks -->"
GENERATED = "<!-- @generated"


def _summary(module: Path) -> str:
    """The module docstring's first sentence, unless it is still the placeholder."""
    if not module.is_file():
        return ""
    docstring = ast.get_docstring(ast.parse(module.read_text())) or ""
    first = " ".join(docstring.split("\n\n", 1)[0].split())
    return "" if "Say here" in first else first.split(": ", 1)[-1]


def _defined_schema(project: Project, op: str) -> str | None:
    """"(<args>) -> <returns>" from the op's own `m.def("<op>(...) -> ...")`."""
    pattern = re.compile(rf'm\.def\(\s*"{op}(\(.*?\)\s*->\s*[^"]*)"', re.S)
    for source in sorted((project.root / "csrc" / op).glob("*.cpp")):
        match = pattern.search(source.read_text())
        if match:
            return " ".join(match[1].split())
    return None


def card(project: Project, op: str) -> str:
    recorded = manifest.load(project.root)["ops"].get(op, {})
    declared = project.declared_ops().get(op)
    if declared is not None:
        kind, schema, with_out = declared.kind, declared.schema, declared.with_out
        if getattr(declared, "triton", False):  # the kind `opgen new` names it by
            kind = {"elementwise": "triton", "rowwise": "triton_rowwise"}[kind]
    else:
        own_kind = recorded.get("kind", "blank")
        kind, with_out = ("blank", False) if own_kind == "elementwise" and not recorded.get("schema") else (
            own_kind, recorded.get("with_out", False))
        schema = recorded.get("schema") or _defined_schema(project, op)
        if schema is None:
            raise OpgenError(f"{op}: no schema to document (not declared, not recorded, no m.def in csrc/{op}/)")
    summary = _summary(project.root / project.package / "ops" / f"{op}.py")
    ctx = render.context(op, project.package, project.namespace, kind, schema, with_out, project.root, summary)
    if kind == "custom":  # its host code is the user's, as a blank op's: the card says the same
        kind = ctx["kind"] = "blank"
    return render.render_op(kind, ctx, None)[f"docs/ops/{op}.md"]


def write(project: Project, ops: list[str], force: bool) -> list[str]:
    """Write the cards of `ops` (default: every op); a card without the @generated mark is the
    user's and is rewritten only with force. Returns the paths written."""
    ops = ops or project.existing_ops()
    written, refused = [], []
    for op in ops:
        path = project.root / "docs" / "ops" / f"{op}.md"
        text = card(project, op)
        old = path.read_text() if path.is_file() else None
        if old is not None and START in old and END in old:  # keep the measured figures
            figures = old.split(START, 1)[1].split(END, 1)[0]
            text = text.split(START, 1)[0] + START + figures + END + text.split(END, 1)[1]
        if old == text:
            continue
        if old is not None and not old.startswith(GENERATED) and not force:
            refused.append(str(path.relative_to(project.root)))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(str(path.relative_to(project.root)))
    if refused:
        raise OpgenError(f"{', '.join(refused)} are not @generated (written by hand or by an older opgen): pass "
                         "--force to replace them, or delete them")
    return written
