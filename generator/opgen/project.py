"""Finds the opgen project around a directory and reads its copier answers."""
from __future__ import annotations

import importlib.util
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

    def users_of(self, op: str) -> list[str]:
        """The other ops whose code calls `op`, by the project's own rule (its _build.py)."""
        build = self.build_config()
        if build is None or not hasattr(build, "op_dependencies"):
            return []
        return [other for other in build.op_names() if other != op and op in build.op_dependencies(other)]

    def declared_ops(self) -> dict:
        """{op: declaration} by the project's own rule (its _build.py); empty for a project before declarations."""
        build = self.build_config()
        return build.declared_ops() if build is not None and hasattr(build, "declared_ops") else {}

    def build_config(self):
        """The project's <package>/_build.py, loaded from its file (stdlib only at import), or None."""
        path = self.root / self.package / "_build.py"
        if not path.is_file():
            return None
        spec = importlib.util.spec_from_file_location(f"_opgen_project_build_{self.package}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    def existing_ops(self) -> list[str]:
        """Ops with their own glue (csrc/<op>/<op>.cpp), declared ones (csrc/<op>/<op>.h), and Triton
        ops (declared, with no csrc/)."""
        csrc = self.root / "csrc"
        ops = {d.name for d in csrc.iterdir() if (d / f"{d.name}.cpp").is_file() or (d / f"{d.name}.h").is_file()} \
            if csrc.is_dir() else set()
        triton = {op for op, d in self.declared_ops().items() if getattr(d, "triton", False)}
        return sorted(ops | triton)


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
