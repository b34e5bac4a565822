"""A project made before op declarations (template and opgen at 2799f30), with one op of each kind
and the user's math, takes `copier update` to this template and `opgen upgrade`: it builds, passes
its tests and still computes the user's math, its element-wise and reduction ops now declared."""
import subprocess
import sys

import pytest
import yaml

from helpers import NOT_AOTI, REPO, git, opgen, run, run_project_tests

pytestmark = pytest.mark.slow
BEFORE_DECLARATIONS = "2799f30"


@pytest.fixture(scope="module")
def old_tree(tmp_path_factory):
    """The repository at BEFORE_DECLARATIONS (its template and generator)."""
    tree = tmp_path_factory.mktemp("before-declarations")
    archive = subprocess.run(["git", "archive", BEFORE_DECLARATIONS], cwd=REPO, capture_output=True)
    assert archive.returncode == 0, f"needs the repository's history ({BEFORE_DECLARATIONS}): {archive.stderr.decode()}"
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def template_repo_old_then_new(old_tree, dest):
    """A template repository whose tag `old` is the template before declarations and `new` today's."""
    import shutil

    for name in ("copier.yml", "template"):
        (shutil.copytree if name == "template" else shutil.copy)(old_tree / name, dest / name)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "before declarations")
    git(dest, "tag", "old")
    shutil.rmtree(dest / "template")
    shutil.copytree(REPO / "template", dest / "template")
    shutil.copy(REPO / "copier.yml", dest / "copier.yml")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "today")
    git(dest, "tag", "new")
    return dest


def edit(path, old, new):
    text = path.read_text()
    assert old in text, f"{path} lacks {old!r}"
    path.write_text(text.replace(old, new))


def test_an_old_project_upgrades_and_keeps_its_math(old_tree, tmp_path):
    import copier

    (tmp_path / "template").mkdir()
    template = template_repo_old_then_new(old_tree, tmp_path / "template")
    project = tmp_path / "my_ops"
    copier.run_copy(str(template), str(project), data={"project_name": "my_ops"}, defaults=True, quiet=True,
                    vcs_ref="old")
    git(project, "init", "-q", "-b", "main")
    old_opgen = [sys.executable, "-m", "opgen"]
    old_env = {"PYTHONPATH": str(old_tree / "generator")}
    for args in (["axpy", "--schema", "(Tensor x, Tensor y, float alpha=2.0) -> Tensor"],
                 ["rowsum", "--kind", "reduction", "--schema", "(Tensor x, int dim=-1, bool keepdim=False) -> Tensor"],
                 ["mycopy", "--kind", "blank"]):
        run([*old_opgen, "new", *args], cwd=project, env=old_env)
    # The user's math: axpy = alpha * x + y, rowsum = sum of cubes; the blank op stays a copy.
    edit(project / "csrc/axpy/axpy.h", "return x * y * alpha;", "return alpha * x + y;  // my math")
    edit(project / "csrc/axpy/axpy.h", "return {grad * y * alpha, grad * x * alpha};", "return {grad * alpha, grad};")
    edit(project / "my_ops/ops/axpy.py", "    return x * y * alpha\n", "    return alpha * x + y  # my reference\n")
    edit(project / "csrc/rowsum/rowsum.h", "return x * x;", "return x * x * x;  // my math")
    edit(project / "csrc/rowsum/rowsum.h", "return T(2) * x * grad_row;", "return T(3) * x * x * grad_row;")
    edit(project / "my_ops/ops/rowsum.py", "return (x * x).sum(", "return (x * x * x).sum(")
    # ... and, as the project's hygiene test asks once the math is written, the placeholder notes go.
    edit(project / "csrc/axpy/axpy.h", "// Placeholder math (the product of the arguments): replace it with axpy's, "
         "together with\n// Backward below and reference() in my_ops/ops/axpy.py.\n", "")
    edit(project / "csrc/rowsum/rowsum.h", "// Placeholder math (sum of squares): replace it with rowsum's, together "
         "with reference() in\n// my_ops/ops/rowsum.py.\n", "")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "my ops")

    copier.run_update(str(project), defaults=True, overwrite=True, quiet=True, vcs_ref="new")
    assert yaml.safe_load((project / ".copier-answers.yml").read_text())["_commit"] == "new"
    upgraded = opgen(project, "upgrade").stdout
    print(upgraded)
    for op in ("axpy", "rowsum"):
        assert f"{op}: deleted csrc/{op}/{op}.cpp (derived from the declaration now)" in upgraded
        assert not (project / f"csrc/{op}/{op}_cuda.cu").exists() and (project / f"csrc/{op}/{op}.h").is_file()
        assert "SPEC = declare(" in (project / f"my_ops/ops/{op}.py").read_text()
    assert "return alpha * x + y  # my reference" in (project / "my_ops/ops/axpy.py").read_text()
    assert "    return x * x * x\n" in (project / "my_ops/ops/rowsum.py").read_text()  # term(), from the old reference
    assert (project / "csrc/mycopy/mycopy.cpp").is_file()  # a blank op keeps its own glue
    assert "nothing to upgrade" in opgen(project, "upgrade").stdout

    env = {"OPGEN_JIT": "1", "OPGEN_CPU_ONLY": "1", "TORCH_EXTENSIONS_DIR": str(tmp_path / "ext"), "MAX_JOBS": "2"}
    code = ("import torch, my_ops\n"
            "assert torch.equal(my_ops.axpy(torch.ones(3), torch.full((3,), 5.0), 3.0), torch.full((3,), 8.0))\n"
            "assert torch.equal(my_ops.rowsum(torch.full((2, 3), 2.0)), torch.full((2,), 24.0))\n"
            "print('the user math holds')\n")
    assert "the user math holds" in run([sys.executable, "-c", code], cwd=project, env=env).stdout
    counts = run_project_tests(project, *NOT_AOTI, env=env)
    print(counts)
