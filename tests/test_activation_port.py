"""A real package ported: kernels-community's `activation` (11 ops, 5 of them gated row-wise ones)
is `opgen new` plus its math and declarations (tests/activation_port.py), under 150 changed lines;
with an RMSNorm beside it (a row-wise op with a gradient and a broadcast weight), the ported project
passes the conformance suite, and, where a GPU is, the package's own tests."""
import pytest
import torch

import activation_port
from helpers import NOT_AOTI, copy_project, opgen, run_project_tests


@pytest.mark.slow
def test_kernels_community_activation_is_its_math_and_declarations(tmp_path, template_repo):
    project = copy_project(template_repo, tmp_path / "my_ops")
    for args in activation_port.opgen_commands():
        opgen(project, "new", *args)
    counts = activation_port.apply(project)
    layers = counts.pop("my_ops/layers.py")
    rms_norm = counts.pop("csrc/rms_norm/rms_norm.h") + counts.pop("my_ops/ops/rms_norm.py")
    print(f"activation port: {sum(counts.values())} lines of math and declarations changed after opgen new "
          f"in {len(counts)} files, plus {layers} lines of layers.py; rms_norm: {rms_norm}")
    assert sum(counts.values()) <= 150, counts
    ops = ",".join(args[0] for args in activation_port.opgen_commands())
    # CPU only unless a GPU can run its kernels: examples/ compiles the row-wise and element-wise .cu
    # (test_examples.py), and the GPU check runs this port's CUDA build.
    env = {"OPGEN_JIT": ops, "TORCH_EXTENSIONS_DIR": str(tmp_path / "ext"), "MAX_JOBS": "2"}
    if not torch.cuda.is_available():
        env["OPGEN_CPU_ONLY"] = "1"
    run_project_tests(project, "tests/test_opgen_conformance.py", "tests/test_opgen_hygiene.py",
                      "tests/test_opgen_package.py", *NOT_AOTI, env=env)
    if torch.cuda.is_available():  # the package's own tests are CUDA only
        run_project_tests(project, "tests/kernels_community_activation", env=env)
