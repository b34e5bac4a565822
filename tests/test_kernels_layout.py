"""The `build/` folder that `python <package>/_variants.py` writes beside the wheels is one that
Hugging Face's `kernels` library loads: build/<variant>/ named as `kernels` matches it against the
running torch (torch-stable-abi210-cpu-x86_64-linux, torch-stable-abi210-cu130-x86_64-linux), with
the metadata.json and digest it reads; and its libraries pass kernel-abi-check's Python ABI check.

The builds are the ones tests/test_variants.py checks (the session fixture `variants_build`).
"""
from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

import pytest

from helpers import cuda_build_expected, load_module, run

pytestmark = pytest.mark.slow
pytest.importorskip("kernels")
PACKAGE = "var_ops"
CPU_DIR = f"torch-stable-abi210-cpu-{platform.machine()}-linux"
CUDA_DIR = f"torch-stable-abi210-cu130-{platform.machine()}-linux"


def cuda_variant_built() -> bool:
    import torch

    return cuda_build_expected() and (torch.version.cuda or "").startswith("13.")


def kernels_python(code: str, *args: str, cwd: Path) -> dict:
    """Runs `code` in a fresh interpreter (one build of the ops a process) and returns what it prints."""
    result = run([sys.executable, "-c", code, *args], cwd=cwd, env={"HF_HUB_OFFLINE": "1"})
    return json.loads(result.stdout.strip().splitlines()[-1])


LOAD = """
import json, sys, torch
from pathlib import Path
from kernels import get_local_kernel

kernel = get_local_kernel(Path(sys.argv[1]), backend=sys.argv[2] or None)
x = torch.linspace(-4, 4, 101, dtype=torch.float64)
reference = sys.modules[kernel.__name__ + ".ops.gelu_approx"].reference
torch.testing.assert_close(kernel.gelu_approx(x), reference(x))
print(json.dumps({"file": kernel.__file__, "name": kernel.__name__, "info": kernel._extension.build_info(),
                  "all": kernel.__all__}))
"""


def test_layout_and_metadata(variants_build):
    _, dist, _ = variants_build
    build = dist / "kernels" / "build"
    expected = {CPU_DIR} | ({CUDA_DIR} if cuda_variant_built() else set())
    assert {p.name for p in build.iterdir()} == expected
    for folder in build.iterdir():
        metadata = json.loads((folder / "metadata.json").read_text())
        cuda = folder.name == CUDA_DIR
        assert metadata["name"] == "var-ops" and metadata["version"] == 0 and metadata["license"] == "Apache-2.0"
        assert metadata["id"].startswith(f"_{PACKAGE}_{'cuda' if cuda else 'cpu'}_")
        assert metadata["backend"] == ({"type": "cuda", "archs": ["9.0"]} if cuda else {"type": "cpu"})
        assert (folder / "__init__.py").is_file() and (folder / "_C.abi3.so").is_file()
        assert (folder / PACKAGE / "__init__.py").is_file()  # what older `kernels` releases import


def test_kernels_loads_the_cpu_variant_and_its_digest_holds(variants_build, tmp_path):
    _, dist, _ = variants_build
    loaded = kernels_python(LOAD, str(dist / "kernels"), "cpu", cwd=tmp_path)
    assert Path(loaded["file"]).parent.name == CPU_DIR, loaded
    assert loaded["info"]["variant"] == "cpu" and loaded["all"] == ["gelu_approx"]
    print("kernels.get_local_kernel(backend='cpu'):", loaded["name"], "from", Path(loaded["file"]).parent.name)
    # kernels' own digest of the folder matches the one metadata.json records.
    check = ("import json, sys\nfrom kernels._rust import Digest, Metadata\nfiles = {}\n"
             "for folder in sys.argv[1:]:\n"
             "    m = Metadata.read_from_file(folder + '/metadata.json')\n"
             "    m.digest.validate(Digest.hash_variant(m.digest.algorithm, folder))\n"
             "    files[folder] = len(m.digest.files)\n"
             "print(json.dumps(files))\n")
    folders = [str(p) for p in (dist / "kernels" / "build").iterdir()]
    checked = kernels_python(check, *folders, cwd=tmp_path)
    assert sorted(checked) == sorted(folders) and min(checked.values()) > 10, checked


def test_the_folder_older_kernels_import_loads_the_same_package(variants_build, tmp_path):
    _, dist, _ = variants_build
    code = ("import importlib.util, json, sys, torch\n"
            "spec = importlib.util.spec_from_file_location('old_kernels_name', sys.argv[1])\n"
            "m = importlib.util.module_from_spec(spec); sys.modules[spec.name] = m; spec.loader.exec_module(m)\n"
            "y = m.gelu_approx(torch.zeros(3))\n"
            "print(json.dumps({'variant': m._extension.build_info()['variant'], 'y': y.tolist()}))\n")
    loaded = kernels_python(code, str(dist / "kernels" / "build" / CPU_DIR / PACKAGE / "__init__.py"), cwd=tmp_path)
    assert loaded == {"variant": "cpu", "y": [0.0, 0.0, 0.0]}


@pytest.mark.skipif(not cuda_variant_built(), reason="no CUDA 13 variant here (torch with CUDA 13 and nvcc 13)")
def test_kernels_picks_the_cuda_variant_for_a_cuda_torch(variants_build, tmp_path):
    _, dist, _ = variants_build
    loaded = kernels_python(LOAD, str(dist / "kernels"), "", cwd=tmp_path)  # the backend kernels detects: CUDA
    assert Path(loaded["file"]).parent.name == CUDA_DIR and loaded["info"]["variant"] == "cu13", loaded
    print("kernels.get_local_kernel():", Path(loaded["file"]).parent.name, "(CPU kernels ran; no GPU here)")


def test_kernel_abi_check(variants_build):
    """What kernel-builder checks: Python's stable ABI (3.10, the abi3 wheel's floor) holds. For
    manylinux_2_28 the only findings are glibc symbols newer than 2.28, there because this machine's
    glibc is newer (a build in a manylinux_2_28 container, as the generated CI's, has none); against
    this machine's own glibc there are none."""
    pytest.importorskip("kernel_abi_check")
    project, dist, _ = variants_build
    _variants = load_module(project / PACKAGE / "_variants.py", "kernels_layout_variants")
    glibc = platform.libc_ver()[1].split(".")
    for folder in sorted((dist / "kernels" / "build").iterdir()):
        library = folder / "_C.abi3.so"
        findings = _variants.check_abi(library)
        print(f"kernel-abi-check {folder.name}/_C.abi3.so: {findings or 'no findings'}")
        assert not [f for f in findings if f.startswith("Python ABI")], findings
        assert all(": " in f and " needs GLIBC 2." in f for f in findings), findings
        assert _variants.check_abi(library, manylinux=f"manylinux_{glibc[0]}_{glibc[1]}") == []
