#!/usr/bin/env bash
# Create (or reuse) a virtual environment with torch, the build tools and opgen itself.
#   scripts/bootstrap.sh [VENV] [TORCH_REQUIREMENT] [EXTRAS]     (defaults: .venv, "torch", test)
# A torch with CUDA is needed to build .cu files (it ships the CUDA headers); nvcc comes from the
# machine's CUDA toolkit.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-$repo/.venv}
torch_requirement=${2:-torch}
extras=${3:-test}

[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
"${pip[@]}" "$torch_requirement" "setuptools>=77.0.3" wheel ninja 2>&1 | grep -v "^WARNING: Location" || true
"${pip[@]}" -e "$repo[$extras]" 2>&1 | grep -v "^WARNING: Location" || true
# CUTLASS's and CuTe's headers, for examples/moe's Hopper grouped GEMMs (a build finds them where this
# package is installed). Headers only: --no-deps leaves out its Python API's dependencies (scipy, ...).
"${pip[@]}" --no-deps "nvidia-cutlass==4.2.0.0" 2>&1 | grep -v "^WARNING: Location" || true
"$venv/bin/python" -c "import torch, copier, opgen; print('torch', torch.__version__, '| CUDA', torch.version.cuda)"
