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
fi
if [ -n "${OPGEN_NEXT_TORCH:-}" ]; then
  # A pip constraint on the machine may cap torch below the version asked for: this venv ignores it.
  PIP_CONSTRAINT=/dev/null bash scripts/bootstrap.sh "$repo/.venv-next" "$OPGEN_NEXT_TORCH"
  others+=("$repo/.venv-next/bin/python")
fi
export OPGEN_OTHER_TORCH_PYTHONS
OPGEN_OTHER_TORCH_PYTHONS=$(IFS=:; echo "${others[*]:-}")

other_torches() {
  if [ -n "${OPGEN_CPU_TORCH:-}" ]; then
    # Builds against a torch without CUDA headers (pip, both APIs, and CMake) and the projects' tests;
    # the rest of those files runs in the full suite.
    echo "== CPU-only torch: generated project builds (pip, CMake)"
    "$repo/.venv-cpu/bin/python" -m pytest -q -ra tests/test_generated_project.py tests/test_cmake.py \
      -k "build_picks or generated_tests_pass or default_build_exports or project_tests_pass_against_the_cmake" || return
  fi
  if [ -n "${OPGEN_NEXT_TORCH:-}" ]; then
    # Its headers too: a generated project (both APIs) must compile against every torch it supports,
    # the oldest included (CPU-only: that torch's CUDA need not match the machine's nvcc).
    # (Its runtime is tested by tests/test_wheel.py: the stable wheel built here, under this torch.)
    echo "== $OPGEN_NEXT_TORCH: generated project build (CPU-only)"
    OPGEN_CPU_ONLY=1 "$repo/.venv-next/bin/python" -m pytest -q -ra tests/test_generated_project.py -k build_picks
  fi
}

suite() {
  "$repo/.venv/bin/python" -m pytest -q -ra --durations=15 "$@"  # the slowest tests, for keeping CI short
}

if [ $# -gt 0 ]; then  # a selection: one pytest process
  other_torches
  echo "== tests"
  suite "$@"
  exit
fi
# The whole suite as two processes side by side: much of it waits on one core (pytest runs of
# generated projects, pip, copier) while the other builds. Files that touch examples/ (its build, its
# mutants, its bench modules) stay in one process; so do the files sharing a session fixture (a
# wheel, the variants build).
logs=$(mktemp -d)
(other_torches && echo "== suite: examples/ and the ports" && suite tests/test_examples.py tests/test_mutants.py \
  tests/test_benchmarks.py tests/test_lint.py tests/test_triton.py tests/test_activation_port.py \
  tests/test_rmsnorm_port.py --basetemp="$logs/tmp-a") >"$logs/a.log" 2>&1 &
first=$!
others_files=$(ls tests/test_*.py | grep -vE "test_(examples|mutants|benchmarks|lint|triton|activation_port|rmsnorm_port)\.py")
# shellcheck disable=SC2086
(echo "== suite: generated projects, builds, wheels, opgen" && suite $others_files --basetemp="$logs/tmp-b") \
  >"$logs/b.log" 2>&1 &
second=$!
status=0
wait "$first" || status=1
wait "$second" || status=1
cat "$logs/a.log" "$logs/b.log"
exit $status
