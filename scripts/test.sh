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
logs=$(mktemp -d)
# The logs are printed at the end; the test projects and the compile cache under them go (GBs).
trap 'rm -rf "$logs"' EXIT
source scripts/ccache_env.sh
ccache_setup "$logs/ccache" "$logs"

# The venvs, side by side (mostly downloads and unpacking).
bootstrap() {  # name, then bootstrap.sh's arguments
  local name=$1
  shift
  bash scripts/bootstrap.sh "$@" >"$logs/bootstrap-$name.log" 2>&1 || { cat "$logs/bootstrap-$name.log"; return 1; }
}
pids=()
bootstrap main "$repo/.venv" "${OPGEN_TORCH:-torch}" test,kernels &  # kernels: HF's loader, for one test file
pids+=($!)
others=()
if [ -n "${OPGEN_CPU_TORCH:-}" ]; then
  bootstrap cpu "$repo/.venv-cpu" "$OPGEN_CPU_TORCH" &
  pids+=($!)
  others+=("$repo/.venv-cpu/bin/python")
fi
if [ -n "${OPGEN_NEXT_TORCH:-}" ]; then
  # A pip constraint on the machine may cap torch below the version asked for: this venv ignores it.
  PIP_CONSTRAINT=/dev/null bootstrap next "$repo/.venv-next" "$OPGEN_NEXT_TORCH" &
  pids+=($!)
  others+=("$repo/.venv-next/bin/python")
fi
for pid in "${pids[@]}"; do wait "$pid"; done
tail -qn1 "$logs"/bootstrap-*.log  # each venv's torch
export OPGEN_OTHER_TORCH_PYTHONS
OPGEN_OTHER_TORCH_PYTHONS=$(IFS=:; echo "${others[*]:-}")

cpu_torch_stage() {
  [ -n "${OPGEN_CPU_TORCH:-}" ] || return 0
  # Builds against a torch without CUDA headers (pip, both APIs, and CMake) and their tests (the pip
  # build's with the aten API, the CMake build's with the stable one); the rest of those files runs
  # in the full suite.
  echo "== CPU-only torch: generated project builds (pip, CMake)"
  "$repo/.venv-cpu/bin/python" -m pytest -q -ra "$@" tests/test_generated_project.py tests/test_cmake.py \
    -k "build_picks or generated_tests_pass and aten or default_build_exports or project_tests_pass_against_the_cmake"
}

next_torch_stage() {
  [ -n "${OPGEN_NEXT_TORCH:-}" ] || return 0
  # Its headers too: a generated project (both APIs) must compile against every torch it supports,
  # the oldest included (CPU-only: that torch's CUDA need not match the machine's nvcc).
  # (Its runtime is tested by tests/test_wheel.py: the stable wheel built here, under this torch.)
  echo "== $OPGEN_NEXT_TORCH: generated project build (CPU-only)"
  OPGEN_CPU_ONLY=1 "$repo/.venv-next/bin/python" -m pytest -q -ra "$@" tests/test_generated_project.py -k build_picks
}

suite() {
  "$repo/.venv/bin/python" -m pytest -q -ra --durations=15 "$@"  # the slowest tests, for keeping CI short
}

cache_report() {
  command -v ccache >/dev/null && { echo "== ccache"; ccache --show-stats | sed -n '1,/^Uncacheable/p'; } || true
}

if [ $# -gt 0 ]; then  # a selection: one pytest process
  cpu_torch_stage
  next_torch_stage
  echo "== tests"
  suite "$@"
  exit
fi
# The whole suite as two processes side by side: much of it waits on one core (pytest runs of
# generated projects, pip, copier) while the other builds. Files that touch examples/ (its build, its
# mutants, its bench modules) stay in one process; so do the files sharing a session fixture (a
# wheel, the variants build).
examples_files=(tests/test_examples.py tests/test_mutants.py tests/test_benchmarks.py tests/test_lint.py
  tests/test_triton.py tests/test_activation_port.py tests/test_rmsnorm_port.py)
(cpu_torch_stage --basetemp="$logs/tmp-cpu" && echo "== suite: examples/ and the ports" \
  && suite "${examples_files[@]}" --basetemp="$logs/tmp-a") >"$logs/a.log" 2>&1 &
first=$!
others_files=()
for file in tests/test_*.py; do
  [[ " ${examples_files[*]} " == *" $file "* ]] || others_files+=("$file")
done
# The aten project's own suite runs in the CPU-only torch's stage (its Python and C++ are the same
# under either torch; the CUDA build is checked here by the build tests): not twice.
if [ -n "${OPGEN_CPU_TORCH:-}" ]; then
  others_files+=(--deselect "tests/test_generated_project.py::test_generated_tests_pass[aten]")
fi
(next_torch_stage --basetemp="$logs/tmp-next" && echo "== suite: generated projects, builds, wheels, opgen" \
  && suite "${others_files[@]}" --basetemp="$logs/tmp-b") >"$logs/b.log" 2>&1 &
second=$!
status=0
wait "$first" || status=1
wait "$second" || status=1
cat "$logs/a.log" "$logs/b.log"
cache_report
exit $status
