"""A generated project with one op of each kind (and three from schemas) passes its own lint and format checks: ruff check,
ruff format --check and clang-format --dry-run -Werror, with the settings the template ships
(pyproject.toml's [tool.ruff], .clang-format) and the versions its .pre-commit-config.yaml pins.

ruff and clang-format come from this repo's `test` extra (`pip install -e .[test]`, as
scripts/bootstrap.sh does), found beside the running Python or on PATH.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helpers import REPO, add_skeleton_ops, copy_project

CPP_SUFFIXES = {".h", ".cpp", ".cu", ".cuh"}

# Files of the rendered project (default answers, the ops above) allowed to fail a check: none. The
# template's own files are kept formatted by scripts/format_templates.py; what `opgen new` writes is
# formatted as it is written (generator/opgen/formatting.py).
PENDING: dict[str, set[str]] = {"ruff check": set(), "ruff format": set(), "clang-format": set()}


def tool(name: str) -> str:
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    found = shutil.which(name, path=path)
    if not found:
        pytest.skip(f"{name} not found: `pip install -e .[test]` installs it")
    return found


@pytest.fixture(scope="module")
def linted_project(tmp_path_factory, template_repo) -> Path:
    project = copy_project(template_repo, tmp_path_factory.mktemp("lint") / "my_ops")
    add_skeleton_ops(project)
    return project


def failing_files(check: str, project: Path) -> tuple[set[str], str]:
    """The files `check` finds fault with, and its report."""
    if check == "ruff check":
        cmd = [tool("ruff"), "check", "--no-cache", "--output-format", "concise", "."]
    elif check == "ruff format":
        cmd = [tool("ruff"), "format", "--no-cache", "--check", "--output-format", "concise", "."]
    else:
        sources = sorted(str(p.relative_to(project)) for p in (project / "csrc").rglob("*") if p.suffix in CPP_SUFFIXES)
        assert len(sources) > 10
        cmd = [tool("clang-format"), "--dry-run", "-Werror", *sources]
    result = subprocess.run(cmd, cwd=project, capture_output=True, text=True)
    report = result.stdout + result.stderr
    files = {m.group(1) for m in re.finditer(r"^([\w./-]+\.(?:py|h|cpp|cu|cuh)):\d+:\d+: ", report, re.MULTILINE)}
    assert (result.returncode == 0) == (not files), report[-4000:]
    return files, report


@pytest.mark.parametrize("check", list(PENDING))
def test_generated_project_is_lint_clean(linted_project, check):
    failing, report = failing_files(check, linted_project)
    new = sorted(failing - PENDING[check])
    fixed = sorted(PENDING[check] - failing)
    assert not new, f"{check} fails on {new}:\n{report[-6000:]}"
    assert not fixed, f"{check} passes on {fixed} now: drop them from PENDING in tests/test_lint.py"


def test_repo_pins_the_tools_at_the_versions_the_hooks_use():
    """opgen's dependencies (it formats what it writes with them) and the project's
    .pre-commit-config.yaml name the same ruff and clang-format, so the check above is the one a
    user's commit runs."""
    extra = re.search(r"^dependencies = \[(.*)\]$", (REPO / "pyproject.toml").read_text(), re.MULTILINE).group(1)
    pins = dict(re.findall(r'"([\w-]+)==([\w.]+)"', extra))
    hooks = yaml.safe_load((REPO / "template/.pre-commit-config.yaml").read_text())["repos"]
    revs = {repo["repo"].rsplit("/", 1)[-1]: repo["rev"].lstrip("v") for repo in hooks if repo["repo"] != "local"}
    assert pins["ruff"] == revs["ruff-pre-commit"]
    assert pins["clang-format"] == revs["mirrors-clang-format"]
    ids = {hook["id"]: hook for repo in hooks for hook in repo["hooks"]}
    assert "--assume-in-merge" in ids["check-merge-conflict"]["args"]
    assert {"ruff-check", "ruff-format", "clang-format", "no-rejected-hunks", "end-of-file-fixer",
            "trailing-whitespace"} <= set(ids)


def test_template_sources_are_formatted():
    """scripts/format_templates.py --check: the template's Python and C++ as the hooks format them."""
    tool("ruff"), tool("clang-format")
    result = subprocess.run([sys.executable, str(REPO / "scripts/format_templates.py"), "--check"], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout + result.stderr
