"""All-or-nothing file changes: either every file is written (or removed), or none is."""
from __future__ import annotations

import os
from pathlib import Path


class Transaction:
    """Stage writes and removals, then apply them; on any failure, restore what was there."""

    def __init__(self, root: Path):
        self.root = root
        self.writes: dict[Path, str] = {}
        self.removals: list[Path] = []

    def write(self, relative: str, text: str) -> None:
        self.writes[self.root / relative] = text

    def remove(self, relative: str) -> None:
        self.removals.append(self.root / relative)

    def commit(self) -> None:
        backups: dict[Path, bytes | None] = {}  # original content, None where the file was new
        created_dirs: list[Path] = []
        try:
            for path, text in self.writes.items():
                backups[path] = path.read_bytes() if path.exists() else None
                created_dirs += _make_parents(path.parent)
                tmp = path.with_name(path.name + ".opgen-tmp")
                tmp.write_text(text)
                os.replace(tmp, path)
            for path in self.removals:
                backups[path] = path.read_bytes()
                path.unlink()
        except BaseException:
            for path, original in backups.items():
                path.with_name(path.name + ".opgen-tmp").unlink(missing_ok=True)
                if original is None:
                    path.unlink(missing_ok=True)
                else:
                    path.write_bytes(original)
            for folder in reversed(created_dirs):
                if folder.is_dir() and not any(folder.iterdir()):
                    folder.rmdir()
            raise


def _make_parents(folder: Path) -> list[Path]:
    """mkdir -p, returning the folders it created (outermost first)."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir()
    return list(reversed(missing))


def remove_empty_dirs(root: Path, folders: list[Path]) -> None:
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        while folder != root and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent
