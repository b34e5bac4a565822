"""The C++ glue of a declared op (registration, host code with its checks, device guard, stream and
allocation, the CPU loop and the CUDA launch), rendered from templates/<kind>*.j2 over the op's
functors in csrc/<op>/<op>.h."""

from __future__ import annotations

from pathlib import Path

from . import model
from .declaration import Declaration
from .errors import DeclarationError

TEMPLATES = Path(__file__).resolve().parent / "templates"
# torch.Tag names (declaration.tags()) as common/definitions.h spells them.
_CPP_TAGS = {
    "pt2_compliant_tag": "opgen::Tag::pt2_compliant",
    "nondeterministic_bitwise": "opgen::Tag::nondeterministic_bitwise",
    "cudagraph_unsafe": "opgen::Tag::cudagraph_unsafe",
}


def cpp_tags(names) -> str:
    """The initializer m.def() takes its tags in: "{opgen::Tag::pt2_compliant}"."""
    return "{" + ", ".join(_CPP_TAGS[name] for name in names) + "}"


def _environment():
    import jinja2  # a torch dependency; imported here so reading declarations needs only the stdlib

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(declaration: Declaration, package: str, namespace: str, aten: bool = False) -> dict[str, str]:
    """{file name: text}: for an elementwise or reduction op <op>.cpp (host code, CPU kernel,
    registration) and <op>_cuda.cu; <op>_registration.cpp for a custom op's schemas and host functions
    and for the variants any op declares. aten: the op's own sources use the full ATen API."""
    op, kind = declaration.op, declaration.kind
    context = {
        "op": op,
        "pkg": package,
        "ns": namespace,
        "tags": cpp_tags(declaration.tags),
        "m": model.build(
            op,
            kind,
            declaration.schema,
            declaration.with_out,
            declaration.broadcast,
            declaration.out_cols,
            declaration.grads,
            declaration.storage,
        ),
    }
    env = _environment()
    files = {}
    if kind != "custom":
        files[f"{op}.cpp"] = env.get_template(f"{kind}.cpp.j2").render(context)
        files[f"{op}_cuda.cu"] = env.get_template(f"{kind}_cuda.cu.j2").render(context)
    # The op's own schema (a custom op's) with its tags; variants untagged: the suite does not test them.
    registered = [(*variant, "{}") for variant in declaration.variants]
    if kind == "custom":
        registered.insert(0, (op, declaration.schema, declaration.kernels, context["tags"]))
    if registered:
        context.update(_registration(registered, declaration.where), aten=aten)
        files[f"{op}_registration.cpp"] = env.get_template("registration.cpp.j2").render(context)
    return files


def _registration(registered: list[tuple[str, str, dict, str]], where: str) -> dict:
    """What registration.cpp.j2 renders: each op's definition with its tags, its host functions'
    prototypes (from the schema) and, per dispatch key, which function serves which op."""
    definitions, prototypes, by_key = [], {}, {}
    for name, schema_text, kernels, tags in registered:
        m = model.build(name, "custom", schema_text)
        definitions.append((m.definition, tags))
        params = m.cpp_params()
        for key, function in kernels.items():
            by_key.setdefault(key, []).append((name, function))
            seen = prototypes.get(function)
            if seen is not None and seen["params"] != params:
                raise DeclarationError(
                    f"{where}: the host function {function} serves {seen['op']} and {name}, whose schemas take "
                    f"different arguments: give each its own function"
                )
            cuda = key == "CUDA" and (seen is None or seen["cuda"])
            prototypes[function] = {
                "name": function,
                "op": name,
                "params": params,
                "returns": m.return_type,
                "cuda": cuda,
            }
    return {
        "definitions": definitions,
        "prototypes": list(prototypes.values()),
        "by_key": by_key,
        "tuple_returns": any(p["returns"].startswith("std::tuple") for p in prototypes.values()),
    }


def write(declaration: Declaration, package: str, namespace: str, folder: Path, aten: bool = False) -> dict[str, Path]:
    """Render into `folder`, rewriting only the files whose text changed (ninja and make then rebuild
    nothing else); {file name: path}."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, text in render(declaration, package, namespace, aten).items():
        path = folder / name
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
        paths[name] = path
    return paths
