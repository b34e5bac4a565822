"""Builds a wheel of every variant this machine can build, and the `build/` folder that Hugging Face's
`kernels` library loads, from one command in the project:

    python <package>/_variants.py                       # dist/*.whl and dist/kernels/build/<variant>/
    python <package>/_variants.py --list                # what it would build here, and why not the rest
    python <package>/_variants.py --variants cpu --check-abi

Variants: "cpu" (always), and "cu<major>" for each CUDA major version a toolkit is found for
(CUDA_HOME, the nvcc on PATH, /usr/local/cuda*), built by that toolkit's nvcc. Each wheel's version
carries its variant as a PEP 440 local label (my_ops-0.1.0+cpu-..., my_ops-0.1.0+cu13-...: setup.py
adds it), and its `_build_info.json` says the same ("variant", "cuda": the nvcc version).

A CUDA variant is built with the installed torch, whose cpp_extension refuses an nvcc of another CUDA
major version than its own: build a cu12 variant in an environment with a CUDA 12 torch (the listing
says so). PyPI's nvidia-cuda-nvcc-cu12 wheels hold ptxas but no nvcc, so they cannot build one.

Stdlib only (kernel-abi-check for --check-abi): it runs before the package is built, like setup.py.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_ROOT = PACKAGE_DIR.parent


def _load_build():
    """The package's _build.py, loaded without importing the package (which needs the built `_C`)."""
    if __package__:
        from . import _build

        return _build
    spec = importlib.util.spec_from_file_location(f"{PACKAGE_DIR.name}_build", PACKAGE_DIR / "_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _load_build()


@dataclass(frozen=True)
class Variant:
    name: str  # "cpu", "cu13"
    cuda_home: str | None = None  # the toolkit that builds it
    cuda: str | None = None  # its nvcc's version, "13.0"
    skipped: str | None = None  # why it is not built here, if it is not


def toolkits() -> dict[int, tuple[str, str]]:
    """{CUDA major: (toolkit folder, nvcc version)}: for each CUDA major version, the toolkit CUDA_HOME
    names if it is of that version, else the newest found (the nvcc on PATH, /usr/local/cuda*)."""
    nvcc = shutil.which("nvcc")
    candidates = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), build.find_cuda_home()]
    candidates += [str(Path(nvcc).resolve().parent.parent) if nvcc else None]
    candidates += sorted(str(p) for p in Path("/usr/local").glob("cuda*") if p.is_dir())
    found: dict[int, tuple[str, str]] = {}
    chosen_home = str(Path(os.environ["CUDA_HOME"]).resolve()) if os.environ.get("CUDA_HOME") else None
    for home in dict.fromkeys(str(Path(c).resolve()) for c in candidates if c):
        version = build.nvcc_version(home) if build.is_cuda_toolkit(Path(home)) else None
        if version is None:
            continue
        major = build.cuda_major(version)
        chosen = found.get(major)
        if chosen is None or (chosen[0] != chosen_home and _numbers(version) > _numbers(chosen[1])):
            found[major] = (home, version)
    return dict(sorted(found.items()))


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version))


def plan() -> list[Variant]:
    """Every variant: the CPU one, and one per CUDA toolkit found, each built or skipped with why."""
    import torch

    variants = [Variant("cpu")]
    torch_cuda = torch.version.cuda
    for major, (home, version) in toolkits().items():
        name = build.variant_name(version)
        if torch_cuda is None:
            why = f"torch {torch.__version__} has no CUDA: install a CUDA build of torch"
        elif build.cuda_major(torch_cuda) != major:
            why = (
                f"torch {torch.__version__} is built with CUDA {torch_cuda}, and its cpp_extension refuses nvcc "
                f"{version}: run this in an environment with a CUDA {major} torch "
                f"(pip install torch --index-url https://download.pytorch.org/whl/cu{major}<minor>)"
            )
        else:
            why = None
        variants.append(Variant(name, home, version, why))
    return variants


def build_wheel(variant: Variant, out: Path) -> Path:
    """Builds the variant's wheel into `out` (pip wheel, the installed torch) and returns it. The
    project's own _build_info.json (what an editable install loads) is left as it was."""
    env = {**os.environ, "OPGEN_CPU_ONLY": "1" if variant.cuda_home is None else "0"}
    if variant.cuda_home is not None:
        env["CUDA_HOME"] = variant.cuda_home
        env["PATH"] = f"{variant.cuda_home}/bin{os.pathsep}{env.get('PATH', '')}"
    saved = build.BUILD_INFO.read_bytes() if build.BUILD_INFO.is_file() else None
    try:
        with tempfile.TemporaryDirectory() as scratch:
            command = [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w", scratch]
            build.log(f"building the {variant.name} wheel: {' '.join(command)} {PROJECT_ROOT}")
            subprocess.run([*command, str(PROJECT_ROOT)], env=env, check=True)
            (wheel,) = Path(scratch).glob("*.whl")
            out.mkdir(parents=True, exist_ok=True)
            target = out / wheel.name
            shutil.move(str(wheel), target)
    finally:
        if saved is None:
            build.BUILD_INFO.unlink(missing_ok=True)
        else:
            build.BUILD_INFO.write_bytes(saved)
    built = wheel_build_info(target).get("variant")
    if built != variant.name:
        raise SystemExit(f"[{build.PACKAGE}] {target.name} is a {built} build, not {variant.name}: see the log above")
    return target


def wheel_build_info(wheel: Path) -> dict:
    with zipfile.ZipFile(wheel) as archive:
        return json.loads(archive.read(f"{build.PACKAGE}/{build.BUILD_INFO.name}"))


# Hugging Face `kernels`: a kernel repository holds build/<variant>/, each the package's files (flat,
# with __init__.py on top) and a metadata.json; the loader picks the variant that fits the running
# torch, CUDA and machine (kernels.get_local_kernel(path) for a local folder, get_kernel on the Hub).


def kernels_variant_dir(info: dict) -> str:
    """The folder name `kernels` matches against the running torch: torch-stable-abi210-cu130-x86_64-linux
    for a stable binary (any torch >= 2.10), torch215-cxx11-cu130-x86_64-linux for one tied to torch 2.15."""
    backend = "cu" + "".join(info["cuda"].split(".")[:2]) if info.get("cuda") else "cpu"
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(), platform.machine().lower())
    system = platform.system().lower()
    if info["runs_on_torch"].startswith(">="):
        major, minor = info["runs_on_torch"][2:].split(".")[:2]
        return f"torch-stable-abi{major}{minor}-{backend}-{machine}-{system}"
    major, minor = info["built_with_torch"].split(".")[:2]
    return f"torch{major}{minor}-cxx11-{backend}-{machine}-{system}"


def kernel_name() -> str:
    """The kernel's name on the Hub: the package name with '-' for '_' (`kernels` wants ^[a-z][-a-z0-9]*[a-z0-9]$)."""
    name = build.PACKAGE.replace("_", "-")
    if not re.fullmatch(r"[a-z][-a-z0-9]*[a-z0-9]", name):
        raise SystemExit(f"[{build.PACKAGE}] {name!r} is no kernel name for `kernels` (^[a-z][-a-z0-9]*[a-z0-9]$)")
    return name


def _project_metadata(wheel: Path) -> dict[str, str]:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        text = archive.read(name).decode()
    fields: dict[str, str] = {}
    for line in text.split("\n\n")[0].splitlines():
        key, _, value = line.partition(": ")
        fields.setdefault(key, value)
    return fields


def digest(folder: Path) -> dict:
    """metadata.json's digest: the base64 SHA-256 of every file but metadata.json and bytecode, as
    `kernels` computes it to verify a download."""
    files = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder).as_posix()
        if relative == "metadata.json" or "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        files[relative] = base64.b64encode(hashlib.sha256(path.read_bytes()).digest()).decode()
    return {"algorithm": "sha256", "files": files}


COMPAT_INIT = '''"""For `kernels` releases that import build/<variant>/<package>/ rather than build/<variant>/: this
folder stands for the variant's folder, which holds the package."""

from pathlib import Path

__path__ = [str(Path(__file__).resolve().parent.parent)]
_init = Path(__path__[0]) / "__init__.py"
exec(compile(_init.read_text(), str(_init), "exec"))
'''


def write_kernel_variant(wheel: Path, kernels_dir: Path) -> Path:
    """Unpacks the wheel's package into kernels_dir/build/<variant>/ (replacing what was there) with the
    metadata.json `kernels` reads, and returns that folder."""
    info = wheel_build_info(wheel)
    folder = kernels_dir / "build" / kernels_variant_dir(info)
    if folder.exists():
        shutil.rmtree(folder)
    prefix = f"{build.PACKAGE}/"
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if member.startswith(prefix) and not member.endswith("/"):
                target = folder / member[len(prefix) :]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(archive.read(member))
                if member.endswith(".so"):
                    target.chmod(0o755)
    compat = folder / build.PACKAGE / "__init__.py"
    compat.parent.mkdir()
    compat.write_text(COMPAT_INIT)
    project = _project_metadata(wheel)
    files = digest(folder)
    content_hash = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()[:7]
    backend = "cuda" if info.get("cuda") else "cpu"
    metadata = {
        "name": kernel_name(),
        # Unique to this build; the ops themselves register as torch.ops.<namespace> (fixed by the
        # project), so one process loads one build of the project.
        "id": f"_{build.PACKAGE}_{backend}_{content_hash}",
        # The kernel version is the project version's major number (0: alpha, kernels' convention).
        "version": int(project["Version"].split(".")[0]),
        "license": project.get("License-Expression") or project.get("License") or "NOASSERTION",
        "python-depends": [],
        "backend": {"type": backend, **({"archs": _archs(info)} if backend == "cuda" else {})},
        "digest": files,
    }
    (folder / "metadata.json").write_text(json.dumps(metadata, indent=2) + "\n")
    return folder


def _archs(info: dict) -> list[str]:
    return sorted(a for a in re.split(r"[ ;,]+", info.get("cuda_arch_list") or "") if a)


def check_abi(library: Path, python_abi: str = "3.10", manylinux: str = "manylinux_2_28") -> list[str]:
    """kernel-abi-check's findings on a built library (what kernel-builder checks): symbols outside
    Python's stable ABI of `python_abi` (the abi3 wheel's floor) and ones newer than `manylinux` allows."""
    import kernel_abi_check

    binary = kernel_abi_check.ObjectFile(str(library))
    found = [f"Python ABI {python_abi}: {v!r}" for v in binary.check_python_abi(python_abi)]
    found += [f"{manylinux}: {v.name} needs {v.dep} {v.version}" for v in binary.check_manylinux(manylinux)]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], prog=f"python {build.PACKAGE}/_variants.py")
    parser.add_argument("--out", type=Path, default=PROJECT_ROOT / "dist", help="where the wheels go (default dist/)")
    parser.add_argument("--kernels-dir", type=Path, help="where build/<variant>/ goes (default <out>/kernels)")
    parser.add_argument("--variants", help="comma-separated: only these (cpu,cu13); default: all buildable here")
    parser.add_argument("--list", action="store_true", help="list the variants and exit")
    parser.add_argument("--check-abi", action="store_true", help="kernel-abi-check each library; fail on findings")
    parser.add_argument("--manylinux", default="manylinux_2_28", help="policy for --check-abi (kernel-builder's)")
    args = parser.parse_args(argv)
    variants = plan()
    if args.list:
        for v in variants:
            where = f" (nvcc {v.cuda} in {v.cuda_home})" if v.cuda_home else ""
            print(f"{v.name:6s} {'skipped: ' + v.skipped if v.skipped else 'builds'}{where}")
        return 0
    if args.variants:
        wanted = [name.strip() for name in args.variants.split(",") if name.strip()]
        unknown = sorted(set(wanted) - {v.name for v in variants})
        if unknown:
            raise SystemExit(f"[{build.PACKAGE}] no toolkit here for {', '.join(unknown)} (--list shows what is)")
        variants = [v for v in variants if v.name in wanted]
        skipped = [f"{v.name}: {v.skipped}" for v in variants if v.skipped]
        if skipped:
            raise SystemExit(f"[{build.PACKAGE}] cannot build " + "; ".join(skipped))
    kernels_dir = args.kernels_dir or args.out / "kernels"
    problems = []
    for variant in variants:
        if variant.skipped:
            build.log(f"{variant.name} skipped: {variant.skipped}")
            continue
        wheel = build_wheel(variant, args.out)
        folder = write_kernel_variant(wheel, kernels_dir)
        build.log(f"{variant.name}: {wheel} and {folder}")
        if args.check_abi:
            for library in sorted(folder.glob("*.so")):
                findings = check_abi(library, manylinux=args.manylinux)
                build.log(f"kernel-abi-check {library.name}: {'; '.join(findings) or 'no findings'}")
                problems += findings
    return 1 if problems else 0


if __name__ == "__main__":
    # Run as a file, its folder comes first on sys.path, where the package's ops/ and jit.py could
    # shadow modules that torch imports.
    sys.path = [p for p in sys.path if Path(p or ".").resolve() != PACKAGE_DIR]
    sys.exit(main())
