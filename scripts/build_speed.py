"""Build-speed benchmark (not a test): how long a user waits after an edit, per torch_api.

For each project (a generated one with one op of each kind; made here with copier unless given):
  cold        `pip install --no-build-isolation -e .` from scratch
  pip .h      the same after touching the elementwise op's math (its .h: what a user edits)
  jit .h      `OPGEN_JIT=<op>`: import and first call after touching the op's .h
  jit decl    the same after touching its module (a declared op's declaration: the build derives its
              glue again, rewriting nothing whose text is the same); "-" for an op with its own glue
  jit none    the same with nothing changed (ninja finds nothing to do)
  python      `python -c "import torch"` alone: the part of every JIT row no build can remove
Projects of the layout before declarations (given with --project) are timed the same way.

    python scripts/build_speed.py [--project DIR ...] [--out FILE.md]

CUDA is built where torch has CUDA and nvcc is found (else CPU-only); TORCH_CUDA_ARCH_LIST and
MAX_JOBS are honoured. Prints a Markdown table.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OP = "gelu_approx"
KINDS = {OP: "elementwise", "row_sumsq": "reduction", "my_blank": "blank"}


def sh(cmd: list[str], cwd: Path, env: dict | None = None) -> float:
    """Run cmd, fail loudly, return its wall time in seconds."""
    started = time.perf_counter()
    result = subprocess.run(cmd, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed in {cwd}:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return time.perf_counter() - started


def generate(dest: Path, torch_api: str) -> Path:
    import copier

    copier.run_copy(str(REPO), str(dest), data={"package_name": f"speed_{torch_api}", "torch_api": torch_api},
                    defaults=True, quiet=True, vcs_ref="HEAD")
    for op, kind in KINDS.items():
        sh([sys.executable, "-m", "opgen", "new", op, "--kind", kind], cwd=dest)
    return dest


def package_of(project: Path) -> str:
    return next(line.split(":", 1)[1].strip() for line in (project / ".copier-answers.yml").read_text().splitlines()
                if line.startswith("package_name:"))


def load_build_config(path: Path):
    """The project's _build.py, loaded from its file as setup.py does (the package may not import yet)."""
    spec = importlib.util.spec_from_file_location(f"{path.parent.name}_build", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def touch(path: Path) -> None:
    now = time.time()
    os.utime(path, (now, now))


def measure(project: Path) -> dict[str, float]:
    package = package_of(project)
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-deps", "-e", "."]
    folder = project / "csrc" / OP
    module = project / package / "ops" / f"{OP}.py"
    declared = "declare(" in module.read_text()
    with_cuda = load_build_config(project / package / "_build.py").cuda_build_enabled()
    times = {"cold": sh(pip, cwd=project)}
    touch(folder / f"{OP}.h")
    times["pip .h"] = sh(pip, cwd=project)

    device = "cuda" if with_cuda and _gpu() else "cpu"
    run_op = (f"import sys, torch, {package}; reference = sys.modules['{package}.ops.{OP}'].reference; "
              f"torch.testing.assert_close({package}.{OP}(torch.ones(8, device='{device}')).cpu(), "
              f"reference(torch.ones(8)))")
    with tempfile.TemporaryDirectory() as cache:
        env = {"OPGEN_JIT": OP, "TORCH_EXTENSIONS_DIR": cache}
        sh([sys.executable, "-c", run_op], cwd=project, env=env)  # first JIT build
        touch(folder / f"{OP}.h")
        times["jit .h"] = sh([sys.executable, "-c", run_op], cwd=project, env=env)
        touch(module)
        times["jit decl"] = sh([sys.executable, "-c", run_op], cwd=project, env=env) if declared else None
        times["jit none"] = sh([sys.executable, "-c", run_op], cwd=project, env=env)
    times["python"] = sh([sys.executable, "-c", "import torch"], cwd=project)
    times["cuda"] = with_cuda
    times["layout"] = "declared" if declared else "own glue"
    return times


def _gpu() -> bool:
    import torch

    return torch.cuda.is_available()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", action="append", type=Path, help="generated projects to time (default: "
                        "one per torch_api, generated here)")
    parser.add_argument("--out", type=Path, help="also write the table to this Markdown file")
    args = parser.parse_args()
    import torch

    with tempfile.TemporaryDirectory() as scratch:
        projects = args.project or [generate(Path(scratch) / api, api) for api in ("stable", "aten")]
        rows = []
        for project in projects:
            api = "stable" if "torch_api: stable" in (project / ".copier-answers.yml").read_text() else "aten"
            t = measure(project)
            print(f"{api}: {t}", flush=True)
            decl = "-" if t["jit decl"] is None else f"{t['jit decl']:.1f}"
            rows.append(f"| {api} | {t['layout']} | {'CUDA' if t['cuda'] else 'CPU-only'} | {t['cold']:.1f} | "
                        f"{t['pip .h']:.1f} | {t['jit .h']:.1f} | {decl} | {t['jit none']:.1f} | {t['python']:.1f} |")
    table = "\n".join([
        f"Build speed (s), torch {torch.__version__}, {os.cpu_count()} cores, MAX_JOBS={os.environ.get('MAX_JOBS', '-')}:",
        "",
        "| torch_api | op layout | build | cold pip install | pip after .h edit | JIT after .h edit "
        "| JIT after declaration edit | JIT, no edit | `import torch` alone |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
    ])
    print(table)
    if args.out:
        args.out.write_text(table + "\n")


if __name__ == "__main__":
    main()
