"""Porting an op with `opgen new --schema` leaves only the math to write: each port below changes a
handful of lines of what opgen wrote (counted as a diff), then builds and passes its own tests and
the whole conformance suite."""
import difflib

import pytest

from helpers import NOT_AOTI, copy_project, opgen, run_project_tests


# op -> (opgen new arguments, {file: [(generated text, the user's text), ...]})
PORTS = {
    "vector_add": (["--schema", "(Tensor a, Tensor b) -> Tensor", "--with-out"], {
        "csrc/vector_add/vector_add.h": [("return a * b;", "return a + b;"),
                                         ("return {grad * b, grad * a};", "return {grad, grad};")],
        "my_ops/ops/vector_add.py": [("    return a * b\n", "    return a + b\n")],
    }),
    "axpby_mul": (["--schema", "(Tensor x, Tensor y, Tensor z, float alpha=2.0) -> Tensor"], {
        "csrc/axpby_mul/axpby_mul.h": [
            ("return x * y * z * alpha;", "return (alpha * x + y) * z;"),
            ("return {grad * y * z * alpha, grad * x * z * alpha, grad * x * y * alpha};",
             "return {grad * alpha * z, grad * z, grad * (alpha * x + y)};")],
        "my_ops/ops/axpby_mul.py": [("    return x * y * z * alpha\n", "    return (alpha * x + y) * z\n")],
    }),
}


def changed_lines(before: str, after: str) -> int:
    return sum(1 for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
               if line.startswith(("+", "-")) and not line.startswith(("+++", "---")))


@pytest.mark.slow
@pytest.mark.parametrize("op", sorted(PORTS))
def test_a_port_is_the_math_only(op, tmp_path, template_repo):
    project = copy_project(template_repo, tmp_path / "my_ops")
    args, edits = PORTS[op]
    opgen(project, "new", op, *args)
    total = 0
    for path, replacements in edits.items():
        file = project / path
        before = text = file.read_text()
        for generated, mine in replacements:
            assert generated in text, f"{path} no longer contains {generated!r}"
            text = text.replace(generated, mine)
        file.write_text(text)
        total += changed_lines(before, text)
    print(f"{op}: {total} lines changed after opgen new {' '.join(args)}")
    assert total <= 10
    env = {"OPGEN_JIT": op, "OPGEN_CPU_ONLY": "1", "TORCH_EXTENSIONS_DIR": str(tmp_path / "ext"), "MAX_JOBS": "2"}
    run_project_tests(project, "tests/test_opgen_conformance.py", *NOT_AOTI, env=env)


# What the user owns after `opgen new`: every file it writes without an @generated mark in its first lines.
OWNED_LINES = {
    ("--schema", "(Tensor a, Tensor b, float alpha) -> Tensor"): 40,
    ("--kind", "reduction", "--schema", "(Tensor x, int dim=-1, bool keepdim=False) -> Tensor"): 60,
}


def owned_lines(project, paths) -> dict[str, int]:
    counts = {}
    for path in paths:
        text = (project / path).read_text()
        if "@generated" not in "\n".join(text.splitlines()[:3]):
            counts[path] = sum(1 for line in text.splitlines() if line.strip())
    return counts


@pytest.mark.parametrize("args", sorted(OWNED_LINES), ids=lambda args: args[-1])
def test_the_user_owns_only_the_math(args, tmp_path, template_repo):
    """The op's glue is derived from its declaration at build time: what opgen new leaves to the user
    (the math, the reference, the declaration itself) stays within the budget."""
    project = copy_project(template_repo, tmp_path / "my_ops")
    written = opgen(project, "new", "foo", *args).stdout
    paths = [line.split()[1] for line in written.splitlines() if line.startswith("wrote ")]
    counts = owned_lines(project, paths)
    print(f"opgen new foo {' '.join(args)}: {sum(counts.values())} owned lines: {counts}")
    assert set(counts) == {"csrc/foo/foo.h", "my_ops/ops/foo.py"}
    assert sum(counts.values()) <= OWNED_LINES[args]


@pytest.mark.slow
def test_a_compile_error_in_the_math_points_at_the_users_line(tmp_path, template_repo):
    """The derived glue includes the op's header: the compiler names the user's file and line."""
    import subprocess
    import sys

    project = copy_project(template_repo, tmp_path / "my_ops")
    opgen(project, "new", "broken")
    header = project / "csrc/broken/broken.h"
    lines = header.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "return x / (T(1) + std::exp(-x));" in text)
    lines[line - 1] = lines[line - 1].replace("std::exp(-x)", "std::exp(-x, no_such_name)")
    header.write_text("\n".join(lines) + "\n")
    env = {"OPGEN_JIT": "broken", "OPGEN_CPU_ONLY": "1", "TORCH_EXTENSIONS_DIR": str(tmp_path / "ext"), "MAX_JOBS": "2"}
    result = subprocess.run([sys.executable, "-c", "import my_ops"], cwd=project, capture_output=True, text=True,
                            env={**__import__("os").environ, **env})
    assert result.returncode != 0
    assert f"csrc/broken/broken.h:{line}:" in result.stdout + result.stderr, (result.stdout + result.stderr)[-3000:]
