"""Renders an op kind's Jinja templates (templates/<kind>/, paths templated too) in memory."""
from __future__ import annotations

from pathlib import Path, PurePosixPath

import jinja2

from . import derivation, formatting
from .errors import OpgenError

TEMPLATES = Path(__file__).resolve().parent / "templates"
SUFFIX = ".jinja"


# `opgen new --kind` names whose declaration is another kind's with its math in Triton.
MODEL_KINDS = {"triton": "elementwise", "triton_rowwise": "rowwise"}


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


# The declaration API these templates write (`declare(...)` in the op module); a project's
# <package>/_opgen/__init__.py says which one its build reads.
DECLARATION_API = 2


def project_derivation(project_root: Path | None, package: str):
    """The op model of the project at `project_root` (its <package>/_opgen), or the template's without one."""
    if project_root is None:
        return derivation.load()
    folder = project_root / package / "_opgen"
    if not (folder / "model.py").is_file():
        raise OpgenError(f"{project_root} predates op declarations ({package}/_opgen is missing): update it first "
                         "with `copier update --trust` (CHANGELOG.md says what else to run)")
    found = derivation.load(folder)
    api = getattr(found, "DECLARATION_API", None)
    if api != DECLARATION_API:
        raise OpgenError(f"{project_root}'s template reads declaration API {api}, this opgen writes {DECLARATION_API}: "
                         "install the opgen of the project's template version (README: \"Adding ops\") or "
                         "`copier update --trust` the project")
    return found


def context(op: str, package: str, namespace: str, kind: str, schema: str | None = None,
            with_out: bool = False, project_root: Path | None = None, summary: str = "") -> dict:
    """What the templates see: names, and `m`, the op model built from the schema by the project's
    own derivation code (<package>/_opgen/model.py)."""
    model = project_derivation(project_root, package).model
    try:
        m = model.build(op, MODEL_KINDS.get(kind, kind), schema, with_out)
    except Exception as error:
        if getattr(error, "user_facing", False):
            raise OpgenError(str(error)) from error
        raise
    return {
        "op": op,
        "Op": "".join(part.capitalize() for part in op.split("_")),
        "pkg": package,
        "ns": namespace,
        "kind": kind,
        "m": m,
        "summary": summary,  # the op in a sentence (its module's docstring), for its doc card
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
    ctx = context(op, package, namespace, entry["kind"], entry.get("schema"), entry.get("with_out", False), root)
    return render_op(entry["kind"], ctx, root)
