"""What to compile and how: shared by setup.py and the JIT loader (jit.py).

Stdlib only at import time, so setup.py can load this file without importing the package.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

PACKAGE = "opgen_examples"
PROJECT_ROOT = Path(__file__).resolve().parent.parent
CSRC = PROJECT_ROOT / "csrc"
# What the installed `_C` was built with, written by setup.py and checked on import (_extension.py).
BUILD_INFO = Path(__file__).resolve().parent / "_build_info.json"
# Used when TORCH_CUDA_ARCH_LIST is not set in the environment.
DEFAULT_CUDA_ARCH_LIST = "9.0a"

# "stable": the LibTorch stable ABI, one abi3 binary for every torch from MIN_STABLE_TORCH on.
# "aten": the full ATen C++ API, a binary tied to the torch it was built with.
TORCH_API = "stable"
MIN_STABLE_TORCH = (2, 10)


def _stable_flags() -> list[str]:
    major, minor = MIN_STABLE_TORCH
    # Build against any newer torch's headers, but use only what MIN_STABLE_TORCH already had.
    target = f"0x{major:02x}{minor:02x}000000000000"
    return ["-DOPGEN_STABLE_API", f"-DTORCH_TARGET_VERSION={target}"]


API_FLAGS = _stable_flags() if TORCH_API == "stable" else []


NAMESPACE = "examples"
PACKAGE_DIR = Path(__file__).resolve().parent
# Where the build writes the C++ glue it derives from each op's declaration (never edited by hand).
DERIVED = PROJECT_ROOT / "build" / "opgen"


def derivation():
    """The package's _opgen (declarations, schema, op model, glue templates), its modules loaded. Loaded
    from its folder when this file runs outside the package (setup.py, CMake), which must not import
    the package."""
    if __package__:
        name = f"{__package__}._opgen"
    else:
        name = f"_{PACKAGE}_opgen_{abs(hash(str(PACKAGE_DIR)))}"  # one per project: tools load several
        if name not in sys.modules:
            folder = PACKAGE_DIR / "_opgen"
            spec = importlib.util.spec_from_file_location(
                name, folder / "__init__.py", submodule_search_locations=[str(folder)]
            )
            sys.modules[name] = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(sys.modules[name])
    for part in ("errors", "schema", "model", "declaration", "cpp"):
        importlib.import_module(f"{name}.{part}")
    return sys.modules[name]


@functools.cache  # read once a process: a build or an import asks for it for every op
def declared_ops() -> dict:
    """{op: declaration} of the ops whose glue is derived: `declare(...)` in <package>/ops/<op>.py."""
    return derivation().declaration.find(PACKAGE_DIR / "ops")


@functools.cache  # rendered once a process (the build asks for an op's sources several times)
def _derived_glue(op: str) -> dict:
    """{file name: path} of a declared op's glue, written into build/opgen/<op>/ where its text changed."""
    aten = any(ATEN_OPT_IN in p.read_text(errors="replace") for p in _own_sources(op, with_cuda=True))
    return derivation().cpp.write(declared_ops()[op], PACKAGE, NAMESPACE, DERIVED / op, aten)


def triton_ops() -> list[str]:
    """The declared ops whose kernels are Triton's (declare(triton=...)): nothing of theirs is compiled here."""
    return sorted(op for op, declaration in declared_ops().items() if declaration.triton)


def own_glue_ops() -> list[str]:
    """Ops that write their own registration and host code: csrc/<op>/<op>.cpp (blank ops, hand-tuned ones)."""
    if not CSRC.is_dir():
        return []
    return sorted(d.name for d in CSRC.iterdir() if (d / f"{d.name}.cpp").is_file())


def op_names() -> list[str]:
    """Every op: each declared one and each csrc/<op>/<op>.cpp, found without a hand-kept list."""
    return sorted(set(declared_ops()) | set(own_glue_ops()))


def op_dependencies(op: str) -> list[str]:
    """The other ops `op` calls, found in its sources and its Python module: `torch.ops.<ns>.<name>`
    or a dispatcher name "<ns>::<name>" (<name>_backward and <name>_out count as <name>)."""
    texts = [p.read_text(errors="replace") for p in op_sources(op, with_cuda=True)]
    module = PACKAGE_DIR / "ops" / f"{op}.py"
    if module.is_file():
        texts.append(module.read_text(errors="replace"))
    pattern = re.compile(rf"(?:torch\.ops\.{NAMESPACE}\.|\b{NAMESPACE}::)([A-Za-z_][A-Za-z0-9_]*)")
    ops = set(op_names())
    found = set()
    for name in (m.group(1) for text in texts for m in pattern.finditer(text)):
        for suffix in ("", "_backward", "_out"):
            if suffix and name.endswith(suffix):
                name = name[: -len(suffix)]
            if name in ops and name != op:
                found.add(name)
                break
    return sorted(found)


def with_dependencies(selection: list[str]) -> list[str]:
    """selection plus every op it needs, directly or through others, in a stable order."""
    needed, todo = [], list(selection)
    while todo:
        op = todo.pop(0)
        if op not in needed:
            needed.append(op)
            todo += op_dependencies(op)
    return needed


def _own_sources(op: str, with_cuda: bool) -> list[Path]:
    patterns = ["*.cpp", "*.cu"] if with_cuda else ["*.cpp"]
    return sorted(p for pattern in patterns for p in (CSRC / op).glob(pattern))


def op_sources(op: str, with_cuda: bool) -> list[Path]:
    """The op's sources: its own .cpp (and .cu) files in csrc/<op>/ and the glue derived from its
    declaration (written into build/opgen/<op>/ now, where its text changed). An elementwise or
    reduction op with its own <op>.cpp was ejected: it owns all of its glue."""
    folder = CSRC / op
    own = _own_sources(op, with_cuda)
    declaration = declared_ops().get(op)
    if declaration is None:
        if not (folder / f"{op}.cpp").is_file():
            raise FileNotFoundError(f"no op named {op!r}: {folder / (op + '.cpp')} does not exist")
        return own
    if declaration.triton:
        return []  # its kernels are Triton's, compiled when first called
    derived = _derived_glue(op)
    if declaration.kind == "custom":
        if not own:
            raise FileNotFoundError(
                f"{declaration.where} declares the custom op {op!r}, whose host functions should be in {folder}/*.cpp"
            )
        return [derived[f"{op}_registration.cpp"], *own]
    variants = [derived[f"{op}_registration.cpp"]] if declaration.variants else []
    if (folder / f"{op}.cpp").is_file():  # ejected
        return variants + own
    if not (folder / f"{op}.h").is_file():
        raise FileNotFoundError(f"{declaration.where} declares {op!r}, whose math should be in {folder / (op + '.h')}")
    return [derived[f"{op}.cpp"], *([derived[f"{op}_cuda.cu"]] if with_cuda else []), *variants, *own]


# A source whose first include is this uses the full ATen C++ API even in a "stable" project (for
# what the stable ABI lacks: C++ autograd, ATen's cuBLAS helpers, ...). Such a build still works,
# but its binary is tied to the torch it was built with, like an "aten" project's.
ATEN_OPT_IN = '#include "common/use_aten.h"'


def ops_using_aten() -> list[str]:
    """The ops built with the full ATen API: every op in an "aten" project, else those that opt in."""
    if TORCH_API == "aten":
        return op_names()
    return [
        op
        for op in op_names()
        if any(ATEN_OPT_IN in p.read_text(errors="replace") for p in op_sources(op, with_cuda=True))
    ]


def stable_binary() -> bool:
    """Whether `_C` uses only the stable ABI: one abi3 binary for every torch >= MIN_STABLE_TORCH."""
    return TORCH_API == "stable" and not ops_using_aten()


def extension_sources(with_cuda: bool) -> list[Path]:
    """All sources of the one extension `<package>._C`: the module stub plus every op."""
    sources = [CSRC / "python_module.cpp"]
    for op in op_names():
        sources += op_sources(op, with_cuda)
    return sources


def find_cuda_home() -> str | None:
    """CUDA_HOME, or the toolkit that the nvcc on PATH belongs to (wrappers and symlinks resolved)."""
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            return os.environ[var]
    candidates = []
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(Path(nvcc).resolve().parent.parent)
    candidates.append(Path("/usr/local/cuda"))
    for home in candidates:
        if is_cuda_toolkit(home):
            return str(home)
    return None


def is_cuda_toolkit(home: Path) -> bool:
    """Whether `home` holds a CUDA toolkit that can compile .cu files (nvcc and the runtime headers)."""
    return (home / "bin" / "nvcc").is_file() and (home / "include" / "cuda_runtime.h").is_file()


def cuda_build_enabled() -> bool:
    """Build the .cu files when torch was built with CUDA and a CUDA toolkit is found.

    OPGEN_CPU_ONLY=1 forces the CPU-only build. Sets CUDA_HOME for torch.utils.cpp_extension,
    so call this before importing that module.
    """
    if os.environ.get("OPGEN_CPU_ONLY", "0") not in ("", "0"):
        return False
    import torch

    if torch.version.cuda is None:
        return False
    cuda_home = find_cuda_home()
    if cuda_home is None:
        return False
    os.environ.setdefault("CUDA_HOME", cuda_home)
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", DEFAULT_CUDA_ARCH_LIST)
    return True


def nvcc_version(cuda_home: str | None = None) -> str | None:
    """The CUDA version ("13.0") of the toolkit's nvcc (CUDA_HOME, else the one found), or None. Not
    torch.version.cuda: the kernels are compiled by this nvcc and link its CUDA runtime."""
    home = cuda_home or os.environ.get("CUDA_HOME") or find_cuda_home()
    if home is None:
        return None
    try:
        text = subprocess.run([str(Path(home) / "bin" / "nvcc"), "--version"], capture_output=True, text=True).stdout
    except OSError:
        return None
    match = re.search(r"release (\d+)\.(\d+)", text)
    return f"{match[1]}.{match[2]}" if match else None


def cuda_major(version: str) -> int:
    """13 from "13.0" (torch.version.cuda, a build's CUDA)."""
    return int(str(version).split(".")[0])


def variant_name(cuda: str | None) -> str:
    """The build's variant: "cpu", or "cu" and the CUDA major version of its nvcc ("cu13"). A CUDA
    binary needs a torch built for the same CUDA major (it links that CUDA runtime, libcudart.so.13)."""
    return f"cu{cuda_major(cuda)}" if cuda else "cpu"


def local_version(cuda: str | None, torch_version: str | None = None) -> str:
    """The PEP 440 local version label of the build's wheel (0.1.0+cu13): its variant, and for a
    binary tied to one torch (the full ATen API) that torch too (cu13.torch215)."""
    label = variant_name(cuda)
    if not stable_binary():
        if torch_version is None:
            import torch

            torch_version = torch.__version__
        major, minor = re.findall(r"\d+", torch_version)[:2]
        label += f".torch{major}{minor}"
    return label


def cuda_library_include_dirs() -> list[str]:
    """Headers of the CUDA libraries that pip-installed torch depends on (cuBLAS, cuSPARSE, ...), then
    CUTLASS's and CuTe's where the nvidia-cutlass package is installed (cutlass_include_dirs()).

    ATen's CUDA headers include them; a system nvcc without those libraries finds them here.
    """
    site = Path(sysconfig.get_paths()["purelib"]) / "nvidia"
    found = [site / "cu13" / "include"] + sorted(site.glob("*/include")) + cutlass_include_dirs()
    return [str(d) for d in dict.fromkeys(found) if d.is_dir()]


def cutlass_include_dirs() -> list[Path]:
    """CUTLASS and CuTe (cutlass/..., cute/...) and CUTLASS's utilities (cutlass/util/...), from the
    nvidia-cutlass package (`pip install --no-deps nvidia-cutlass`: the headers are all a build needs)
    where it is installed.
    A kernel that uses them tests `__has_include(<cutlass/cutlass.h>)`."""
    spec = importlib.util.find_spec("cutlass_library")
    if spec is None or not spec.submodule_search_locations:
        return []
    source = Path(list(spec.submodule_search_locations)[0]) / "source"
    return [d for d in (source / "include", source / "tools" / "util" / "include") if d.is_dir()]


def include_dirs() -> list[str]:
    return [str(CSRC)]


def compile_flags(with_cuda: bool) -> dict[str, list[str]]:
    """Extra flags for g++ ("cxx") and nvcc ("nvcc"); torch.utils.cpp_extension adds the C++ standard
    its headers need.

    The CUDA libraries' headers come last (-isystem, after the toolkit's own -I): pip's CUDA
    runtime may be newer than the nvcc that compiles, and its cuda_runtime.h must not shadow the
    toolkit's (nvcc refuses a mismatched pair).

    OPGEN_CXX_FLAGS and OPGEN_NVCC_FLAGS add flags of your own (e.g. OPGEN_NVCC_FLAGS="-DMY_TILE=64
    -Xptxas -v"). They go on each compile's command line, where a compiler cache sees them: torch puts
    ccache in front of nvcc where it is installed, and ccache does not read nvcc's NVCC_APPEND_FLAGS,
    so builds differing only there share (stale) objects."""
    after_toolkit = [flag for d in cuda_library_include_dirs() for flag in ("-isystem", d)] if with_cuda else []
    # OPGEN_WITH_CUDA: the ops' .cpp files register CUDA kernels and call into their .cu files.
    cuda = ["-DOPGEN_WITH_CUDA", *after_toolkit] if with_cuda else []
    return {
        "cxx": ["-O3", *API_FLAGS, *cuda, *user_flags("OPGEN_CXX_FLAGS")],
        "nvcc": ["-O3", "--expt-relaxed-constexpr", "-lineinfo", *API_FLAGS, *cuda, *user_flags("OPGEN_NVCC_FLAGS")],
    }


def user_flags(variable: str) -> list[str]:
    """The flags in environment variable `variable`, split as a shell would."""
    return shlex.split(os.environ.get(variable, ""))


def write_build_info(with_cuda: bool, path: Path = BUILD_INFO, cuda_arch_list: str | None = None) -> dict:
    """Writes what the build is made with beside `_C` (`_extension.build_info()` reads it); returns it."""
    import torch

    built_with = torch.__version__.split("+")[0]
    cuda = nvcc_version() if with_cuda else None
    info = {
        "torch_api": TORCH_API,
        "ops_using_aten": ops_using_aten(),
        "built_with_torch": built_with,
        "runs_on_torch": f">={MIN_STABLE_TORCH[0]}.{MIN_STABLE_TORCH[1]}" if stable_binary() else f"=={built_with}",
        # The CUDA version the kernels were compiled with (nvcc's, "13.0"), None for a CPU-only build;
        # variant: "cpu" or "cu13", the label of the wheel's version (0.1.0+cu13).
        "cuda": cuda,
        "variant": variant_name(cuda),
        "cuda_arch_list": (cuda_arch_list or os.environ.get("TORCH_CUDA_ARCH_LIST")) if with_cuda else None,
        # Whether CUTLASS's headers were on the include path (the nvidia-cutlass package).
        "cutlass": with_cuda and bool(cutlass_include_dirs()),
        "ops": op_names(),
    }
    path.write_text(json.dumps(info, indent=2) + "\n")
    return info


def log(message: str) -> None:
    print(f"[{PACKAGE}] {message}", file=sys.stderr)


# CMake: CMakeLists.txt runs `python <package>/_build.py cmake <build folder>` and includes what it
# writes, so the CMake build compiles the same sources with the same flags as setup.py.

PY_LIMITED_API = "0x030A0000"  # CPython 3.10, the cp310-abi3 tag of setup.py's stable wheel


def cmake_cuda_architectures(arch_list: str) -> str:
    """TORCH_CUDA_ARCH_LIST in CMake's terms: "8.0;9.0+PTX" -> "80-real;90" (+PTX: the PTX as well)."""
    archs = []
    for entry in arch_list.replace(" ", ";").split(";"):
        match = re.fullmatch(r"(\d+)\.(\d+)([a-z]?)(\+PTX)?", entry.strip())
        if entry.strip() and not match:
            raise ValueError(
                f"TORCH_CUDA_ARCH_LIST entry {entry!r} is not like 9.0 or 9.0+PTX: "
                "set it so, or pass -DCMAKE_CUDA_ARCHITECTURES"
            )
        if match:
            archs.append(f"{match[1]}{match[2]}{match[3]}" + ("" if match[4] else "-real"))
    return ";".join(archs)


def cmake_config(cpu_only: bool = False, cuda_architectures: str | None = None) -> dict[str, object]:
    """What CMakeLists.txt needs: the sources and flags of setup.py, and torch's paths."""
    with_cuda = not cpu_only and cuda_build_enabled()  # before cpp_extension is imported, as in setup.py
    import torch
    from torch.utils import cpp_extension

    stable = stable_binary()
    version = tuple(int(n) for n in re.findall(r"\d+", torch.__version__)[:2])
    arch_list = os.environ.get("TORCH_CUDA_ARCH_LIST", DEFAULT_CUDA_ARCH_LIST)
    # What torch.utils.cpp_extension adds to every extension (and Py_LIMITED_API to an abi3 one).
    defines = [
        "TORCH_API_INCLUDE_EXTENSION_H",
        "TORCH_EXTENSION_NAME=_C",
        f"_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}",
    ]
    flags = compile_flags(with_cuda=False)  # the CUDA library headers go to CUDA_LIBRARY_INCLUDE_DIRS
    return {
        "PACKAGE": PACKAGE,
        "TORCH_API": TORCH_API,
        "STABLE_BINARY": stable,
        "OPS": op_names(),
        "SOURCES": [str(p) for p in extension_sources(with_cuda)],
        # Folders whose entries decide the sources: a new op or file there re-runs the configure step.
        # So do the op modules (their declarations) and the templates the glue is derived from.
        "CONFIGURE_DEPENDS": [
            str(CSRC),
            *(str(d) for d in sorted(CSRC.iterdir()) if d.is_dir()),
            str(PACKAGE_DIR / "ops"),
            *(str(p) for p in sorted((PACKAGE_DIR / "ops").glob("*.py"))),
            *(
                str(p)
                for p in sorted((PACKAGE_DIR / "_opgen").rglob("*"))
                if p.is_file() and "__pycache__" not in p.parts
            ),
            __file__,
        ],
        "INCLUDE_DIRS": include_dirs(),
        # OPGEN_WITH_CUDA: the ops' .cpp files register their CUDA kernels (as compile_flags says).
        "DEFINES": defines
        + ([f"Py_LIMITED_API={PY_LIMITED_API}"] if stable else [])
        + (["OPGEN_WITH_CUDA"] if with_cuda else []),
        "CXX_FLAGS": flags["cxx"],
        "CUDA_FLAGS": cpp_extension.COMMON_NVCC_FLAGS + flags["nvcc"],
        # cpp_extension compiles with C++20 from torch 2.13 on (and torch 2.15's headers need it), C++17 before.
        "CXX_STANDARD": 20 if version >= (2, 13) else 17,
        "LIBRARY_SUFFIX": ".abi3.so" if stable else sysconfig.get_config_var("EXT_SUFFIX"),
        "PYTHON_INCLUDE_DIR": sysconfig.get_paths()["include"],
        "TORCH_VERSION": torch.__version__,
        "TORCH_CMAKE_PREFIX_PATH": torch.utils.cmake_prefix_path,
        "TORCH_INCLUDE_DIRS": cpp_extension.include_paths(),
        "TORCH_LIBRARY_DIR": cpp_extension.library_paths()[0],
        # No libtorch_python: the ops need none of torch's Python bindings (and an abi3 module must not).
        "TORCH_LIBRARIES": ["c10", "torch", "torch_cpu"] + (["c10_cuda", "torch_cuda"] if with_cuda else []),
        "WITH_CUDA": with_cuda,
        "CUDA_HOME": os.environ.get("CUDA_HOME", "") if with_cuda else "",
        "CUDA_ARCHITECTURES": (cuda_architectures or cmake_cuda_architectures(arch_list)) if with_cuda else "",
        "CUDA_LIBRARY_INCLUDE_DIRS": cuda_library_include_dirs() if with_cuda else [],
    }


def _cmake_value(value: object) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    text = ";".join(map(str, value)) if isinstance(value, list) else str(value)
    return '"' + text.replace("\\", "/").replace('"', '\\"').replace("$", "\\$") + '"'


def write_cmake_config(build_dir: Path, cpu_only: bool = False, cuda_architectures: str | None = None) -> None:
    """<build dir>/opgen_config.cmake for CMakeLists.txt, and the `_build_info.json` that the package
    checks before it loads the library from there."""
    config = cmake_config(cpu_only, cuda_architectures)
    build_dir.mkdir(parents=True, exist_ok=True)
    lines = [f"set(OPGEN_{key} {_cmake_value(value)})" for key, value in config.items()]
    (build_dir / "opgen_config.cmake").write_text(
        "# Written by _build.py on each configure.\n" + "\n".join(lines) + "\n"
    )
    write_build_info(config["WITH_CUDA"], build_dir / BUILD_INFO.name, cuda_architectures)
    log(
        f"{'CUDA' if config['WITH_CUDA'] else 'CPU-only'} CMake build ({TORCH_API} torch API) of {len(config['OPS'])} "
        f"op(s): {', '.join(config['OPS']) or '-'}"
    )


if __name__ == "__main__":
    # `python _build.py` puts this package's folder first on sys.path, where its ops/, jit.py and
    # testing.py could shadow modules that torch imports.
    sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    import argparse

    parser = argparse.ArgumentParser(description="Writes what CMakeLists.txt needs into a build folder.")
    parser.add_argument("command", choices=["cmake"])
    parser.add_argument("build_dir", type=Path)
    parser.add_argument("--cpu-only", action="store_true", help="as OPGEN_CPU_ONLY=1")
    parser.add_argument("--cuda-architectures", help="CMAKE_CUDA_ARCHITECTURES given to CMake, if any (80,90)")
    args = parser.parse_args()
    try:
        archs = args.cuda_architectures.replace(",", ";") if args.cuda_architectures else None
        write_cmake_config(args.build_dir.resolve(), args.cpu_only, archs)
    except (ImportError, ValueError) as error:
        sys.exit(f"[{PACKAGE}] {error}")
