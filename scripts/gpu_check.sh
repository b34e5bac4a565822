#!/usr/bin/env bash
# On a GPU machine: build a fresh generated project (one op of each kind) and examples/ for sm_90,
# run their tests on CUDA, compute-sanitizer over the CUDA tests, and the benchmarks; write a report.
#   scripts/gpu_check.sh [STAGE ...]    stages: env build test sanitize bench buildspeed (default: all);
#   build_examples builds examples/ alone.
#   SANITIZER_TOOLS="memcheck racecheck synccheck" picks the compute-sanitizer tools, SANITIZER_TESTS
#   the test files (default: all of examples/tests), SANITIZER_SELECT the pytest -k expression,
#   SANITIZER_FILE_TIMEOUT the seconds one test file may take. BENCH_OPS="op ..." benchmarks only those ops.
# Results go to $OUT (default ./gpu-report): summary.md, one log per stage, bench/report.{md,json,png}.
# Needs torch with CUDA, nvcc, ninja, pytest; copier and opgen come from PYTHONPATH or pip.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$repo/gpu-report}
work=${WORK:-/tmp/opgen-gpu}
python=${PYTHON:-python3}
stages=${*:-env build test sanitize bench buildspeed}
skeleton=$work/skeleton
examples=$repo/examples
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0} MAX_JOBS=${MAX_JOBS:-16} PYTHONUNBUFFERED=1
export PYTHONPATH="$repo/generator${PYTHONPATH:+:$PYTHONPATH}"
# Build with the system compilers, whatever CC/CXX say: a compiler that links its own copy of
# libstdc++ into the extension makes it crash as soon as it formats a number into an error message
# (seen with a preset CXX on a GPU machine, while the system g++ of the same version worked).
[ -x /usr/bin/gcc ] && export CC=/usr/bin/gcc
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
mkdir -p "$out" "$work"
summary=$out/summary.md

note() { echo "$*" | tee -a "$summary"; }
# Last pytest summary line of a log, e.g. "312 passed, 4 skipped in 20.1s".
counts() { grep -E "^(=+ )?[0-9]+ (passed|failed|error|skipped)" "$1" | tail -1 | sed 's/=//g'; }
pytest_in() { (cd "$1" && $python -m pytest -q -p no:cacheprovider -rs "${@:2}"); }

stage_env() {
  note "## Machine"
  note "- $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
  note "- $($python -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda)')"
  note "- $(nvcc --version | tail -1); CXX=${CXX:-c++}"
}

build_skeleton() {
  rm -rf "$skeleton"
  $python -m copier copy --trust --defaults --data package_name=gpu_ops "$repo" "$skeleton" &&
    (cd "$skeleton" && $python -m opgen new gelu_approx --kind elementwise && $python -m opgen new row_sumsq --kind reduction &&
      $python -m opgen new my_blank --kind blank) &&
    (cd "$skeleton" && time $python -m pip install --no-build-isolation --no-deps -e .)
}

build_examples() {
  (cd "$examples" && time $python -m pip install --no-build-isolation --no-deps -e .)
}

stage_build() {
  note "## Builds for sm_90: fresh project (copier copy + opgen new, one op of each kind) and examples/"
  build_skeleton >"$work/build-skeleton.log" 2>&1 &
  build_examples >"$work/build-examples.log" 2>&1
  local examples_rc=$?
  wait $!
  local skeleton_rc=$?
  cat "$work/build-skeleton.log" "$work/build-examples.log" >"$out/build.log"
  note "- fresh project build: rc=$skeleton_rc ($(grep real "$work/build-skeleton.log" | tail -1))"
  note "- examples build: rc=$examples_rc ($(grep real "$work/build-examples.log" | tail -1))"
}

stage_build_examples() {
  note "## Build of examples/ for sm_90"
  build_examples >"$out/build.log" 2>&1
  note "- examples build: rc=$? ($(grep real "$out/build.log" | tail -1))"
}

stage_test() {
  note "## Tests on CUDA"
  pytest_in "$skeleton" >"$out/test-skeleton.log" 2>&1
  note "- fresh project: $(counts "$out/test-skeleton.log")"
  pytest_in "$examples" >"$out/test-examples.log" 2>&1
  note "- examples: $(counts "$out/test-examples.log")"
  grep -hE "^(FAILED|ERROR)" "$out/test-skeleton.log" "$out/test-examples.log" | cut -c1-300 | head -60 >>"$summary"
}

stage_sanitize() {
  # memcheck over every example's CUDA tests; racecheck and synccheck too (SANITIZER_TOOLS).
  note "## compute-sanitizer (${SANITIZER_TOOLS:=memcheck racecheck synccheck}) over each example's CUDA tests"
  local log=$out/sanitizer.log
  # Huge-size and torch.compile tests take minutes under the sanitizers and add no kernel code.
  local select=${SANITIZER_SELECT:-cuda and not 2_to_the_31 and not compile}
  : >"$log"
  for tool in $SANITIZER_TOOLS; do
    for test in ${SANITIZER_TESTS:-"$examples"/tests/test_*.py}; do
      local name
      name=$(basename "$test" .py)
      local start=$SECONDS
      (cd "$examples" && timeout "${SANITIZER_FILE_TIMEOUT:-1200}" compute-sanitizer --tool "$tool" --error-exitcode 99 \
        --print-limit 20 $python -m pytest -q -p no:cacheprovider -x -k "$select" "$test") >"$work/$name.$tool" 2>&1
      local rc=$?
      if ! grep -qE "(ERROR|RACECHECK) SUMMARY" "$work/$name.$tool" && grep -qE "^(=+ )?[0-9]+ deselected" "$work/$name.$tool"; then
        echo "$tool $name: no CUDA tests" >>"$log"
        continue
      fi
      # memcheck and synccheck end with "ERROR SUMMARY: N errors", racecheck with "RACECHECK SUMMARY: ...".
      local verdict="NOT CLEAN"
      grep -qE "ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards" "$work/$name.$tool" && [ "$rc" = 0 ] && verdict=clean
      echo "$tool $name: $verdict, rc=$rc, $(grep -oE "(ERROR|RACECHECK) SUMMARY: .*" "$work/$name.$tool" | tail -1);" \
        "$(counts "$work/$name.$tool") ($((SECONDS - start)) s)" >>"$log"
      [ "$verdict" = clean ] ||
        grep -E "^========= |^(FAILED|E  )" "$work/$name.$tool" | head -40 | sed 's/^/    /' >>"$log"
    done
    note "- $tool: $(grep -c "^$tool [a-z_]*: clean" "$log") of $(grep -c "^$tool [a-z_]*: [A-Za-z ]*, rc=" "$log") test files clean"
  done
  grep -E "^[a-z]+ test_[a-z_]*: NOT CLEAN" "$log" | sed 's/^/- /' >>"$summary"
}

stage_bench() {
  note "## Benchmarks"
  : >"$out/bench.log"
  if [ -d "$skeleton" ]; then
    (cd "$skeleton" && $python -m benchmarks --out "$work/skeleton-bench") >>"$out/bench.log" 2>&1
    grep "^| " "$work/skeleton-bench/report.md" >>"$summary"
  fi
  # BENCH_OPS="op ..." benchmarks only those examples (default: all).
  (cd "$examples" && $python -m benchmarks ${BENCH_OPS:-} --out "$out/bench") >>"$out/bench.log" 2>&1
  note "- examples: $(tail -1 "$out/bench.log")"
}

stage_buildspeed() {
  note "## Build speed (examples)"
  local cu=$examples/csrc/vector_add/vector_add_cuda.cu
  (cd "$examples" && touch "$cu" && /usr/bin/time -f "%e" -o "$work/rebuild.s" $python -m pip install --no-build-isolation --no-deps -e . >/dev/null 2>&1)
  note "- incremental rebuild after touching one .cu (pip install -e .): $(cat "$work/rebuild.s") s"
  local code="import time, torch; t=time.perf_counter(); import opgen_examples; print(round(time.perf_counter()-t, 2))"
  (cd "$examples" && OPGEN_JIT=vector_add $python -c "import opgen_examples" >/dev/null 2>&1)
  note "- import with OPGEN_JIT=vector_add, unchanged op (warm ninja cache): $(cd "$examples" && OPGEN_JIT=vector_add $python -c "$code" 2>&1 | tail -1) s"
}

for stage in $stages; do
  "stage_$stage"
done
echo "wrote $out"
