"""copier renders template/ into a project that matches its answers, and refuses bad answers."""
import sys
from pathlib import Path

import copier
import pytest
import yaml

from helpers import copy_project, load_module

EXPECTED_FILES = [
    ".copier-answers.yml", ".gitignore", "LICENSE", "README.md", "docs/opgen.md", "pyproject.toml", "setup.py", "CMakeLists.txt",
    ".github/workflows/ci.yml", ".pre-commit-config.yaml", ".clang-format", "csrc/python_module.cpp",
    "csrc/common/checks.h", "csrc/common/cpu_loops.h", "csrc/common/definitions.h",
    "csrc/common/elementwise.cuh", "csrc/common/reduce.cuh", "csrc/common/torch_api.h", "csrc/common/use_aten.h",
    "csrc/common/rowwise.h", "csrc/common/rowwise.cuh", "csrc/common/row_stats.h", "csrc/common/row_probe.h",
    "benchmarks/__init__.py", "benchmarks/__main__.py",
    "benchmarks/harness.py", "benchmarks/report.py", "benchmarks/sweep.py", "benchmarks/targets.py",
    "benchmarks/host.py", "benchmarks/sweep_report.py", "tests/test_opgen_package.py",
    "tests/test_opgen_conformance.py", "tests/opgen_testing.py", "tests/test_opgen_hygiene.py", "conftest.py",
]
PACKAGE_FILES = ["__init__.py", "_build.py", "_extension.py", "_spec.py", "jit.py", "ops/__init__.py"]


def test_defaults_render_a_complete_project(project):
    for path in EXPECTED_FILES + [f"my_ops/{p}" for p in PACKAGE_FILES]:
        assert (project / path).is_file(), path
    assert not list(project.rglob("*.jinja")), "template suffixes left in the output"
    answers = yaml.safe_load((project / ".copier-answers.yml").read_text())
    assert answers["package_name"] == "my_ops" and answers["namespace"] == "my_ops"
    assert answers["cuda_arch_list"] == "9.0"
    assert answers["torch_api"] == "stable"
    assert answers["_commit"] == "v1"


@pytest.mark.parametrize("torch_api", ["stable", "aten"])
def test_torch_api_sets_the_build_the_dependency_and_the_ci_jobs(tmp_path, template_repo, torch_api):
    project = copy_project(template_repo, tmp_path / "p", torch_api=torch_api)
    assert f'TORCH_API = "{torch_api}"' in (project / "my_ops" / "_build.py").read_text()
    dependencies = (project / "pyproject.toml").read_text()
    assert ('"torch>=2.10"' in dependencies) == (torch_api == "stable")
    jobs = yaml.safe_load((project / ".github/workflows/ci.yml").read_text())["jobs"]
    expected = {"lint", "cpu", "cmake", "cuda-compile"} | ({"wheel"} if torch_api == "stable" else set())
    assert set(jobs) == expected
    if torch_api == "stable":  # the CPU variant, built where manylinux_2_28 holds, ABI-checked, tested installed
        steps = "\n".join(step.get("run", "") for step in jobs["wheel"]["steps"])
        assert jobs["wheel"]["container"].startswith("quay.io/pypa/manylinux_2_28")
        assert "my_ops/_variants.py --variants cpu --check-abi" in steps
        assert '"torch==2.10.*" torch' in steps and "python -m pytest --installed" in steps
    guide = (project / "docs/opgen.md").read_text()
    assert ("torch from 2.10 on" in guide) == (torch_api == "stable")


def test_answers_reach_every_file(tmp_path, template_repo):
    project = copy_project(template_repo, tmp_path / "p", project_name="Fast-Kernels", package_name="fastk",
                           namespace="fk", cuda_arch_list="8.0;9.0+PTX", author="Ada", min_python="3.11")
    assert (project / "fastk" / "_build.py").is_file() and not (project / "my_ops").exists()
    build = (project / "fastk" / "_build.py").read_text()
    assert 'PACKAGE = "fastk"' in build and 'DEFAULT_CUDA_ARCH_LIST = "8.0;9.0+PTX"' in build
    pyproject = (project / "pyproject.toml").read_text()
    assert 'name = "Fast-Kernels"' in pyproject and 'requires-python = ">=3.11"' in pyproject and "Ada" in pyproject
    assert "torch.ops.fk" in (project / "README.md").read_text()
    assert "torch.ops.fk" in (project / "docs/opgen.md").read_text()
    assert "fastk._C" in (project / "setup.py").read_text()
    cmakelists = (project / "CMakeLists.txt").read_text()
    assert "project(fastk " in cmakelists and '"${PROJECT_SOURCE_DIR}/fastk/_build.py"' in cmakelists
    assert 'TORCH_CUDA_ARCH_LIST (default "8.0;9.0+PTX")' in cmakelists


def test_package_name_defaults_from_project_name(tmp_path, template_repo):
    project = copy_project(template_repo, tmp_path / "p", project_name="My-Ops.X")
    answers = yaml.safe_load((project / ".copier-answers.yml").read_text())
    assert answers["package_name"] == "my_ops_x"


@pytest.mark.parametrize(
    "answers",
    [
        {"package_name": "1pkg"},
        {"package_name": "My-Pkg"},
        {"package_name": "class"},
        {"package_name": "torch"},
        {"namespace": "aten"},
        {"namespace": "bad-ns"},
        {"cuda_arch_list": "sm_90"},
        {"project_name": "-x"},
        {"copyright_year": "26"},
        {"torch_api": "stable", "min_python": "3.9"},
    ],
)
def test_rejects_invalid_answers(tmp_path, template_repo, answers):
    with pytest.raises(Exception, match="must"):
        copier.run_copy(str(template_repo), str(tmp_path / "p"), data=answers, defaults=True,
                        quiet=True, vcs_ref="HEAD")
    assert not (tmp_path / "p" / "setup.py").exists()


LICENSES = {
    # answer: (SPDX expression in pyproject.toml, phrases the LICENSE file must hold)
    "Apache-2.0": ("Apache-2.0", ["Apache License", "Version 2.0, January 2004", "Copyright 2031 Ada Lovelace",
                                  "END OF TERMS AND CONDITIONS"]),
    "MIT": ("MIT", ["MIT License", "Copyright (c) 2031 Ada Lovelace", "Permission is hereby granted, free of charge"]),
    "BSD-3-Clause": ("BSD-3-Clause", ["BSD 3-Clause License", "Copyright (c) 2031, Ada Lovelace",
                                      "3. Neither the name of the copyright holder"]),
    "Proprietary": ("LicenseRef-Proprietary", ["Copyright (c) 2031 Ada Lovelace. All rights reserved."]),
}


@pytest.mark.parametrize("license", list(LICENSES))
def test_license_file_and_spdx_expression_follow_the_answer(tmp_path, template_repo, license):
    spdx, phrases = LICENSES[license]
    project = copy_project(template_repo, tmp_path / "p", license=license, author="Ada Lovelace",
                           copyright_year="2031")
    text = (project / "LICENSE").read_text()
    for phrase in phrases:
        assert phrase in text, (license, phrase)
    for other, (_, other_phrases) in LICENSES.items():
        if other != license:
            assert other_phrases[0] not in text, (license, other)
    assert "{{" not in text and "{%" not in text and "[yyyy]" not in text
    assert text.endswith(".\n") and not text.endswith("\n\n")

    # PEP 639: an SPDX string and the license file, as setuptools (>= 77) reads them.
    setuptools = pytest.importorskip("setuptools")
    from packaging.version import Version
    from setuptools.config.pyprojecttoml import read_configuration

    project_table = read_configuration(project / "pyproject.toml")["project"]
    assert project_table["license"] == spdx
    assert project_table["license-files"] == ["LICENSE"]
    if Version(setuptools.__version__) >= Version("77.0.3"):
        from setuptools.config.pyprojecttoml import apply_configuration
        from setuptools.dist import Distribution

        dist = apply_configuration(Distribution({"src_root": str(project)}), project / "pyproject.toml")
        assert dist.metadata.license_expression == spdx
        assert [Path(f).name for f in dist.metadata.license_files] == ["LICENSE"]


def test_copyright_year_defaults_to_this_year(project):
    import datetime

    answers = yaml.safe_load((project / ".copier-answers.yml").read_text())
    assert answers["copyright_year"] == str(datetime.date.today().year)
    assert f"Copyright {answers['copyright_year']} Your Name" in (project / "LICENSE").read_text()


def test_cuda_arch_list_in_cmake_terms(tmp_path, template_repo):
    """CMakeLists.txt takes the architectures from _build.py: TORCH_CUDA_ARCH_LIST's meaning, CMake's words."""
    project = copy_project(template_repo, tmp_path / "p")
    build = load_module(project / "my_ops" / "_build.py", "p_build")
    assert build.cmake_cuda_architectures("9.0") == "90-real"  # SASS only, as -gencode arch=compute_90,code=sm_90
    assert build.cmake_cuda_architectures("8.0;9.0+PTX") == "80-real;90"  # +PTX: the PTX as well
    assert build.cmake_cuda_architectures("8.6 9.0a") == "86-real;90a-real"
    with pytest.raises(ValueError, match="CMAKE_CUDA_ARCHITECTURES"):
        build.cmake_cuda_architectures("Hopper")


def test_cutlass_headers_are_found_where_the_package_is_installed(tmp_path, template_repo, monkeypatch):
    """nvidia-cutlass's headers (CUTLASS, CuTe, CUTLASS's utilities) join the CUDA libraries' include
    directories where the package is installed; nothing where it is not."""
    project = copy_project(template_repo, tmp_path / "p")
    build = load_module(project / "my_ops" / "_build.py", "p_build")
    fake = tmp_path / "site" / "cutlass_library"
    for sub in ("include/cutlass", "include/cute", "tools/util/include/cutlass/util"):
        (fake / "source" / sub).mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    import importlib

    importlib.invalidate_caches()
    monkeypatch.delitem(sys.modules, "cutlass_library", raising=False)
    expected = [fake / "source" / "include", fake / "source" / "tools" / "util" / "include"]
    assert build.cutlass_include_dirs() == expected
    assert build.cuda_library_include_dirs()[-2:] == [str(d) for d in expected]
    monkeypatch.setattr(build.importlib.util, "find_spec", lambda name: None)
    assert build.cutlass_include_dirs() == []
    assert not any("cutlass_library" in d for d in build.cuda_library_include_dirs())


def test_flags_of_the_users_own_reach_each_compiler(tmp_path, template_repo, monkeypatch):
    """OPGEN_CXX_FLAGS / OPGEN_NVCC_FLAGS land on the compile lines (where a compiler cache sees them)."""
    project = copy_project(template_repo, tmp_path / "p")
    build = load_module(project / "my_ops" / "_build.py", "p_build")
    monkeypatch.setenv("OPGEN_NVCC_FLAGS", "-DMY_TILE=64 -Xptxas '-v'")
    monkeypatch.setenv("OPGEN_CXX_FLAGS", "-DMY_CPU=1")
    flags = build.compile_flags(with_cuda=False)
    assert flags["nvcc"][-3:] == ["-DMY_TILE=64", "-Xptxas", "-v"] and flags["cxx"][-1] == "-DMY_CPU=1"
    monkeypatch.delenv("OPGEN_NVCC_FLAGS")
    monkeypatch.delenv("OPGEN_CXX_FLAGS")
    assert build.compile_flags(with_cuda=False) == {"cxx": ["-O3", *build.API_FLAGS],
                                                   "nvcc": ["-O3", "--expt-relaxed-constexpr", "-lineinfo",
                                                            *build.API_FLAGS]}
