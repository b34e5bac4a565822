"""`opgen upgrade`: moves the element-wise and reduction ops an older `opgen new` stamped (own glue:
csrc/<op>/<op>.cpp, <op>_cuda.cu, a module with its fake kernel, autograd and SPEC = OpSpec(...)) to
the declaration layout, keeping the user's math: the header stays; the module keeps its docstring,
`reference()` (a reduction: `term()`), its own code, the imports those use, `__all__`, and SPEC's
input domains, scalar values and other fields, under a `SPEC = declare(...)` rendered from the op's
recorded schema. Files still as generated that the build now derives are deleted; edited ones stay
and keep working (an op's own csrc/<op>/<op>.cpp is built instead of the derived glue). What cannot be
carried over (a TensorArg shape, a name the declaration layout uses) stops the upgrade of that op,
naming the lines.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from . import formatting, manifest, render
from .errors import OpgenError
from .project import Project

# OpSpec fields the old templates wrote, which the declaration derives.
_DERIVED_FIELDS = {"name", "op", "function", "reference", "args", "kind", "differentiable", "large", "out", "shapes",
                   "error_bound", "atol_scale"}  # a reduction's atol_scale: its derived error_bound replaces it
# Top-level functions and assignments the old templates wrote into the module (besides the op's own
# function and its out= twin, and the fake kernels), which the declaration derives.
_STAMPED_FUNCTIONS = {"_setup_context", "_backward", "_reduced_shape", "error_bound"}
_STAMPED_ASSIGNMENTS = {"SPEC", "SPECS", "__all__"}


@dataclass
class Plan:
    op: str
    writes: dict[str, str] = field(default_factory=dict)
    removes: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # edited files the build keeps using
    problems: list[str] = field(default_factory=list)  # what the user must move by hand
    carries_user_code: set[str] = field(default_factory=set)  # rewritten files holding the user's code


def _segment(text: str, node: ast.AST) -> str:
    return ast.get_source_segment(text, node, padded=True) or ""


def _spec_call(tree: ast.Module) -> ast.Call | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in ("SPEC", "SPECS") for t in node.targets):
            value = node.value
            calls = value.elts if isinstance(value, ast.List) else [value]
            for call in calls:
                if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "OpSpec":
                    return call
    return None


def _args_of(call: ast.Call, where: str, problems: list[str]) -> tuple[dict, dict]:
    """(domain, example) from OpSpec(args={...}): TensorArg domains and the scalars' values."""
    domain, example = {}, {}
    args = next((k.value for k in call.keywords if k.arg == "args"), None)
    if not isinstance(args, ast.Dict):
        problems.append(f"{where}:{call.lineno}: SPEC's args is not a literal dict")
        return domain, example
    for key, value in zip(args.keys, args.values):
        name = ast.literal_eval(key)
        if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "TensorArg":
            for keyword in value.keywords:
                if keyword.arg == "domain":
                    domain[name] = ast.literal_eval(keyword.value)
                else:
                    problems.append(f"{where}:{value.lineno}: TensorArg({keyword.arg}=...) of {name!r}: declare() "
                                    "draws tensors of the case's shape and dtype")
        else:
            try:
                example[name] = ast.literal_eval(value)
            except ValueError:
                problems.append(f"{where}:{value.lineno}: the value of {name!r} is not a literal")
    return domain, example


def plan_op(project: Project, op: str, entry: dict) -> Plan:
    plan = Plan(op)
    kind = entry["kind"]
    module_path = f"{project.package}/ops/{op}.py"
    text = (project.root / module_path).read_text()
    tree = ast.parse(text)
    math_name = "term" if kind == "reduction" else "reference"
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    term_from_reference = kind == "reduction" and "term" not in functions and "reference" in functions
    if term_from_reference:
        # Before term() existed, reference() summed the terms itself: `return <terms>.sum(dim=..., keepdim=...)`.
        text, tree = _with_term_from_reference(text, tree, functions["reference"], op)
        functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    if math_name not in functions:
        plan.problems.append(f"{module_path}: no {math_name}() to carry over")
        return plan
    call = _spec_call(tree)
    if call is None:
        plan.problems.append(f"{module_path}: no SPEC = OpSpec(...) to read the input domains from")
        return plan
    domain, example = _args_of(call, module_path, plan.problems)
    # Other OpSpec fields (tolerances, an error bound, first_order_only=False, ...) go to declare() as written.
    extra = {k.arg: _segment(text, k.value) for k in call.keywords if k.arg not in _DERIVED_FIELDS}
    if kind == "reduction" and not term_from_reference:
        reference = functions.get("reference")
        returned = reference.body[-1] if reference else None
        if not (isinstance(returned, ast.Return) and "term(" in _segment(text, returned) and ".sum(" in _segment(text, returned)):
            plan.problems.append(f"{module_path}:{reference.lineno if reference else 1}: reference() is not term() "
                                 "summed, which a declared reduction derives: move the difference into term()")
    ns = project.namespace
    own = [n for n in tree.body if not _is_stamped(n, op, ns) and not isinstance(n, (ast.Import, ast.ImportFrom))
           and not (isinstance(n, ast.FunctionDef) and n.name in ("reference", "term"))
           and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]  # the docstring
    for node in own:
        name = _defined_name(node)
        if name in {"declare", "SPEC"}:
            plan.problems.append(f"{module_path}:{node.lineno}: {name} is a name the declaration layout uses: rename it")
    if plan.problems:
        return plan

    ctx = render.context(op, project.package, project.namespace, kind, entry.get("schema"),
                         entry.get("with_out", False), project.root)
    fresh = render.render_op(kind, ctx, project.root)
    carried = _carried_module(fresh[module_path], text, tree, functions[math_name], domain, example, own, extra)
    plan.writes[module_path] = formatting.format_files(project.root, {module_path: carried})[module_path]
    plan.carries_user_code.add(module_path)
    card = f"docs/ops/{op}.md"
    for path, digest in entry["files"].items():
        current = project.root / path
        if path == module_path or not current.is_file():
            continue
        unedited = manifest.digest(current.read_bytes()) == digest
        if path in fresh:  # the header (kept: the user's math) and the card
            if path == card and unedited:
                plan.writes[path] = fresh[path]
            continue
        if unedited:
            plan.removes.append(path)  # derived now: the glue, the standard tests, the benchmark
        else:
            plan.kept.append(path)
    glue = [f"csrc/{op}/{op}.cpp", f"csrc/{op}/{op}_cuda.cu"]
    if any(path in plan.kept for path in glue):  # edited glue: the op keeps all of it (the .cpp calls the .cu)
        for path in glue:
            if path in plan.removes:
                plan.removes.remove(path)
                plan.kept.append(path)
    return plan


def _with_term_from_reference(text: str, tree: ast.Module, reference: ast.FunctionDef, op: str):
    """The module with a term() made from reference()'s summed expression, if it has that form."""
    returned = reference.body[-1]
    call = returned.value if isinstance(returned, ast.Return) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "sum"):
        return text, tree
    terms = ast.get_source_segment(text, call.func.value)
    if terms.startswith("(") and terms.endswith(")"):
        terms = terms[1:-1]
    x = reference.args.args[0].arg
    term = (f"\n\ndef term({x}: Tensor) -> Tensor:\n    \"\"\"What {op} sums, element by element, in plain PyTorch.\"\"\"\n"
            f"    return {terms}\n")
    lines = text.splitlines(keepends=True)
    text = "".join(lines[: reference.end_lineno]) + term + "".join(lines[reference.end_lineno:])
    return text, ast.parse(text)


def _is_stamped(node: ast.AST, op: str, ns: str) -> bool:
    """What the old templates wrote into the module and the declaration now derives: the op's (and its
    out= twin's) function, fake kernels, autograd and SPEC."""
    ours = {f"{ns}::{op}", f"{ns}::{op}_backward", f"{ns}::{op}_out"}
    if isinstance(node, ast.FunctionDef):
        for decorator in node.decorator_list:
            if isinstance(decorator, ast.Call) and decorator.args and isinstance(decorator.args[0], ast.Constant):
                return decorator.args[0].value in ours
        return node.name in {op, f"{op}_out", *_STAMPED_FUNCTIONS}
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        func = getattr(call.func, "attr", getattr(call.func, "id", ""))
        target = call.args[0].value if call.args and isinstance(call.args[0], ast.Constant) else None
        return (func == "register_autograd" and target == f"{ns}::{op}") or (
            func == "first_order_only" and target == f"{ns}::{op}_backward")
    return isinstance(node, ast.Assign) and _defined_name(node) in _STAMPED_ASSIGNMENTS


def _defined_name(node: ast.AST) -> str:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return node.name
    target = node.targets[0] if isinstance(node, ast.Assign) else None
    return target.id if isinstance(target, ast.Name) else "?"


def _carried_module(fresh: str, old: str, tree: ast.Module, math: ast.FunctionDef, domain: dict, example: dict,
                    own: list[ast.AST], extra: dict[str, str]) -> str:
    """The freshly rendered declaration module with the old one's docstring, math function, the
    module's own code (its functions before the declaration, the rest after it), the imports those
    use, SPEC's domains, scalar values and other fields."""
    old_lines = old.splitlines(keepends=True)

    def whole(node: ast.AST) -> str:  # the node's lines: the comments above it, decorators, trailing comments
        first = (node.decorator_list[0].lineno if getattr(node, "decorator_list", None) else node.lineno) - 1
        while first > 0 and old_lines[first - 1].lstrip().startswith("#"):
            first -= 1
        return "".join(old_lines[first : node.end_lineno])

    fresh_tree = ast.parse(fresh)
    fresh_math = next(n for n in fresh_tree.body if isinstance(n, ast.FunctionDef) and n.name == math.name)
    lines = fresh.splitlines(keepends=True)
    before = [whole(n) for n in own if isinstance(n, ast.FunctionDef)]
    after = [whole(n) for n in own if not isinstance(n, ast.FunctionDef)]
    math_and_helpers = "\n\n".join([whole(math), *before])
    text = "".join(lines[: fresh_math.lineno - 1]) + math_and_helpers + "".join(lines[fresh_math.end_lineno :])
    if after:
        text = text.rstrip("\n") + "\n\n\n" + "\n\n".join(after)
    carried_nodes = [math, *own]
    used = {n.id for node in carried_nodes for n in ast.walk(node) if isinstance(n, ast.Name)}
    present = {alias.asname or alias.name.split(".")[0] for n in fresh_tree.body
               if isinstance(n, (ast.Import, ast.ImportFrom)) for alias in n.names}
    carried = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and not (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            names = [a for a in node.names if (a.asname or a.name.split(".")[0]) in used - present]
            if names:
                carried.append(ast.unparse(type(node)(**{**node.__dict__, "names": names})))
    if carried:
        anchor = "from .._declare import declare\n"
        text = text.replace(anchor, "\n".join(sorted(carried)) + "\n" + anchor, 1)
    docstring = ast.get_docstring(tree, clean=False)
    if docstring:
        fresh_doc = fresh_tree.body[0]
        doc_lines = text.splitlines(keepends=True)
        text = f'"""{docstring}\n\n{_derived_note(ast.get_docstring(fresh_tree))}"""\n' + "".join(doc_lines[fresh_doc.end_lineno:])
    for name, value in domain.items():
        text = text.replace(f'"{name}": (-4.0, 4.0)', f'"{name}": {value!r}').replace(f'"{name}": (-1.0, 1.0)', f'"{name}": {value!r}')
    if example:
        fresh_example = ast.literal_eval(next(
            k.value for n in ast.walk(fresh_tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "declare"
            for k in n.keywords if k.arg == "example")) if "example=" in fresh else {}
        if fresh_example:
            text = text.replace(f"example={fresh_example!r}".replace("'", '"'), f"example={example!r}".replace("'", '"'))
    old_all = next((n.value for n in tree.body if isinstance(n, ast.Assign) and _defined_name(n) == "__all__"), None)
    if isinstance(old_all, ast.List) and "\n__all__ = " in text:  # what the module exported, its own names too
        start = text.index("\n__all__ = ") + 1
        text = text[:start] + f"__all__ = {ast.unparse(old_all)}" + text[text.index("\n", start):]
    if extra:
        fields = "".join(f"    {name}={source},\n" for name, source in extra.items())
        text = text.replace("\n)\n", "\n" + fields + ")\n", 1) if "\n)\n" in text else text
    return text


def _derived_note(fresh_docstring: str) -> str:
    """The fresh docstring's second paragraph: where the math is, what is derived."""
    return fresh_docstring.split("\n\n", 1)[1].rstrip() + "\n" if "\n\n" in fresh_docstring else ""


def needs_upgrade(project: Project, op: str, entry: dict) -> bool:
    module = project.root / project.package / "ops" / f"{op}.py"
    return (entry.get("kind") in ("elementwise", "reduction") and module.is_file()
            and (project.root / "csrc" / op / f"{op}.cpp").is_file() and "declare(" not in module.read_text())


def plans(project: Project, ops: list[str] | None = None) -> list[Plan]:
    recorded = manifest.load(project.root)["ops"]
    unknown = sorted(set(ops or []) - set(recorded))
    if unknown:
        raise OpgenError(f"not recorded in {manifest.PATH}: {', '.join(unknown)} (opgen upgrades the ops it wrote)")
    return [plan_op(project, op, entry) for op, entry in sorted(recorded.items())
            if (not ops or op in ops) and needs_upgrade(project, op, entry)]
