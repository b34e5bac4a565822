"""examples/ is a generated project: its template files match a fresh render, its untouched op
skeletons match the op templates, and it builds and passes its own tests."""
from pathlib import Path

import copier
import pytest
import yaml

from helpers import pip_install_editable, run_project_tests

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
ANSWERS = yaml.safe_load((EXAMPLES / ".copier-answers.yml").read_text())
MANIFEST = yaml.safe_load((EXAMPLES / ".opgen" / "manifest.json").read_text())
SEED_OPS = ["vector_add", "scale", "fused_relu_scale", "gelu_approx", "fused_bias_gelu", "fused_linear_gelu",
            "rgb_to_gray", "normalize_volume", "gemm", "bitonic_sort", "moe", "custom_add"]


def test_template_files_have_not_drifted(tmp_path, template_repo):
    data = {k: v for k, v in ANSWERS.items() if not k.startswith("_")}
    fresh = tmp_path / "fresh"
    copier.run_copy(str(template_repo), str(fresh), data=data, defaults=True, quiet=True, vcs_ref="HEAD")
    rendered = [p.relative_to(fresh) for p in fresh.rglob("*") if p.is_file()]
    assert len(rendered) > 20
    # The project's own files after `copier copy` (README.md: here, the examples' index).
    project_owned = set(yaml.safe_load((REPO / "copier.yml").read_text())["_skip_if_exists"])
    assert "README.md" in project_owned and (EXAMPLES / "README.md").is_file()
    drifted = [str(p) for p in rendered
               if p.name != ".copier-answers.yml" and str(p) not in project_owned
               and (EXAMPLES / p).read_bytes() != (fresh / p).read_bytes()]
    assert not drifted, f"examples/ differs from the template in {drifted}: run scripts/render_examples.py"


def test_untouched_op_skeleton_files_match_the_op_templates():
    """Op files still as `opgen new` wrote them must equal what the op templates render today."""
    from opgen import manifest, render

    untouched = 0
    for op, entry in MANIFEST["ops"].items():
        files = render.render_recorded_op(EXAMPLES, ANSWERS["package_name"], ANSWERS["namespace"], op, entry)
        for path, recorded in entry["files"].items():
            current = EXAMPLES / path
            if path not in files:
                continue  # an older `opgen new` wrote it; a declared op's build derives it now
            if current.is_file() and manifest.digest(current.read_bytes()) == recorded:
                untouched += 1
                assert current.read_text() == files.get(path), f"{path}: op template drifted; regenerate it"
    print(f"{untouched} untouched skeleton files checked")


def test_every_seed_kernel_is_an_op():
    for op in SEED_OPS:
        # its own glue (csrc/<op>/<op>.cpp), or the math of a declared op (the build derives the glue)
        assert (EXAMPLES / "csrc" / op / f"{op}.cpp").is_file() or (EXAMPLES / "csrc" / op / f"{op}.h").is_file(), op
        assert (EXAMPLES / "opgen_examples" / "ops" / f"{op}.py").is_file(), op
        assert (EXAMPLES / "tests" / f"test_{op}.py").is_file(), op
    assert not (EXAMPLES / "csrc/custom_add/custom_add_cuda.cu").exists(), "custom_add is the CPU-only example"


@pytest.mark.slow
def test_examples_build_and_pass_their_tests():
    build = pip_install_editable(EXAMPLES, env={"MAX_JOBS": "2"})
    assert "torch API) of 15 op(s)" in build.stdout + build.stderr  # 2 of them Triton: nothing to compile
    # Its CMake build mode is left to tests/test_cmake.py (the same CMakeLists.txt, a generated
    # project's sources: CUDA, CPU-only and aten builds) and the GPU machine's check (examples/ built
    # by CMake for sm_90): building the 13 ops a second time took 48 s on an idle 2-core machine,
    # up to 156 s in a CI run.
    run_project_tests(EXAMPLES, "-x", "--deselect", "tests/test_build_modes.py::test_cmake")


def test_every_op_has_its_doc_card_as_opgen_docs_writes_it():
    """docs/ops/<op>.md of every example is `opgen docs`'s card (its figures aside: the H100 run's)."""
    from opgen import cards
    from opgen.project import find_project

    project = find_project(EXAMPLES)
    for op in SEED_OPS:
        text = (EXAMPLES / "docs/ops" / f"{op}.md").read_text()
        expected = cards.card(project, op)
        assert text.split(cards.START)[0] == expected.split(cards.START)[0], f"{op}: run `opgen docs` in examples/"
        assert text.split(cards.END)[1] == expected.split(cards.END)[1], op
        if op != "custom_add":  # the CPU-only op: nothing measured on the GPU
            assert f"| {op} |" in text, f"{op}: no figures in its card"
