"""The C++ glue of a declared op (registration, host code with its checks, device guard, stream and
allocation, the CPU loop and the CUDA launch), rendered from templates/<kind>*.j2 over the op's
functors in csrc/<op>/<op>.h."""

from __future__ import annotations

from pathlib import Path

from . import model
from .declaration import Declaration

TEMPLATES = Path(__file__).resolve().parent / "templates"


def _environment():
    import jinja2  # a torch dependency; imported here so reading declarations needs only the stdlib

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(declaration: Declaration, package: str, namespace: str) -> dict[str, str]:
    """{file name: text}: <op>.cpp (host code, CPU kernel, registration) and <op>_cuda.cu."""
    op, kind = declaration.op, declaration.kind
    context = {
        "op": op,
        "pkg": package,
        "ns": namespace,
        "m": model.build(op, kind, declaration.schema, declaration.with_out),
    }
    env = _environment()
    return {
        f"{op}.cpp": env.get_template(f"{kind}.cpp.j2").render(context),
        f"{op}_cuda.cu": env.get_template(f"{kind}_cuda.cu.j2").render(context),
    }


def write(declaration: Declaration, package: str, namespace: str, folder: Path) -> dict[str, Path]:
    """Render into `folder`, rewriting only the files whose text changed (ninja and make then rebuild
    nothing else); {file name: path}."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, text in render(declaration, package, namespace).items():
        path = folder / name
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
        paths[name] = path
    return paths
