"""Format the template's own Python and C++ sources as a generated project's pre-commit hooks would.

    python scripts/format_templates.py [--check]

Jinja placeholders stand in for names as long as the default answers' (`my_ops`), so the rendered
default project is what the formatters see; C++ files whose macros hold a placeholder keep those
macros between `// clang-format off` and `// clang-format on`. The op templates need no pass of
their own: `opgen new` formats what it writes (generator/opgen/formatting.py).
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = REPO / "template"
# placeholder -> a stand-in of the rendered default's length that no template holds literally
STAND_INS = {"{{ package_name }}": "my_pkg", "{{ namespace }}": "my_nsp", "{{ project_name }}": "my_prj",
             "{{ cuda_arch_list }}": "Q.Q", "{{ torch_api }}": "api_choice"}
CPP_SUFFIXES = (".h", ".cpp", ".cu", ".cuh")


def tool(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def sources() -> list[Path]:
    found = []
    for path in sorted(TEMPLATE.rglob("*")):
        name = path.name.removesuffix(".jinja")
        if path.is_file() and (name.endswith(".py") or name.endswith(CPP_SUFFIXES)):
            text = path.read_text()
            if "{%" not in text:  # a file with Jinja logic is not formatted here
                found.append(path)
    return found


def format_one(path: Path, pyproject: Path, clang_format_file: Path, scratch: Path) -> str:
    original = path.read_text()
    text = original
    for placeholder, stand_in in STAND_INS.items():
        assert stand_in not in original or placeholder not in original, (path, stand_in)
        text = text.replace(placeholder, stand_in)
    name = path.name.removesuffix(".jinja")
    target = scratch / path.relative_to(TEMPLATE).parent / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    if name.endswith(".py"):
        subprocess.run([tool("ruff"), "check", "--fix-only", "--exit-zero", "-q", "--config", str(pyproject), str(target)],
                       check=True, cwd=scratch)
        subprocess.run([tool("ruff"), "format", "-q", "--config", str(pyproject), str(target)], check=True, cwd=scratch)
    else:
        subprocess.run([tool("clang-format"), "-i", f"--style=file:{clang_format_file}", str(target)], check=True)
    text = target.read_text()
    for placeholder, stand_in in STAND_INS.items():
        if placeholder in original:
            text = text.replace(stand_in, placeholder)
    return text


def main() -> int:
    check = "--check" in sys.argv
    changed = []
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        pyproject = scratch / "pyproject.toml"
        rendered = (TEMPLATE / "pyproject.toml.jinja").read_text()
        ruff_part = rendered[rendered.index("[tool.ruff]"):]  # the last tables of the file
        pyproject.write_text(ruff_part.replace("{{ package_name }}", "my_pkg"))
        for path in sources():
            formatted = format_one(path, pyproject, TEMPLATE / ".clang-format", scratch)
            if formatted != path.read_text():
                changed.append(path)
                if not check:
                    path.write_text(formatted)
    for path in changed:
        print(f"{'would reformat' if check else 'reformatted'} {path.relative_to(REPO)}")
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
