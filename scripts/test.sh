#!/usr/bin/env bash
# This repo's tests: template rendering, opgen, copier update, and real builds of generated projects
# and of examples/ (CUDA builds where torch has CUDA and nvcc is found; CUDA tests run only on a GPU).
#   scripts/test.sh [pytest args]
# OPGEN_CPU_TORCH=<requirement> also builds a generated project against a CPU-only torch.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
bash scripts/bootstrap.sh "$repo/.venv" "${OPGEN_TORCH:-torch}"
if [ -n "${OPGEN_CPU_TORCH:-}" ]; then
  bash scripts/bootstrap.sh "$repo/.venv-cpu" "$OPGEN_CPU_TORCH"
  echo "== CPU-only torch: generated project build"
  "$repo/.venv-cpu/bin/python" -m pytest -q -ra tests/test_generated_project.py
fi
echo "== full suite"
"$repo/.venv/bin/python" -m pytest -q -ra tests "$@"
