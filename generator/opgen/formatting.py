"""Formats what `opgen new` writes with the project's own tools and settings: clang-format with its
.clang-format for C++ and CUDA, ruff (import order, then the formatter) with its pyproject.toml for
Python. Generated files then pass the project's pre-commit hooks whatever the op's names, as long
as a line has room for them. Both tools are opgen's dependencies (pinned to the hooks' versions);
a project without those settings files gets the files as rendered.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

from .errors import OpgenError

CPP_SUFFIXES = (".h", ".cpp", ".cu", ".cuh")


def _tool(name: str) -> str | None:
    return shutil.which(name, path=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")


def _run(cmd: list[str], text: str, path: str, root: Path) -> str:
    # From the project's root: ruff tells the project's own modules from others relative to it.
    result = subprocess.run(cmd, input=text, capture_output=True, text=True, cwd=root)
    if result.returncode != 0:
        raise OpgenError(f"{Path(cmd[0]).name} could not format {path}: {result.stderr.strip()[:500]}")
    return result.stdout


def format_files(root: Path, files: dict[str, str]) -> dict[str, str]:
    """{path: text} with each C++ and Python file formatted as the project at `root` formats it."""
    clang_format = _tool("clang-format") if (root / ".clang-format").is_file() else None
    ruff = _tool("ruff") if (root / "pyproject.toml").is_file() else None
    formatted = {}
    for path, text in files.items():
        suffix = PurePosixPath(path).suffix
        if clang_format and suffix in CPP_SUFFIXES:
            text = _run([clang_format, f"--style=file:{root / '.clang-format'}", f"--assume-filename={root / path}"],
                        text, path, root)
        elif ruff and suffix == ".py":
            config = ["--config", str(root / "pyproject.toml"), "--stdin-filename", str(root / path)]
            text = _run([ruff, "check", "--fix-only", "--select", "I", "--exit-zero", *config, "-"], text, path, root)
            text = _run([ruff, "format", *config, "-"], text, path, root)
        formatted[path] = text
    return formatted
