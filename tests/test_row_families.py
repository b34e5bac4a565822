"""The families the row-wise kind is for (tests/row_families.py): LayerNorm with a broadcast weight
and bias and its backward, softmax, log-softmax and a rotary pair rotation, each written as its
functors and reference alone, pass the conformance suite (values, gradients, strided and misaligned
rows, rows of 1, odd and > 64K elements, torch.compile, opcheck), the softmax family matches torch at
masked (-inf) and large logits, and LayerNorm stays within 4x torch's error (plus the mean's float32
rounding) on rows far from zero."""
import pytest

import row_families
from helpers import NOT_AOTI, copy_project, opgen, run_project_tests


@pytest.mark.slow
def test_row_wise_families_are_their_math(tmp_path, template_repo):
    project = copy_project(template_repo, tmp_path / "families")
    for args in row_families.opgen_commands():
        opgen(project, "new", *args)
    row_families.apply(project)
    env = {"OPGEN_JIT": ",".join(row_families.FAMILIES), "TORCH_EXTENSIONS_DIR": str(tmp_path / "ext"),
           "MAX_JOBS": "2", "OPGEN_CPU_ONLY": "1"}  # the activation port compiles the row-wise kernel's .cu here
    run_project_tests(project, "tests/test_opgen_conformance.py", "tests/test_softmax_edges.py",
                      "tests/test_layer_norm_offsets.py", "tests/test_opgen_hygiene.py", *NOT_AOTI, env=env)
