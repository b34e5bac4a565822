"""The Triton kind: `opgen new --kind triton` / `triton_rowwise` stamps an op whose math is @triton.jit
functions; the rest is derived from its declaration. Here, without a GPU: its CPU path (the reference)
passes the conformance suite, and so do its Triton kernels themselves under Triton's interpreter
(TRITON_INTERPRET=1 runs them on CPU tensors) where Triton is installed; the declaration's refusals;
the stored configs. The kernels run on CUDA in the GPU check (scripts/gpu_check.sh triton)."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import types

import pytest

from helpers import REPO, copy_project, opgen, run, run_project_tests

PACKAGE = "my_ops"
HAS_TRITON = importlib.util.find_spec("triton") is not None
# The interpreter is slow (numpy, one program at a time): the checks that cover the derived kernels'
# indexing, gradients, registration and threads, on the suite's shapes.
INTERPRETED = "(test_matches_reference and contiguous) or gradients_match or opcheck or threads or gradcheck or negated or tracer"


@pytest.fixture(scope="module")
def project(tmp_path_factory, template_repo):
    project = copy_project(template_repo, tmp_path_factory.mktemp("triton") / "my_ops")
    opgen(project, "new", "scaled_sigmoid", "--kind", "triton", "--schema",
          "(Tensor x, Tensor y, float alpha=0.5) -> Tensor")
    opgen(project, "new", "centered", "--kind", "triton_rowwise")
    return project


def test_opgen_new_writes_only_the_op_module_and_its_card(project):
    manifest = json.loads((project / ".opgen" / "manifest.json").read_text())["ops"]
    assert sorted(manifest["scaled_sigmoid"]["files"]) == ["docs/ops/scaled_sigmoid.md", f"{PACKAGE}/ops/scaled_sigmoid.py"]
    assert manifest["centered"]["kind"] == "triton_rowwise"
    text = (project / PACKAGE / "ops" / "scaled_sigmoid.py").read_text()
    assert "@triton.jit\ndef forward(x, y, alpha):" in text and "triton=(forward, backward)" in text
    assert not (project / "csrc" / "scaled_sigmoid").exists()
    assert "scaled_sigmoid\ttriton\n" in opgen(project, "list").stdout  # not "(csrc missing)"
    ejected = opgen(project, "eject", "scaled_sigmoid", check=False)
    assert ejected.returncode == 2 and "is a Triton op" in ejected.stderr


def test_without_triton_the_ops_import_and_their_cpu_path_passes(project, tmp_path):
    """CPU-only torch wheels come without Triton: the op modules still import (`_triton` stands in for
    it), and the CPU path (the reference, the same with Triton or without) passes the suite. No
    compiler is needed: a Triton op builds nothing."""
    blocked = tmp_path / "no_triton" / "triton"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text("raise ImportError('no Triton here (the test hides it)')\n")
    env = {"OPGEN_JIT": "scaled_sigmoid,centered", "OPGEN_CPU_ONLY": "1", "PYTHONPATH": str(blocked.parent)}
    code = f"import {PACKAGE}._triton as t\nassert not t.AVAILABLE\nprint(t.missing_triton('scaled_sigmoid'))\n"
    assert "written in Triton, which is not installed" in run([sys.executable, "-c", code], cwd=project, env=env).stdout
    # (Less the AOTInductor package: it compiles the same CPU path with Triton or without, 11 s here.)
    run_project_tests(project, "tests/test_opgen_conformance.py", "tests/test_opgen_package.py", "-k", "not aoti",
                      env=env)


@pytest.mark.skipif(not HAS_TRITON, reason="Triton is not installed (this torch has none): its interpreter cannot run")
def test_triton_kernels_pass_under_the_interpreter(project):
    env = {"OPGEN_JIT": "scaled_sigmoid,centered", "OPGEN_CPU_ONLY": "1", "TRITON_INTERPRET": "1"}
    output = run_project_tests(project, "tests/test_opgen_conformance.py", "-k", INTERPRETED, env=env)
    assert " passed" in output


SCALAR_CHECK = (
    "import importlib, torch\n"
    "m = importlib.import_module('my_ops.ops.scaled_sigmoid')\n"
    "x, y = torch.randn(3, 70), torch.randn(3, 70)\n"
    "for alpha in (0.5, 2.0, -3.25):  # the default, and others: each must reach the kernel\n"
    "    torch.testing.assert_close(m.scaled_sigmoid(x, y, alpha), m.reference(x, y, alpha))\n"
    "    torch.testing.assert_close(m.scaled_sigmoid(x, y, alpha=alpha), m.reference(x, y, alpha))\n"
    "print('ok')\n"
)


@pytest.mark.parametrize("interpret", ["0", "1"])
def test_every_scalar_value_reaches_the_math(project, interpret):
    """The suite passes each scalar's example value only (the default here): other values must reach
    the CPU path and the kernels too."""
    if interpret == "1" and not HAS_TRITON:
        pytest.skip("Triton is not installed (this torch has none): its interpreter cannot run")
    env = {"OPGEN_JIT": "scaled_sigmoid", "OPGEN_CPU_ONLY": "1", "TRITON_INTERPRET": interpret}
    assert run([sys.executable, "-c", SCALAR_CHECK], cwd=project, env=env).stdout.strip() == "ok"


@pytest.mark.skipif(not HAS_TRITON, reason="Triton is not installed (this torch has none): its interpreter cannot run")
def test_a_broken_kernel_fails_under_the_interpreter(project, tmp_path):
    """The interpreter runs the derived kernels, not the reference: a wrong math function fails."""
    broken = tmp_path / "broken"
    shutil.copytree(project, broken)
    module = broken / PACKAGE / "ops" / "scaled_sigmoid.py"
    text = module.read_text()
    assert "    return x * y * alpha\n" in text
    module.write_text(text.replace("    return x * y * alpha\n", "    return x * y * alpha * 1.001\n", 1))
    env = {**os.environ, "OPGEN_JIT": "scaled_sigmoid", "OPGEN_CPU_ONLY": "1", "TRITON_INTERPRET": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "tests/test_opgen_conformance.py",
         "-k", "scaled_sigmoid and test_matches_reference and contiguous"],
        check=False, cwd=broken, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 1 and "beyond the error allowed" in result.stdout, result.stdout[-2000:]


@pytest.mark.parametrize("declaration, error", [
    ('kind="reduction", term=lambda x: x, triton=(f, f)', "triton= is for the elementwise and rowwise kinds"),
    ('kind="rowwise", out_cols="d/2", reference=r, triton=(f, f)', 'writes rows of d (out_cols="d")'),
    ('kind="elementwise", reference=r, triton=f', "declare triton=(forward, backward)"),
])
def test_declarations_a_triton_op_cannot_have_are_refused(project, declaration, error):
    code = (
        f"import torch\nfrom {PACKAGE}._declare import declare\n"
        "def f(x):\n    return x\n"
        "def r(x):\n    return x\n"
        "try:\n"
        f"    declare('refused_op(Tensor x) -> Tensor', {declaration})\n"
        "except Exception as error:\n    print(error)\n"
    )
    env = {"OPGEN_JIT": "centered", "OPGEN_CPU_ONLY": "1"}
    assert error in run([sys.executable, "-c", code], cwd=project, env=env).stdout


def _runtime() -> types.ModuleType:
    """The template's _triton.py, loaded alone (it needs torch only)."""
    path = REPO / "template" / "{{package_name}}" / "_triton.py"
    spec = importlib.util.spec_from_file_location("opgen_triton_runtime", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stored_configs_are_found_by_kernel_size_class_and_dtype(tmp_path, monkeypatch):
    import torch

    runtime = _runtime()
    monkeypatch.setattr(runtime, "TUNED_DIR", tmp_path)
    monkeypatch.setattr(runtime, "INTERPRET", False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *args: "NVIDIA H100 80GB HBM3")
    picked = types.SimpleNamespace(kwargs={"BLOCK": 2048}, num_warps=8, num_stages=1)
    autotuner = types.SimpleNamespace(cache={(1 << 20, "torch.bfloat16", "torch.bfloat16"): picked})
    entries = runtime.autotuned("forward", autotuner, ["size_class"])
    assert entries == {"forward/1048576/bfloat16": {"kwargs": {"BLOCK": 2048}, "num_warps": 8, "num_stages": 1}}
    path = runtime.write_tuned("my_op", entries)
    assert json.loads(path.read_text()) == {"NVIDIA H100 80GB HBM3": entries}
    first = {"BLOCK": 1024, "num_warps": 4}
    assert runtime.stored_config("my_op", "forward", (1 << 20,), torch.bfloat16, first)["kwargs"] == {"BLOCK": 2048}
    assert runtime.stored_config("my_op", "forward", (1 << 20,), torch.float32, first) is None  # autotune it
    assert runtime.stored_config("my_op", "backward", (1 << 20,), torch.bfloat16, first) is None
    monkeypatch.setenv(runtime.RETUNE_ENV, "1")
    assert runtime.stored_config("my_op", "forward", (1 << 20,), torch.bfloat16, first) is None


def test_broadcast_rule_and_its_refusal_match_the_cpp_kinds():
    import torch

    runtime = _runtime()
    x = torch.empty(2, 3, 4, 5)
    assert runtime.broadcast_repeats(torch.empty(5), "bias", x, "x") == (1, 5)
    assert runtime.broadcast_repeats(torch.empty(3, 1, 1), "scale", x, "x") == (20, 3)
    with pytest.raises(RuntimeError, match=r"bias must broadcast over x along one block of its dimensions"):
        runtime.broadcast_repeats(torch.empty(3, 1, 5), "bias", x, "x")
