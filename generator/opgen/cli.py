"""opgen command line: new, list, remove, bench."""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from . import __version__, manifest, render
from .errors import OpgenError
from .names import validate_op_name
from .project import Project, find_project
from .writer import Transaction, remove_empty_dirs


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, not the usage block
        raise OpgenError(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="opgen", description="Scaffold PyTorch custom CPU/CUDA operators in an opgen project.")
    parser.add_argument("--version", action="version", version=f"opgen {__version__}")
    parser.add_argument("-C", dest="directory", type=Path, default=Path.cwd(), help="run as if started in this folder")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    new = commands.add_parser("new", help="write the kernel, bindings, wrapper, spec, test and benchmark of a new op")
    new.add_argument("name", help="op name: lowercase identifier, e.g. gelu_approx")
    new.add_argument("--kind", default="elementwise", choices=render.kinds(), help=(
        "elementwise: same-shape float tensors (plus int/float/bool scalars) in, one tensor out, through the "
        "vectorized map, with autograd; reduction: a sum over the last dim with its backward; rowwise: math over "
        "one row of the last dim at a time (norms, softmax, gated activations); triton, triton_rowwise: the "
        "elementwise and rowwise kinds with their math in Triton (@triton.jit functions, no C++); blank: any schema, "
        "your own host code and a copy kernel to fill in (default: elementwise)"))
    new.add_argument("--schema", help=(
        "the op's signature in torch schema syntax, e.g. \"(Tensor a, Tensor b, float alpha=1.0) -> Tensor\" or, "
        "writing into an output, \"(Tensor a, Tensor b, Tensor(a!) out) -> ()\" (default: \"(Tensor x) -> Tensor\")"))
    new.add_argument("--with-out", action="store_true",
                     help="elementwise: also write <name>_out(..., *, Tensor(a!) out), the functional op's out= twin")
    new.add_argument("--force", action="store_true", help="overwrite files that already exist")
    new.add_argument("--dry-run", action="store_true", help="print what would be written, write nothing")

    commands.add_parser("list", help="list the project's ops")

    remove = commands.add_parser("remove", help="delete the files `opgen new` wrote for an op")
    remove.add_argument("name", help="the op to remove (as `opgen list` shows it)")
    remove.add_argument("--force", action="store_true", help="also delete files edited since they were generated")

    upgrade = commands.add_parser("upgrade", help=(
        "after `copier update`: move the element-wise and reduction ops an older opgen wrote to the declaration "
        "layout, keeping their math (CHANGELOG.md)"))
    upgrade.add_argument("ops", nargs="*", help="the ops to upgrade (default: all that need it)")
    upgrade.add_argument("--dry-run", action="store_true", help="print what would change, change nothing")

    eject = commands.add_parser("eject", help=(
        "write a declared op's derived C++ glue into csrc/<op>/ as yours (for hand-tuning): the build then uses "
        "it instead of deriving it"))
    eject.add_argument("name", help="the declared op")

    docs = commands.add_parser("docs", help="(re)write the ops' doc cards, docs/ops/<op>.md, from their schemas")
    docs.add_argument("ops", nargs="*", help="the ops (default: all)")
    docs.add_argument("--force", action="store_true", help="also replace cards that are not @generated")

    bench = commands.add_parser("bench", help="run the benchmarks (python -m benchmarks) and write the report")
    bench.add_argument("ops", nargs="*", help="ops to benchmark (default: all)")
    return parser


def cmd_new(project: Project, name: str, kind: str, force: bool, dry_run: bool, schema: str | None = None,
            with_out: bool = False) -> int:
    validate_op_name(name, project.package, project.namespace)
    if with_out:
        validate_op_name(f"{name}_out", project.package, project.namespace)
    recorded = manifest.load(project.root)
    if not force and (name in project.existing_ops() or name in recorded["ops"]):
        raise OpgenError(f"op {name!r} already exists in {project.root}: pick another name, or pass --force to overwrite it")
    ctx = render.context(name, project.package, project.namespace, kind, schema, with_out, project.root)
    files = render.render_op(kind, ctx, project.root)
    clashes = [path for path in files if (project.root / path).exists()]
    if clashes and not force:
        raise OpgenError(f"would overwrite {', '.join(clashes)}: pass --force to overwrite")
    if dry_run:
        for path in files:
            print(f"would write {path}")
        return 0
    recorded["ops"][name] = {"kind": kind, "files": {path: manifest.digest(text) for path, text in files.items()}}
    if schema:
        recorded["ops"][name]["schema"] = schema
    if with_out:
        recorded["ops"][name]["with_out"] = True
    transaction = Transaction(project.root)
    for path, text in files.items():
        transaction.write(path, text)
    transaction.write(str(manifest.PATH), manifest.dumps(recorded))
    transaction.commit()
    for path in files:
        print(f"wrote {path}{' (overwritten)' if path in clashes else ''}")
    functors = "Forward, Backward" if ctx["m"].differentiable else "Forward"  # an out= op has no autograd
    module = f"{project.package}/ops/{name}.py"
    if kind in render.MODEL_KINDS:
        print(f"\nNext: write the math in {module} (the @triton.jit functions {functors.lower()}) "
              "and reference();")
        print("  the rest (kernels, launchers, autotuning, CPU path, autograd, tests, benchmark) is derived from its "
              "declaration on import")
        tests = f"tests/test_opgen_conformance.py -k {name}"
    elif kind == "blank":
        print(f"\nNext: write the kernels in csrc/{name}/{name}.cpp (CPU) and csrc/{name}/{name}_cuda.cu (CUDA)")
        print(f"  and the plain-PyTorch reference() in {module} (SPEC says what the tests draw)")
        tests = f"tests/test_{name}.py tests/test_opgen_conformance.py -k {name}"
    else:
        what = {"reduction": "Term, TermGrad", "rowwise": f"the row functors {functors}"}.get(kind, functors)
        header = f"csrc/{name}/{name}.h ({what})"
        python_math = "term()" if kind == "reduction" else "reference()"
        print(f"\nNext: write the math in {header} and {python_math} in {module};")
        print("  the rest (registration, host code, launches, Python function, autograd, tests, benchmark) is derived "
              f"from the declaration in {module} on every build")
        tests = f"tests/test_opgen_conformance.py -k {name}"
    print(f"Build and test: pip install --no-build-isolation -e . && python -m pytest {tests}")
    print(f"  (or, without reinstalling: OPGEN_JIT={name} python -m pytest {tests})")
    return 0


def cmd_list(project: Project) -> int:
    recorded = manifest.load(project.root)["ops"]
    for op in sorted(set(project.existing_ops()) | set(recorded)):
        kind = recorded.get(op, {}).get("kind", "hand-written")
        state = "" if op in project.existing_ops() else "  (csrc missing)"
        print(f"{op}\t{kind}{state}")
    return 0


def cmd_remove(project: Project, name: str, force: bool) -> int:
    recorded = manifest.load(project.root)
    entry = recorded["ops"].get(name)
    if entry is None:
        hint = " (not written by opgen, so opgen leaves it alone)" if name in project.existing_ops() else ""
        raise OpgenError(f"no op {name!r} recorded in {manifest.PATH}{hint}")
    users = project.users_of(name)
    if users:
        raise OpgenError(f"{name!r} is used by {', '.join(users)}: remove or change {'them' if len(users) > 1 else 'it'} "
                         "first")
    present = [path for path in entry["files"] if (project.root / path).is_file()]
    edited = [p for p in present if manifest.digest((project.root / p).read_bytes()) != entry["files"][p]]
    if edited and not force:
        raise OpgenError(f"edited since generated: {', '.join(edited)}; pass --force to delete them too")
    del recorded["ops"][name]
    transaction = Transaction(project.root)
    for path in present:
        transaction.remove(path)
    transaction.write(str(manifest.PATH), manifest.dumps(recorded))
    transaction.commit()
    remove_empty_dirs(project.root, [(project.root / p).parent for p in present])
    for path in present:
        print(f"removed {path}")
    left = project.root / "csrc" / name
    if left.is_dir():
        print(f"kept {left.relative_to(project.root)}/: it holds files opgen did not write")
    return 0


def cmd_upgrade(project: Project, ops: list[str], dry_run: bool) -> int:
    from . import upgrade

    recorded = manifest.load(project.root)
    transaction = Transaction(project.root)
    stopped = 0
    todo = upgrade.plans(project, ops)
    for plan in todo:
        if plan.problems:
            stopped += 1
            print(f"{plan.op}: not upgraded; move these by hand, then run `opgen upgrade {plan.op}` again:")
            for problem in plan.problems:
                print(f"  {problem}")
            continue
        entry = recorded["ops"][plan.op]
        for path, text in plan.writes.items():
            print(f"{plan.op}: {'would rewrite' if dry_run else 'rewrote'} {path}")
            transaction.write(path, text)
            if path not in plan.carries_user_code:  # that one stays "edited": `opgen remove` keeps it without --force
                entry["files"][path] = manifest.digest(text)
        for path in plan.removes:
            print(f"{plan.op}: {'would delete' if dry_run else 'deleted'} {path} (derived from the declaration now)")
            transaction.remove(path)
            entry["files"].pop(path)
        for path in plan.kept:
            print(f"{plan.op}: kept {path} (edited since generated; the build keeps using it)")
    if not todo:
        print("nothing to upgrade: every recorded element-wise and reduction op is declared")
    if not dry_run:
        transaction.write(str(manifest.PATH), manifest.dumps(recorded))
        transaction.commit()
        remove_empty_dirs(project.root, [(project.root / p).parent for plan in todo for p in plan.removes])
    return 1 if stopped else 0


def cmd_eject(project: Project, name: str) -> int:
    declared = project.declared_ops()
    if name not in declared:
        raise OpgenError(f"{name!r} is not a declared op (its glue is its own already, or it does not exist)")
    if getattr(declared[name], "triton", False):
        raise OpgenError(f"{name!r} is a Triton op: its kernels are derived in Python from its declaration in "
                         f"{project.package}/ops/{name}.py, and there is no C++ glue to eject")
    if declared[name].kind == "custom":
        raise OpgenError(f"{name!r} is a custom op: its host code is yours already, and its registration is "
                         f"its declaration in {project.package}/ops/{name}.py")
    build = project.build_config()
    folder = project.root / "csrc" / name
    derived = build.derivation().cpp.render(declared[name], project.package, project.namespace)
    derived.pop(f"{name}_registration.cpp", None)  # its variants' registration stays derived
    clashes = [f"csrc/{name}/{file}" for file in derived if (folder / file).exists()]
    if clashes:
        raise OpgenError(f"{', '.join(clashes)} already exist(s): the op owns its glue already")
    version = getattr(build.derivation(), "TEMPLATE_VERSION", "?")
    transaction = Transaction(project.root)
    for file, text in derived.items():
        mine = text.replace("// @generated by", f"// Ejected (template {version}): yours now; first written", 1)
        transaction.write(f"csrc/{name}/{file}", mine)
        print(f"wrote csrc/{name}/{file}")
    transaction.commit()
    print(f"The build now compiles these instead of deriving {name}'s glue; the Python glue stays derived "
          f"from the declaration in {project.package}/ops/{name}.py. Delete them to go back.")
    return 0


def cmd_bench(project: Project, ops: list[str]) -> int:
    return subprocess.call([sys.executable, "-m", "benchmarks", *ops], cwd=project.root)


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        project = find_project(args.directory)
        if args.command == "new":
            return cmd_new(project, args.name, args.kind, args.force, args.dry_run, args.schema, args.with_out)
        if args.command == "list":
            return cmd_list(project)
        if args.command == "remove":
            return cmd_remove(project, args.name, args.force)
        if args.command == "upgrade":
            return cmd_upgrade(project, args.ops, args.dry_run)
        if args.command == "eject":
            return cmd_eject(project, args.name)
        if args.command == "docs":
            from . import cards

            for path in cards.write(project, args.ops, args.force):
                print(f"wrote {path}")
            return 0
        return cmd_bench(project, args.ops)
    except Exception as error:
        if not isinstance(error, OpgenError) and not getattr(error, "user_facing", False):
            raise
        print(f"opgen: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("opgen: interrupted; nothing was written", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
