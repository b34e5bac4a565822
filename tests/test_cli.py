"""opgen new / list / remove on a generated project (no compilation here)."""
import subprocess
import sys

import pytest

from helpers import opgen, snapshot

KIND_FILES = {
    "elementwise": ["csrc/{op}/{op}.h", "csrc/{op}/{op}.cpp", "csrc/{op}/{op}_cuda.cu"],
    "reduction": ["csrc/{op}/{op}.h", "csrc/{op}/{op}.cpp", "csrc/{op}/{op}_cuda.cu"],
    "blank": ["csrc/{op}/{op}.cpp", "csrc/{op}/{op}_cuda.cu"],
}
PYTHON_FILES = ["my_ops/ops/{op}.py", "tests/test_{op}.py", "benchmarks/bench_{op}.py", "docs/ops/{op}.md"]


@pytest.mark.parametrize("kind", sorted(KIND_FILES))
def test_new_writes_every_file_of_the_kind(project, kind):
    result = opgen(project, "new", "gelu_approx", "--kind", kind)
    expected = [p.format(op="gelu_approx") for p in KIND_FILES[kind] + PYTHON_FILES]
    for path in expected:
        assert (project / path).is_file(), path
        assert f"wrote {path}" in result.stdout
        assert "{{" not in (project / path).read_text(), f"unrendered Jinja in {path}"
    assert "pip install --no-build-isolation -e ." in result.stdout
    cpp = (project / "csrc/gelu_approx/gelu_approx.cpp").read_text()
    assert "OPGEN_LIBRARY_FRAGMENT(my_ops, m)" in cpp and "OPGEN_LIBRARY_IMPL(my_ops, CPU, m)" in cpp
    assert 'm.def("gelu_approx(Tensor x) -> Tensor")' in cpp
    # One host function serves both devices; the .cu includes no torch header (it compiles in seconds).
    assert "OPGEN_LIBRARY_IMPL(my_ops, CUDA, m)" in cpp and "opgen::DeviceGuard" in cpp
    cu = (project / "csrc/gelu_approx/gelu_approx_cuda.cu").read_text()
    includes = [line for line in cu.splitlines() if line.startswith("#include")]
    assert includes and not any("torch" in line for line in includes), includes
    assert "OPGEN_CUDA_DISPATCH_FLOATING" in cu
    wrapper = (project / "my_ops/ops/gelu_approx.py").read_text()
    assert 'register_fake("my_ops::gelu_approx")' in wrapper and 'register_autograd("my_ops::gelu_approx"' in wrapper
    assert "SPEC = OpSpec(" in wrapper
    compile(wrapper, "wrapper", "exec")
    compile((project / "tests/test_gelu_approx.py").read_text(), "test", "exec")


def test_new_uses_the_project_namespace(tmp_path, template_repo):
    from helpers import copy_project

    project = copy_project(template_repo, tmp_path / "p", package_name="fastk", namespace="fk")
    opgen(project, "new", "scale2")
    assert "OPGEN_LIBRARY_FRAGMENT(fk, m)" in (project / "csrc/scale2/scale2.cpp").read_text()
    assert "torch.ops.fk.scale2" in (project / "fastk/ops/scale2.py").read_text()


def test_new_works_from_a_subfolder(project):
    opgen(project / "csrc", "new", "deep_op")
    assert (project / "csrc/deep_op/deep_op.cpp").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["new", "1abc"], "invalid op name '1abc'"),
        (["new", "class"], "Python keyword"),
        (["new", "my-op"], "invalid op name 'my-op'"),
        (["new", "good", "--kind", "weird"], "invalid choice: 'weird'"),
        (["new", "good", "--schema", "(Scalar s, Tensor x) -> Tensor"], "the stable ABI has no Scalar"),
        (["new", "good", "--schema", "(Tensor x) -> int"], "an op returns tensors"),
        (["new", "good", "--schema", "(Tensor x, Tensor? w) -> Tensor"], "elementwise ops take plain tensors"),
        (["new", "good", "--kind", "reduction", "--schema", "(Tensor x, float p) -> Tensor"], "--kind blank"),
        (["new", "good", "--kind", "blank", "--with-out"], "--with-out is for elementwise ops"),
        (["new"], "required: name"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_exits_nonzero_with_one_line_and_writes_nothing(project, args, message):
    before = snapshot(project)
    result = opgen(project, *args, check=False)
    assert result.returncode != 0
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert snapshot(project) == before


def test_existing_op_is_refused_without_force(project):
    opgen(project, "new", "gelu_approx")
    (project / "csrc/gelu_approx/gelu_approx.h").write_text("// my edit\n")
    before = snapshot(project)
    result = opgen(project, "new", "gelu_approx", check=False)
    assert result.returncode == 2 and "already exists" in result.stderr
    assert snapshot(project) == before
    opgen(project, "new", "gelu_approx", "--force")
    assert "my edit" not in (project / "csrc/gelu_approx/gelu_approx.h").read_text()


def test_a_hand_written_file_in_the_way_is_refused(project):
    (project / "tests/test_newop.py").write_text("# mine\n")
    before = snapshot(project)
    result = opgen(project, "new", "newop", check=False)
    assert result.returncode == 2 and "would overwrite tests/test_newop.py" in result.stderr
    assert snapshot(project) == before


def test_outside_a_project_is_refused(tmp_path):
    result = opgen(tmp_path, "new", "gelu_approx", check=False)
    assert result.returncode == 2 and "not inside an opgen project" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_dry_run_writes_nothing(project):
    before = snapshot(project)
    result = opgen(project, "new", "gelu_approx", "--dry-run")
    assert "would write csrc/gelu_approx/gelu_approx_cuda.cu" in result.stdout
    assert snapshot(project) == before


def test_failed_generation_leaves_nothing_behind(project, monkeypatch):
    """A failure half-way through writing (here: the fourth file) rolls every write back."""
    import os

    from opgen import cli, writer

    before = snapshot(project)
    real_replace = os.replace
    calls = []

    def failing_replace(src, dst):
        calls.append(dst)
        if len(calls) == 4:
            raise OSError("disk full")
        real_replace(src, dst)

    monkeypatch.setattr(writer.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        cli.main(["-C", str(project), "new", "gelu_approx"])
    assert len(calls) == 4
    assert snapshot(project) == before
    assert not (project / "csrc/gelu_approx").exists()


def test_interrupted_generation_leaves_nothing_behind(project, monkeypatch, capsys):
    import os

    from opgen import cli, writer

    before = snapshot(project)
    real_replace = os.replace

    def interrupted_replace(src, dst):
        if "test_" in str(dst):
            raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(writer.os, "replace", interrupted_replace)
    assert cli.main(["-C", str(project), "new", "gelu_approx"]) == 130
    assert "nothing was written" in capsys.readouterr().err
    assert snapshot(project) == before


def test_list_shows_ops_and_kinds(project):
    opgen(project, "new", "aaa", "--kind", "reduction")
    opgen(project, "new", "bbb")
    listing = opgen(project, "list").stdout.splitlines()
    assert listing == ["aaa\treduction", "bbb\telementwise"]


def test_remove_deletes_only_what_opgen_wrote(project):
    before = snapshot(project)
    opgen(project, "new", "gelu_approx")
    (project / "csrc/gelu_approx/notes.md").write_text("mine\n")
    result = opgen(project, "remove", "gelu_approx")
    assert "removed csrc/gelu_approx/gelu_approx.cpp" in result.stdout
    assert "kept csrc/gelu_approx/" in result.stdout
    assert (project / "csrc/gelu_approx/notes.md").read_text() == "mine\n"
    (project / "csrc/gelu_approx/notes.md").unlink()
    (project / "csrc/gelu_approx").rmdir()
    after = snapshot(project)
    after.pop(".opgen/manifest.json")
    assert after == before


def test_remove_refuses_edited_files_without_force(project):
    opgen(project, "new", "gelu_approx")
    (project / "csrc/gelu_approx/gelu_approx.h").write_text("// my math\n")
    before = snapshot(project)
    result = opgen(project, "remove", "gelu_approx", check=False)
    assert result.returncode == 2 and "edited since generated: csrc/gelu_approx/gelu_approx.h" in result.stderr
    assert snapshot(project) == before
    opgen(project, "remove", "gelu_approx", "--force")
    assert not (project / "csrc/gelu_approx").exists()
    assert "gelu_approx" not in opgen(project, "list").stdout


def test_remove_refuses_ops_opgen_did_not_write(project):
    (project / "csrc/handmade").mkdir()
    (project / "csrc/handmade/handmade.cpp").write_text("// mine\n")
    result = opgen(project, "remove", "handmade", check=False)
    assert result.returncode == 2 and "not written by opgen" in result.stderr
    assert (project / "csrc/handmade/handmade.cpp").is_file()


def test_console_script_runs():
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    script = shutil.which("opgen") or shutil.which("opgen", path=str(Path(sys.executable).parent))
    assert script, "the opgen console script is not on PATH (pip install -e . in this repo)"
    result = subprocess.run([script, "--help"], capture_output=True, text=True)
    assert result.returncode == 0 and "new" in result.stdout and "remove" in result.stdout


def test_schema_writes_every_argument_through(project):
    """From one schema: m.def, the C++ signatures, the functor's scalar in the math type, the kernel
    plumbing, the Python signature with hints, the backward op with one gradient per input, the spec."""
    opgen(project, "new", "fma3", "--schema", "(Tensor a, Tensor b, float c=0.5) -> Tensor", "--with-out")
    cpp = (project / "csrc/fma3/fma3.cpp").read_text()
    assert 'm.def("fma3(Tensor a, Tensor b, float c=0.5) -> Tensor")' in cpp
    assert 'm.def("fma3_out(Tensor a, Tensor b, float c=0.5, *, Tensor(a!) out) -> ()")' in cpp
    assert ('m.def("fma3_backward(Tensor grad, Tensor a, Tensor b, float c, bool needs_a, bool needs_b) '
            '-> (Tensor, Tensor)")') in cpp
    assert "Tensor forward(const opgen::Tensor& a, const opgen::Tensor& b, double c)" in cpp
    assert 'opgen::check_like(b, "b", a, "a");' in cpp and 'opgen::check_output_memory(out, "out", b, "b");' in cpp
    header = (project / "csrc/fma3/fma3.h").read_text()
    assert "T c;" in header and "opgen::Grads<T, 2> operator()(T grad, T a, T b)" in header
    cu = (project / "csrc/fma3/fma3_cuda.cu").read_text()
    assert "Forward<T>{static_cast<T>(c)}" in cu and "Backward<T>{static_cast<T>(c)}" in cu
    wrapper = (project / "my_ops/ops/fma3.py").read_text()
    assert "def fma3(a: Tensor, b: Tensor, c: float = 0.5) -> Tensor:" in wrapper
    assert "def fma3_out(a: Tensor, b: Tensor, c: float = 0.5, *, out: Tensor) -> None:" in wrapper
    assert "return grad_a if needs[0] else None, grad_b if needs[1] else None, None" in wrapper
    assert '"a": TensorArg(domain=(-4.0, 4.0)), "b": TensorArg(domain=(-4.0, 4.0)), "c": 0.5' in wrapper
    compile(wrapper, "wrapper", "exec")
    entry = __import__("json").loads((project / ".opgen/manifest.json").read_text())["ops"]["fma3"]
    assert entry["schema"] == "(Tensor a, Tensor b, float c=0.5) -> Tensor" and entry["with_out"] is True


def test_schema_with_an_output_writes_into_it(project):
    hint = opgen(project, "new", "add_into", "--schema", "(Tensor a, Tensor b, Tensor(a!) out) -> ()").stdout
    cpp = (project / "csrc/add_into/add_into.cpp").read_text()
    assert "void forward_out(const opgen::Tensor& a, const opgen::Tensor& b, const opgen::Tensor& out)" in cpp
    assert "_backward" not in cpp  # a function writing in place has no autograd
    header = (project / "csrc/add_into/add_into.h").read_text()
    assert "struct Backward" not in header and "(Forward)" in hint  # the hint asks only for what is there
    wrapper = (project / "my_ops/ops/add_into.py").read_text()
    assert "def add_into(a: Tensor, b: Tensor, out: Tensor) -> None:" in wrapper and 'out="out"' in wrapper


def test_blank_takes_any_schema(project):
    schema = "(Tensor a, Tensor? w=None, *, float eps=1e-5, int[1] dim=[-1]) -> (Tensor, Tensor)"
    opgen(project, "new", "norm2", "--kind", "blank", "--schema", schema)
    cpp = (project / "csrc/norm2/norm2.cpp").read_text()
    assert f'm.def("norm2{schema}")' in cpp
    flat = " ".join(cpp.split())  # as formatted, the signature spans lines
    assert ("std::tuple<Tensor, Tensor> forward(const opgen::Tensor& a, const std::optional<opgen::Tensor>& w, "
            "double eps, const std::vector<int64_t>& dim)") in flat
    assert 'opgen::check_same_device(*w, "w", a, "a");' in cpp
    wrapper = (project / "my_ops/ops/norm2.py").read_text()
    assert ("def norm2(a: Tensor, w: Tensor | None = None, *, eps: float = 1e-5, dim: list[int] = [-1]) "
            "-> tuple[Tensor, Tensor]:") in wrapper
    assert "torch.ops.my_ops.norm2.default(a, w, eps=eps, dim=dim)" in wrapper
    compile(wrapper, "wrapper", "exec")


def test_remove_refuses_an_op_another_one_calls(project):
    opgen(project, "new", "base_op")
    opgen(project, "new", "user_op")
    wrapper = project / "my_ops/ops/user_op.py"
    wrapper.write_text(wrapper.read_text() + "\n\ndef twice(x):\n    return torch.ops.my_ops.base_op.default(x) * 2\n")
    from opgen.project import find_project

    build = find_project(project).build_config()
    assert build.op_dependencies("user_op") == ["base_op"] and build.op_dependencies("base_op") == []
    assert build.with_dependencies(["user_op"]) == ["user_op", "base_op"]  # what OPGEN_JIT=user_op builds
    before = snapshot(project)
    result = opgen(project, "remove", "base_op", check=False)
    assert result.returncode == 2 and "'base_op' is used by user_op" in result.stderr
    assert snapshot(project) == before
    opgen(project, "remove", "user_op", "--force")
    opgen(project, "remove", "base_op")


def test_reduction_over_any_dim(project):
    opgen(project, "new", "sumsq", "--kind", "reduction", "--schema", "(Tensor v, int dim=-1, bool keepdim=False) -> Tensor")
    cpp = (project / "csrc/sumsq/sumsq.cpp").read_text()
    assert 'm.def("sumsq(Tensor v, int dim=-1, bool keepdim=False) -> Tensor")' in cpp
    assert 'm.def("sumsq_backward(Tensor grad, Tensor v, int dim, bool keepdim) -> Tensor")' in cpp
    assert "Tensor forward(const Tensor& v, int64_t dim, bool keepdim)" in cpp
    wrapper = (project / "my_ops/ops/sumsq.py").read_text()
    assert "return v * v" in wrapper and "return term(v).sum(dim=dim, keepdim=keepdim)" in wrapper
    assert "sum_error(term(v).abs().sum(dim=dim, keepdim=keepdim), length, dtype)" in wrapper
    compile(wrapper, "wrapper", "exec")


def test_each_op_gets_a_doc_card_that_the_benchmarks_fill_in(project):
    """docs/ops/<op>.md: signature, dtypes and devices, what it computes, how it is tested; the
    benchmark run writes the op's figures into it (here from made-up rows, as no GPU is needed)."""
    import subprocess
    import sys

    opgen(project, "new", "fma3", "--schema", "(Tensor a, Tensor b, float c=0.5) -> Tensor", "--with-out")
    card = project / "docs/ops/fma3.md"
    text = card.read_text()
    assert "fma3(Tensor a, Tensor b, float c=0.5) -> Tensor" in text and "fma3_out(" in text
    assert "float32, float16, bfloat16 and float64, on CPU and CUDA" in text and "test_opgen_conformance.py" in text
    assert "Not measured yet" in text
    code = (
        "from pathlib import Path\n"
        "from benchmarks import report\n"
        "from benchmarks.harness import Bench, Row\n"
        "bench = Bench(rows=[Row('fma3', 'n=2^28 float32', 'ours', 1.25, gbps=2577.0, roofline=0.86),\n"
        "                    Row('other', 'x', 'ours', 1.0)], _copy_gbps=3000.0)\n"
        "meta = {'device': 'Some GPU', 'torch': '2.x', 'copy_gbps': 3000.0}\n"
        "print(report.update_cards(bench, Path('docs/ops'), meta))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    text = card.read_text()
    assert "| fma3 | n=2^28 float32 | ours | 1.2500 | 2577 |" in text and "Not measured yet" not in text
    assert "other" not in text and text.rstrip().endswith("")
    assert text.count("<!-- opgen:benchmarks -->") == 1 and text.count("<!-- /opgen:benchmarks -->") == 1


def test_hygiene_check_names_placeholder_notes_left_once_the_math_is_written(project):
    opgen(project, "new", "cube")
    check = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_opgen_hygiene.py"]
    assert subprocess.run(check, cwd=project, capture_output=True, text=True).returncode == 0  # untouched: fine
    header = project / "csrc/cube/cube.h"
    header.write_text(header.read_text().replace("return x / (T(1)", "return x * x / (T(1)"))
    result = subprocess.run(check, cwd=project, capture_output=True, text=True)
    assert result.returncode == 1
    assert "csrc/cube/cube.h:" in result.stdout and "docs/ops/cube.md:" in result.stdout
