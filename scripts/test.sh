#!/usr/bin/env bash
# This repo's tests: template rendering, opgen, copier update, and real builds of generated projects
# and of examples/ (CUDA builds where torch has CUDA and nvcc is found; CUDA tests run only on a GPU).
#   scripts/test.sh [pytest args]
# OPGEN_CPU_TORCH=<requirement> also builds a generated project against a CPU-only torch (pip and CMake).
# OPGEN_NEXT_TORCH=<requirement> adds a venv with another torch (the oldest supported, say); with the
# CPU-only one, tests/test_wheel.py runs wheels built here under those torches.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
bash scripts/bootstrap.sh "$repo/.venv" "${OPGEN_TORCH:-torch}" test,kernels  # kernels: HF's loader, for one test file
others=()
if [ -n "${OPGEN_CPU_TORCH:-}" ]; then
  bash scripts/bootstrap.sh "$repo/.venv-cpu" "$OPGEN_CPU_TORCH"
  others+=("$repo/.venv-cpu/bin/python")
  # Builds against a torch without CUDA headers (pip, both APIs, and CMake) and the projects' tests;
  # the rest of those files runs in the full suite.
  echo "== CPU-only torch: generated project builds (pip, CMake)"
  "$repo/.venv-cpu/bin/python" -m pytest -q -ra tests/test_generated_project.py tests/test_cmake.py \
    -k "build_picks or generated_tests_pass or default_build_exports or project_tests_pass_against_the_cmake"
fi
if [ -n "${OPGEN_NEXT_TORCH:-}" ]; then
  # A pip constraint on the machine may cap torch below the version asked for: this venv ignores it.
  PIP_CONSTRAINT=/dev/null bash scripts/bootstrap.sh "$repo/.venv-next" "$OPGEN_NEXT_TORCH"
  others+=("$repo/.venv-next/bin/python")
  # Its headers too: a generated project (both APIs) must compile against every torch it supports,
  # the oldest included (CPU-only: that torch's CUDA need not match the machine's nvcc).
  # (Its runtime is tested by tests/test_wheel.py: the stable wheel built here, under this torch.)
  echo "== $OPGEN_NEXT_TORCH: generated project build (CPU-only)"
  OPGEN_CPU_ONLY=1 "$repo/.venv-next/bin/python" -m pytest -q -ra tests/test_generated_project.py -k build_picks
fi
export OPGEN_OTHER_TORCH_PYTHONS
OPGEN_OTHER_TORCH_PYTHONS=$(IFS=:; echo "${others[*]:-}")
echo "== full suite"
"$repo/.venv/bin/python" -m pytest -q -ra --durations=25 tests "$@"  # the slowest tests, for keeping CI short
