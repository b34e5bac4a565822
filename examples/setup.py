"""Builds opgen_examples._C: every op under csrc/, with CUDA when torch and nvcc allow it.

    pip install --no-build-isolation -e .
    pip wheel --no-build-isolation --no-deps -w dist .    # a wheel (abi3 with torch_api "stable")
    python opgen_examples/_variants.py                 # a wheel of every variant buildable here (CPU, CUDA 13, ...)

The wheel's version is pyproject.toml's plus the build's variant as a local label: 0.1.0+cpu, 0.1.0+cu13.

Environment: TORCH_CUDA_ARCH_LIST (default "9.0a"), MAX_JOBS (parallel compile
jobs), OPGEN_CPU_ONLY=1 (skip the .cu files), CUDA_HOME.
"""

import importlib.util
import sys
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.dist import Distribution

ROOT = Path(__file__).resolve().parent


def _load_build_config():
    path = ROOT / "opgen_examples" / "_build.py"
    spec = importlib.util.spec_from_file_location("opgen_examples_build", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _load_build_config()
with_cuda = build.cuda_build_enabled()  # before importing cpp_extension: it reads CUDA_HOME once

from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension  # noqa: E402

Extension = CUDAExtension if with_cuda else CppExtension
sources = [str(p.relative_to(ROOT)) for p in build.extension_sources(with_cuda)]
stable = build.stable_binary()
build.log(
    f"{'CUDA' if with_cuda else 'CPU-only'} build ({build.TORCH_API} torch API) of {len(build.op_names())} "
    f"op(s): {', '.join(build.op_names()) or '-'}"
)
if build.TORCH_API == "stable" and not stable:
    build.log(f"ops on the full ATen API ({', '.join(build.ops_using_aten())}): the binary fits only this torch")
info = build.write_build_info(with_cuda)
label = build.local_version(info["cuda"])  # the wheel's version label: "cpu", "cu13" (aten: "cu13.torch215")


class IncrementalBuildExtension(BuildExtension):
    """Keeps the object files in build/ between builds. pip install -e compiles in a new temporary
    folder every time; in a fixed one, ninja recompiles only the sources (or headers) that changed."""

    def finalize_options(self):
        super().finalize_options()
        self.build_temp = str(ROOT / "build" / f"temp-{info['variant']}-{sys.implementation.cache_tag}")


class VariantDistribution(Distribution):
    """Appends the variant to pyproject.toml's version as a PEP 440 local label (0.1.0+cu13), so each
    variant's wheel has a name of its own (the CPU and CUDA wheels' tags are the same)."""

    def parse_config_files(self, *args, **kwargs):
        super().parse_config_files(*args, **kwargs)
        self.metadata.version = f"{self.metadata.version}+{label}"


extension = Extension(
    name="opgen_examples._C",
    sources=sources,
    include_dirs=build.include_dirs(),
    extra_compile_args=build.compile_flags(with_cuda) if with_cuda else {"cxx": build.compile_flags(False)["cxx"]},
    # stable: only Python's limited API and torch's stable C ABI, so one wheel (tag abi3) serves every
    # CPython >= 3.10 and every torch >= the stable target.
    py_limited_api=stable,
)

setup(
    packages=find_packages(include=["opgen_examples", "opgen_examples.*"]),
    package_data={"opgen_examples": [build.BUILD_INFO.name, "tuned/*.json"]},  # tuned: Triton configs
    ext_modules=[extension],
    cmdclass={"build_ext": IncrementalBuildExtension},
    distclass=VariantDistribution,
    options={
        # A build/lib per variant: in a shared one, a CUDA `_C` left by an earlier build is newer than the
        # sources, and the next CPU-only wheel would ship it.
        "build": {"build_lib": str(ROOT / "build" / f"lib-{label}-{sys.implementation.cache_tag}")},
        **({"bdist_wheel": {"py_limited_api": "cp310"}} if stable else {}),
    },
    zip_safe=False,
)
