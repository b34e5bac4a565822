"""Porting an op with `opgen new --schema` leaves only the math to write: each port below changes a
handful of lines of what opgen wrote (counted as a diff), then builds and passes its own tests and
the whole conformance suite."""
import difflib

import pytest

from helpers import copy_project, opgen, run_project_tests

pytestmark = pytest.mark.slow

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
    run_project_tests(project, f"tests/test_{op}.py", "tests/test_opgen_conformance.py", env=env)
