"""Renders an op kind's Jinja templates (templates/<kind>/, paths templated too) in memory."""
from __future__ import annotations

from pathlib import Path, PurePosixPath

import jinja2

from . import formatting, opmodel

TEMPLATES = Path(__file__).resolve().parent / "templates"
SUFFIX = ".jinja"


def kinds() -> list[str]:
    return sorted(d.name for d in TEMPLATES.iterdir() if d.is_dir() and not d.name.startswith("_"))


def _environment() -> jinja2.Environment:
    # `_shared/` holds what every kind renders too (the op's doc card).
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def context(op: str, package: str, namespace: str, kind: str, schema: str | None = None,
            with_out: bool = False) -> dict:
    """What the templates see: names, and `m`, the op model built from the schema (see opmodel.py)."""
    return {
        "op": op,
        "Op": "".join(part.capitalize() for part in op.split("_")),
        "pkg": package,
        "ns": namespace,
        "kind": kind,
        "m": opmodel.build(op, kind, schema, with_out),
    }


def render_op(kind: str, ctx: dict, project_root: Path | None = None) -> dict[str, str]:
    """{project-relative posix path: file text} for every template of `kind`, formatted with the
    tools and settings of the project at `project_root` (as rendered without one)."""
    env = _environment()
    files = {}
    # The kind's own templates, and those every kind gets (_shared/: the op's doc card).
    paths = sorted((TEMPLATES / kind).rglob(f"*{SUFFIX}")) + sorted((TEMPLATES / "_shared").rglob(f"*{SUFFIX}"))
    for path in paths:
        relative = PurePosixPath(path.relative_to(TEMPLATES).as_posix())
        target = env.from_string(str(PurePosixPath(*relative.parts[1:]))[: -len(SUFFIX)]).render(ctx)
        files[target] = env.get_template(str(relative)).render(ctx)
    return formatting.format_files(project_root, files) if project_root is not None else files


def render_recorded_op(root: Path, package: str, namespace: str, op: str, entry: dict) -> dict[str, str]:
    """What `opgen new` would write today for an op recorded in the project's manifest (its kind,
    schema and --with-out), formatted as the project at `root` formats it."""
    ctx = context(op, package, namespace, entry["kind"], entry.get("schema"), entry.get("with_out", False))
    return render_op(entry["kind"], ctx, root)
