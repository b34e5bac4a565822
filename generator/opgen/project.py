"""Finds the opgen project around a directory and reads its copier answers."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from .errors import OpgenError

ANSWERS_FILE = ".copier-answers.yml"


@dataclass(frozen=True)
class Project:
    root: Path
    package: str
    namespace: str
    project_name: str

    def existing_ops(self) -> list[str]:
        csrc = self.root / "csrc"
        if not csrc.is_dir():
            return []
        return sorted(d.name for d in csrc.iterdir() if (d / f"{d.name}.cpp").is_file())


def find_project(start: Path) -> Project:
    """The nearest directory at or above `start` with a copier answers file from the opgen template."""
    start = start.resolve()
    for folder in [start, *start.parents]:
        answers_path = folder / ANSWERS_FILE
        if answers_path.is_file():
            return _load(folder, answers_path)
    raise OpgenError(f"not inside an opgen project: no {ANSWERS_FILE} in {start} or above (create one with `copier copy`)")


def _load(root: Path, answers_path: Path) -> Project:
    try:
        answers = yaml.safe_load(answers_path.read_text()) or {}
    except yaml.YAMLError as error:
        raise OpgenError(f"{answers_path} is not valid YAML: {error}".replace("\n", " ")) from error
    missing = [key for key in ("package_name", "namespace") if not answers.get(key)]
    if missing:
        raise OpgenError(f"{answers_path} lacks {', '.join(missing)}: is this project made from the opgen template?")
    if not (root / answers["package_name"]).is_dir():
        raise OpgenError(f"package folder {root / answers['package_name']} is missing")
    return Project(root, answers["package_name"], answers["namespace"], answers.get("project_name", root.name))
