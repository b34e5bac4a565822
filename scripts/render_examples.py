"""Re-render examples/'s template-owned files from the template as it is in this working tree.

    python scripts/render_examples.py

examples/ is a project generated from the template; tests/test_examples.py fails when a file the
template renders differs from examples/'s copy. Op files (written by `opgen new`, then edited) are
left alone, and so are the files copier.yml's `_skip_if_exists` gives to the project (README.md,
the examples' index).
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import copier
import yaml

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


def main() -> int:
    answers = yaml.safe_load((EXAMPLES / ".copier-answers.yml").read_text())
    data = {k: v for k, v in answers.items() if not k.startswith("_")}
    project_owned = set(yaml.safe_load((REPO / "copier.yml").read_text()).get("_skip_if_exists", []))
    with tempfile.TemporaryDirectory() as scratch:
        template = Path(scratch) / "template"
        shutil.copytree(REPO / "template", template / "template")
        shutil.copy(REPO / "copier.yml", template / "copier.yml")
        fresh = Path(scratch) / "fresh"
        copier.run_copy(str(template), str(fresh), data=data, defaults=True, quiet=True)
        changed = 0
        for path in sorted(p for p in fresh.rglob("*") if p.is_file() and p.name != ".copier-answers.yml"):
            if str(path.relative_to(fresh)) in project_owned:
                continue
            target = EXAMPLES / path.relative_to(fresh)
            if not target.is_file() or target.read_bytes() != path.read_bytes():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, target)
                print(f"updated {target.relative_to(REPO)}")
                changed += 1
    print(f"{changed} file(s) re-rendered")
    return 0


if __name__ == "__main__":
    sys.exit(main())
