"""Re-render examples/'s template-owned files from the template as it is in this working tree, and
the op files `opgen new` wrote that nobody has edited since from the op templates.

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
    print(f"{rerender_untouched_op_files(answers)} untouched op file(s) re-rendered")
    return 0


def rerender_untouched_op_files(answers: dict) -> int:
    """Op files still as `opgen new` wrote them (their hash in the manifest) follow the op templates."""
    from opgen import manifest, render

    recorded = manifest.load(EXAMPLES)
    changed = 0
    for op, entry in recorded["ops"].items():
        files = render.render_recorded_op(EXAMPLES, answers["package_name"], answers["namespace"], op, entry)
        for path, digest in entry["files"].items():
            current = EXAMPLES / path
            if path not in files:
                continue  # written by an older `opgen new`, derived at build time now (an op of the old layout)
            if current.is_file() and manifest.digest(current.read_bytes()) == digest and current.read_text() != files[path]:
                current.write_text(files[path])
                entry["files"][path] = manifest.digest(files[path])
                print(f"updated {current.relative_to(REPO)}")
                changed += 1
    (EXAMPLES / manifest.PATH).write_text(manifest.dumps(recorded))
    return changed


if __name__ == "__main__":
    sys.exit(main())
