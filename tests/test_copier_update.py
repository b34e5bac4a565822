"""`copier update` brings template changes into a project and keeps the user's ops and edits."""
import os
import re
import subprocess
import sys

import pytest
import yaml

from helpers import git, opgen, pytest_counts, run


def update_to_v2(project, template_repo, **options) -> None:
    """Tag the template's last commit v2, `copier update` the project to it, then put the template
    back to v1 for the other tests."""
    import copier

    git(template_repo, "tag", "v2")
    try:
        copier.run_update(str(project), defaults=True, overwrite=True, quiet=True, vcs_ref="v2", **options)
    finally:
        git(template_repo, "reset", "-q", "--hard", "v1")
        git(template_repo, "tag", "-d", "v2")


def test_copy_and_update_need_no_trust(project, template_repo, copier_settings_without_trust):
    """No `--trust` (unsafe=False, no trusted repositories in copier's settings): copier refuses a
    template with tasks, migrations or Jinja extensions, and this one has none."""
    import copier

    assert os.environ["COPIER_SETTINGS_PATH"] == str(copier_settings_without_trust)
    template = (template_repo / "copier.yml").read_text()
    assert not any(key in template for key in ("_tasks", "_migrations", "_jinja_extensions"))
    git(template_repo, "commit", "-q", "--allow-empty", "-m", "template v2")
    update_to_v2(project, template_repo, unsafe=False)
    assert yaml.safe_load((project / ".copier-answers.yml").read_text())["_commit"] == "v2"


def test_update_round_trip_keeps_user_ops(project, template_repo):
    # The user adds an op, edits its kernel and commits.
    opgen(project, "new", "gelu_approx")
    header = project / "csrc/gelu_approx/gelu_approx.h"
    edited = header.read_text().replace("x / (T(1) + std::exp(-x))", "x * T(0.5)  // my math")
    header.write_text(edited)
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "my op")

    # The template moves on: a changed file and a new one.
    checks = template_repo / "template/csrc/common/checks.h.jinja"
    checks.write_text(checks.read_text() + "\n// template v2\n")
    (template_repo / "template/csrc/common/new_helper.h").write_text("#pragma once\n")
    git(template_repo, "add", "-A")
    git(template_repo, "commit", "-q", "-m", "template v2")
    update_to_v2(project, template_repo)

    assert header.read_text() == edited
    assert (project / "my_ops/ops/gelu_approx.py").is_file()
    assert "// template v2" in (project / "csrc/common/checks.h").read_text()
    assert (project / "csrc/common/new_helper.h").is_file()
    assert yaml.safe_load((project / ".copier-answers.yml").read_text())["_commit"] == "v2"


def test_update_with_a_conflicting_local_edit_keeps_the_users_change_visible(project, template_repo):
    guide = project / "docs/opgen.md"
    guide.write_text(guide.read_text().replace("## Build and test", "## Build and test (my notes)"))
    git(project, "commit", "-q", "-am", "my notes")

    template_guide = template_repo / "template/docs/opgen.md.jinja"
    template_guide.write_text(template_guide.read_text().replace("## Build and test", "## Building"))
    git(template_repo, "commit", "-q", "-am", "template v2")
    update_to_v2(project, template_repo, conflict="inline")
    text = guide.read_text()
    assert "(my notes)" in text and "## Building" in text
    assert "<<<<<<<" in text  # the conflict is shown, not resolved silently

    # copier exited 0; the project's own check names what is left, file and line.
    line = text.splitlines().index(next(x for x in text.splitlines() if x.startswith("<<<<<<< "))) + 1
    failed = hygiene(project, expect_pass=False)
    assert f"docs/opgen.md:{line}: <<<<<<< before updating" in failed and "test_no_conflict_markers FAILED" in failed

    # Resolved (keeping both headings' words): the check passes.
    lines = text.splitlines(keepends=True)
    resolved = "".join(x for x in lines if not x.startswith(("<<<<<<< ", ">>>>>>> ")) and x.rstrip() != "=======")
    guide.write_text(resolved.replace("## Building\n", ""))
    hygiene(project, expect_pass=True)


def test_update_leaves_the_projects_readme_alone(project, template_repo):
    """README.md is the project's after `copier copy` (_skip_if_exists): an update neither conflicts
    with the user's rewrite nor brings back the template's text; the guide, docs/opgen.md, is updated."""
    readme = project / "README.md"
    readme.write_text("# my ops\n\nMy own words.\n")
    git(project, "commit", "-q", "-am", "my readme")
    for path in ("template/README.md.jinja", "template/docs/opgen.md.jinja"):
        (template_repo / path).write_text((template_repo / path).read_text() + "\ntemplate v2\n")
    git(template_repo, "commit", "-q", "-am", "template v2")
    update_to_v2(project, template_repo)
    assert readme.read_text() == "# my ops\n\nMy own words.\n"
    assert (project / "docs/opgen.md").read_text().endswith("\ntemplate v2\n")
    hygiene(project, expect_pass=True)


def test_update_leaving_rej_files_fails_the_projects_hygiene_test(project, template_repo):
    guide = project / "docs/opgen.md"
    guide.write_text(guide.read_text().replace("## Build and test", "## Build and test (my notes)"))
    git(project, "commit", "-q", "-am", "my notes")
    hygiene(project, expect_pass=True)

    template_guide = template_repo / "template/docs/opgen.md.jinja"
    template_guide.write_text(template_guide.read_text().replace("## Build and test", "## Building"))
    git(template_repo, "commit", "-q", "-am", "template v2")
    update_to_v2(project, template_repo, conflict="rej")
    assert (project / "docs/opgen.md.rej").is_file()
    failed = hygiene(project, expect_pass=False)
    assert "docs/opgen.md.rej" in failed and "test_no_rejected_hunks FAILED" in failed


def test_hygiene_test_flags_injected_markers_and_only_them(project):
    """Markers in any tracked or new file, C++ included, are named; a Markdown heading underlined
    with ======= or a line of > quotes outside a conflict is not a marker."""
    hygiene(project, expect_pass=True)
    notes = project / "NOTES.md"
    notes.write_text("Notes\n=======\n\n>>>>>>>quoted\n")
    git(project, "add", "NOTES.md")
    hygiene(project, expect_pass=True)

    source = project / "csrc/common/checks.h"
    lines = source.read_text().splitlines(keepends=True)
    lines[10:10] = ["<<<<<<< before updating\n", "int mine;\n", "=======\n", "int theirs;\n",
                    ">>>>>>> after updating\n"]
    source.write_text("".join(lines))
    (project / "untracked.py").write_text("x = 1\n<<<<<<< HEAD\n")
    failed = hygiene(project, expect_pass=False)
    for where in ("csrc/common/checks.h:11: <<<<<<<", "csrc/common/checks.h:13: =======",
                  "csrc/common/checks.h:15: >>>>>>>", "untracked.py:2: <<<<<<< HEAD"):
        assert where in failed, where
    assert "NOTES.md" not in failed

    # Outside git (a copy without .git): the files are walked instead, build outputs skipped.
    import shutil

    shutil.rmtree(project / ".git")
    (project / "build").mkdir()
    (project / "build/leftover.txt").write_text("<<<<<<< ignored\n")
    failed = hygiene(project, expect_pass=False)
    assert "csrc/common/checks.h:11:" in failed and "untracked.py:2:" in failed and "build/" not in failed


def hygiene(project, expect_pass: bool) -> str:
    """Runs the project's tests/test_opgen_hygiene.py; returns its output."""
    result = subprocess.run([sys.executable, "-m", "pytest", "-v", "-rN", "-p", "no:cacheprovider",
                             "tests/test_opgen_hygiene.py"], cwd=project, capture_output=True, text=True)
    assert (result.returncode == 0) == expect_pass, result.stdout[-4000:] + result.stderr[-2000:]
    return result.stdout


@pytest.mark.slow
def test_a_new_standard_check_reaches_an_existing_edited_op(project, template_repo, tmp_path):
    """The conformance suite is the template's: a check added to it after an op was generated (and
    edited by its user) runs against that op once the project is updated."""
    opgen(project, "new", "triple", "--schema", "(Tensor x, float k=3.0) -> Tensor")
    header = project / "csrc/triple/triple.h"
    header.write_text(header.read_text().replace("return x * k;", "return k * x;  // my math"))
    wrapper = project / "my_ops/ops/triple.py"
    wrapper.write_text(wrapper.read_text().replace("return x * k\n", "return k * x  # my reference\n"))
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "my op")

    suite = template_repo / "template/tests/test_opgen_conformance.py.jinja"
    suite.write_text(suite.read_text() + '''

@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS))
def test_added_in_v2_negative_zero_and_tiny_inputs(spec, device, dtype, shape):
    args = testing.draw(spec, (3,), dtype, device)
    for name in spec.tensor_args:
        args[name] = torch.tensor([-0.0, 1e-30, -1e-30], dtype=dtype, device=device)
    print(f"v2 check ran on {spec.name}")
    testing.assert_matches(spec, testing.call(spec, args), testing.reference_in_float64(spec, args), dtype, (3,))
''')
    git(template_repo, "commit", "-q", "-am", "template v2: one more standard check")
    update_to_v2(project, template_repo)

    assert "// my math" in header.read_text() and "# my reference" in wrapper.read_text()
    env = {"OPGEN_JIT": "triple", "OPGEN_CPU_ONLY": "1", "TORCH_EXTENSIONS_DIR": str(tmp_path), "MAX_JOBS": "2"}
    result = run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-k", "added_in_v2",
                  "tests/test_opgen_conformance.py"], cwd=project, env=env)
    assert "v2 check ran on triple" in result.stdout
    counts = pytest_counts(result.stdout)
    assert counts.get("passed", 0) >= 1 and not counts.get("failed"), result.stdout[-2000:]


@pytest.mark.slow
def test_a_glue_change_reaches_every_declared_op(project, template_repo, tmp_path):
    """The glue of a declared op is the template's: a new check message (common C++), a change to the
    derived host code and one to the Python glue reach an element-wise and a reduction op, both with
    the user's math, through `copier update` and a rebuild alone, with no conflict in the user's files."""
    opgen(project, "new", "triple", "--schema", "(Tensor x, float k=3.0) -> Tensor")
    opgen(project, "new", "rowsum", "--kind", "reduction")
    header = project / "csrc/triple/triple.h"
    header.write_text(header.read_text().replace("return x * k;", "return k * x;  // my math"))
    term = project / "csrc/rowsum/rowsum.h"
    term.write_text(term.read_text().replace("return x * x;", "return x * x * x;  // my math"))
    module = project / "my_ops/ops/rowsum.py"
    module.write_text(module.read_text().replace("return x * x\n", "return x * x * x  # my term\n"))
    for path in (header, term, module, project / "my_ops/ops/triple.py"):  # the notes opgen left go too
        text = re.sub(r"// Placeholder math .*\n", "", path.read_text())
        path.write_text(text.replace("Say here in a sentence what it", "My own words for what it"))
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "my ops")
    owned = {path: path.read_text() for path in (header, term, module, project / "my_ops/ops/triple.py")}

    checks = template_repo / "template/csrc/common/checks.h.jinja"
    checks.write_text(checks.read_text().replace(" must be a floating-point tensor (", " must hold floats, v2 (", 1))
    for kind in ("elementwise", "reduction"):
        glue = template_repo / f"template/{{{{package_name}}}}/_opgen/templates/{kind}.cpp.j2"
        glue.write_text(glue.read_text().replace("namespace {{ ns }}::{{ op }} {", "// host code v2\nnamespace {{ ns }}::{{ op }} {", 1))
    declare = template_repo / "template/{{package_name}}/_declare.py"
    declare.write_text(declare.read_text().replace('"Apply {m.op} element-wise.', '"Apply {m.op} element-wise (glue v2).'))
    git(template_repo, "commit", "-q", "-am", "template v2: glue changes")
    update_to_v2(project, template_repo)

    assert {path: path.read_text() for path in owned} == owned
    hygiene(project, expect_pass=True)
    env = {"OPGEN_JIT": "triple,rowsum", "OPGEN_CPU_ONLY": "1", "TORCH_EXTENSIONS_DIR": str(tmp_path), "MAX_JOBS": "2"}
    code = (
        "import torch, my_ops\n"
        "print('doc:', my_ops.triple.__doc__.splitlines()[0])\n"
        "assert torch.equal(my_ops.triple(torch.ones(3), 2.0), torch.full((3,), 2.0))\n"
        "assert torch.equal(my_ops.rowsum(torch.full((2, 3), 2.0)), torch.full((2,), 24.0))\n"
        "for call in (lambda: my_ops.triple(torch.ones(3, dtype=torch.int32)),\n"
        "             lambda: my_ops.rowsum(torch.ones(2, 3, dtype=torch.int32))):\n"
        "    try:\n"
        "        call()\n"
        "    except RuntimeError as error:\n"
        "        print('refused:', str(error).splitlines()[0])\n"
    )
    result = run([sys.executable, "-c", code], cwd=project, env=env)
    assert "doc: Apply triple element-wise (glue v2)." in result.stdout
    assert result.stdout.count("must hold floats, v2 (") == 2, result.stdout
    for op in ("triple", "rowsum"):
        assert "// host code v2" in (project / "build/opgen" / op / f"{op}.cpp").read_text()
