"""A second real package ported, of another family: kernels-community's `rmsnorm` (an RMSNorm layer
with its backward; tests/rmsnorm_port.py) is `opgen new` plus its math and declaration. The ported
project passes the conformance suite and the package's own tests, unedited (they run on CPU)."""
import pytest

import rmsnorm_port
from helpers import NOT_AOTI, copy_project, opgen, run_project_tests


@pytest.mark.slow
def test_kernels_community_rmsnorm_is_its_math_and_declaration(tmp_path, template_repo):
    project = copy_project(template_repo, tmp_path / "rmsnorm", project_name=rmsnorm_port.PACKAGE)
    for args in rmsnorm_port.opgen_commands():
        opgen(project, "new", *args)
    counts = rmsnorm_port.apply(project)
    layers = counts.pop(f"{rmsnorm_port.PACKAGE}/layers.py")
    print(f"rmsnorm port: {sum(counts.values())} lines of math and declaration changed after opgen new, "
          f"plus {layers} lines of layers.py")
    assert sum(counts.values()) <= 40, counts
    env = {"OPGEN_JIT": rmsnorm_port.OP, "TORCH_EXTENSIONS_DIR": str(tmp_path / "ext"), "MAX_JOBS": "2",
           "OPGEN_CPU_ONLY": "1"}  # the activation port compiles the row-wise kernel's .cu here
    run_project_tests(project, "tests/kernels_community_rmsnorm", "tests/test_opgen_conformance.py", *NOT_AOTI, env=env)
