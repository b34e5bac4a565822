"""No leftovers in the project: `copier update` (and git) can leave conflict markers or `.rej` files
behind and still exit 0, and an op whose math has been written can keep the placeholder notes that
`opgen new` wrote. These tests fail on each one, naming the file and line.

Template-owned: `copier update` keeps it current.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Folders that hold no sources of the project (build outputs, environments, caches).
SKIPPED_DIRS = {
    ".git",
    "build",
    "dist",
    ".venv",
    "venv",
    "env",
    ".tox",
    ".nox",
    "node_modules",
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    ".mypy_cache",
    ".ruff_cache",
    ".eggs",
}
# Built up, so that this file does not hold the markers it looks for.
OURS, BASE, SEPARATOR, THEIRS = "<" * 7, "|" * 7, "=" * 7, ">" * 7
# What `opgen new` writes where the op's own words belong (the header's math, the module's docstring).
PLACEHOLDER_NOTES = ("Placeholder" + " math", "Say here" + " in a sentence")


def walk(root: Path = ROOT) -> list[Path]:
    """Every file under root, skipping build outputs, environments and caches."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.endswith(".egg-info")]
        found += [Path(folder) / name for name in files]
    return found


def project_files(root: Path = ROOT) -> list[Path]:
    """The files git tracks or would track (not ignored) in a git checkout; otherwise walk()."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return walk(root)
    return [root / name for name in listed.decode().split("\0") if name and (root / name).is_file()]


def conflict_markers(path: Path) -> list[str]:
    """'path:line: text' for each conflict marker: a line opening with '<<<<<<< ', '||||||| ' or
    '>>>>>>> ', and '=======' alone between an opening and a closing one."""
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return []  # binary
    found, inside = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith(OURS + " ") or line == OURS:
            inside = True
        elif line.startswith(THEIRS + " ") or line == THEIRS:
            inside = False
        elif not (inside and (line.startswith(BASE) or line.rstrip() == SEPARATOR)):
            continue
        found.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{number}: {line[:60]}")
    return found


def test_no_conflict_markers():
    found = [marker for path in project_files() for marker in conflict_markers(path)]
    assert not found, (
        "conflict markers left (by `copier update` or a git merge): resolve each, keeping what you want\n"
        + "\n".join(found)
    )


def test_no_rejected_hunks():
    rejected = sorted(str(path.relative_to(ROOT)) for path in walk() if path.suffix == ".rej")
    assert not rejected, (
        "`copier update --conflict rej` left hunks it could not apply: apply each by hand to the file "
        "of the same name, then delete the .rej file\n" + "\n".join(rejected)
    )


def edited_ops(root: Path = ROOT) -> dict[str, list[Path]]:
    """op -> the files `opgen new` wrote for it (.opgen/manifest.json), for each op with one of them
    edited since: its math has been written."""
    manifest = root / ".opgen" / "manifest.json"
    ops = json.loads(manifest.read_text())["ops"] if manifest.is_file() else {}
    edited = {}
    for op, entry in ops.items():
        files = [root / path for path in entry.get("files", {}) if (root / path).is_file()]
        digests = {root / path: digest for path, digest in entry.get("files", {}).items()}
        if any(hashlib.sha256(path.read_bytes()).hexdigest() != digests[path] for path in files):
            edited[op] = files + [root / "docs" / "ops" / f"{op}.md"]
    return edited


def placeholder_notes(path: Path) -> list[str]:
    """'path:line: text' for each placeholder note in path."""
    if not path.is_file():
        return []
    lines = path.read_text(errors="replace").splitlines()
    return [
        f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{number}: {line.strip()[:70]}"
        for number, line in enumerate(lines, 1)
        if any(note in line for note in PLACEHOLDER_NOTES)
    ]


def test_no_placeholder_notes_once_the_math_is_written():
    found = [note for files in edited_ops().values() for path in files for note in placeholder_notes(path)]
    assert not found, (
        "an op's math has been written but the notes `opgen new` left for it are still there: replace each "
        "with what the op does\n" + "\n".join(found)
    )
