"""Records which files `opgen new` wrote for each op, with their hashes, in .opgen/manifest.json.

`opgen remove` deletes only recorded files, and only unmodified ones unless forced.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

PATH = Path(".opgen") / "manifest.json"


def digest(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def load(root: Path) -> dict:
    path = root / PATH
    if not path.is_file():
        return {"ops": {}}
    return json.loads(path.read_text())


def dumps(manifest: dict) -> str:
    return json.dumps(manifest, indent=2, sort_keys=True) + "\n"
