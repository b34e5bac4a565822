"""What the package ports (tests/*_port.py) share: a project rendered with `opgen new` for each op,
then edits of what it wrote, counted in changed lines."""
from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path


def changed_lines(before: str, after: str) -> int:
    return sum(1 for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
               if line.startswith(("+", "-")) and not line.startswith(("+++", "---")))


def apply_edits(project: Path, edits: dict[str, list[tuple[str, str]]]) -> dict[str, int]:
    """Replace, in each file, what `opgen new` wrote by what the port has; {file: changed lines}."""
    counts = {}
    for path, replacements in edits.items():
        file = project / path
        before = text = file.read_text()
        for generated, ported in replacements:
            if generated not in text:
                raise AssertionError(f"{path} no longer contains {generated!r}: update the port")
            text = text.replace(generated, ported, 1)
        file.write_text(text)
        counts[path] = changed_lines(before, text)
    return counts


def write_file(project: Path, path: str, text: str) -> int:
    """Write a file the user owns (layers.py); the lines changed from what was there."""
    file = project / path
    before = file.read_text() if file.is_file() else ""
    file.write_text(text)
    return changed_lines(before, text)


def render(template: Path, dest: Path, commands: list[list[str]], **answers: str) -> None:
    """A fresh project from the template's committed HEAD, with `opgen new` run for each op."""
    data = [arg for key, value in answers.items() for arg in ("--data", f"{key}={value}")]
    subprocess.run([sys.executable, "-m", "copier", "copy", "--quiet", "--defaults", "--trust", "--vcs-ref", "HEAD", *data,
                    str(template), str(dest)], check=True)
    for args in commands:
        subprocess.run([sys.executable, "-m", "opgen", "new", *args], cwd=dest, check=True, capture_output=True)
