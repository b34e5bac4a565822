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
