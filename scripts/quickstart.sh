#!/usr/bin/env bash
# The main job, end to end: generate a project from the template, add the gelu_approx op, build it
# and run its tests.
#   scripts/quickstart.sh [DEST]        (default: ./my_ops)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dest=$(realpath -m "${1:-my_ops}")
[ -e "$dest" ] && { echo "$dest exists: pick another destination" >&2; exit 1; }
bash "$repo/scripts/bootstrap.sh" "$repo/.venv" "${OPGEN_TORCH:-torch}"
source "$repo/.venv/bin/activate"
copier copy --defaults --vcs-ref HEAD "$repo" "$dest"
cd "$dest"
opgen new gelu_approx
pip install --quiet --no-build-isolation -e .
python -m pytest -q
package=$(sed -n 's/^package_name: *//p' .copier-answers.yml)
python -m "$package"   # what was built: torch, API, CUDA kernels and archs, each op's devices
echo
echo "The project is in $dest. To work in it: source $repo/.venv/bin/activate && cd $dest"
echo "gelu_approx's math: csrc/gelu_approx/gelu_approx.h; its reference and SPEC: $package/ops/gelu_approx.py"
