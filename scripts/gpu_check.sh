#!/usr/bin/env bash
# On a GPU machine: build a fresh generated project (one op of each kind) and examples/ for sm_90,
# run their tests on CUDA, compute-sanitizer over the CUDA tests, and the benchmarks; write a report.
#   scripts/gpu_check.sh [STAGE ...]      stages: env skeleton examples sanitize bench buildspeed (default: all)
# Results go to $OUT (default ./gpu-report): summary.md plus one log per stage.
# Needs torch with CUDA, nvcc, ninja, pytest; copier and opgen come from PYTHONPATH or pip.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$repo/gpu-report}
work=${WORK:-/tmp/opgen-gpu}
python=${PYTHON:-python3}
stages=${*:-env skeleton examples sanitize bench buildspeed}
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0} MAX_JOBS=${MAX_JOBS:-16} PYTHONUNBUFFERED=1
export PYTHONPATH="$repo/generator${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$out" "$work"
summary=$out/summary.md

note() { echo "$*" | tee -a "$summary"; }
# Last pytest summary line of a log, e.g. "312 passed, 4 skipped in 20.1s".
counts() { grep -E "^(=+ )?[0-9]+ (passed|failed|error)" "$1" | tail -1 | sed 's/=//g'; }

stage_env() {
  note "## Machine"
  note "- $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
  note "- $($python -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda)')"
  note "- $(nvcc --version | tail -1)"
}

stage_skeleton() {
  note "## Fresh project: copier copy + opgen new (elementwise, reduction, blank), sm_90"
  local log=$out/skeleton.log project=$work/skeleton
  rm -rf "$project"
  {
    $python -m copier copy --trust --defaults --data package_name=gpu_ops "$repo" "$project" &&
      (cd "$project" && $python -m opgen new gelu_approx --kind elementwise && $python -m opgen new row_sumsq --kind reduction &&
        $python -m opgen new my_blank --kind blank) &&
      (cd "$project" && time $python -m pip install --no-build-isolation --no-deps -e . ) &&
      (cd "$project" && $python -m pytest -q -p no:cacheprovider -rs) &&
      (cd "$project" && $python -m benchmarks --out "$work/skeleton-bench")
  } >"$log" 2>&1
  note "- tests: $(counts "$log")"
  [ -f "$work/skeleton-bench/report.md" ] && grep "^| " "$work/skeleton-bench/report.md" >>"$summary"
}

stage_examples() {
  note "## examples/: build for sm_90 and the whole test suite on CUDA"
  local log=$out/examples.log
  {
    (cd "$repo/examples" && time $python -m pip install --no-build-isolation --no-deps -e .) &&
      (cd "$repo/examples" && $python -m pytest -q -p no:cacheprovider -rs)
  } >"$log" 2>&1
  note "- tests: $(counts "$log")"
  grep -E "^(FAILED|ERROR)" "$log" | head -40 >>"$summary"
}

stage_sanitize() {
  note "## compute-sanitizer memcheck over each example's CUDA tests"
  local log=$out/sanitizer.log
  : >"$log"
  for test in "$repo"/examples/tests/test_*.py; do
    local name
    name=$(basename "$test" .py)
    compute-sanitizer --tool memcheck --error-exitcode 99 --print-limit 20 \
      $python -m pytest -q -p no:cacheprovider -x -k "cuda and not 2_to_the_31 and not compile" "$test" >"$work/$name.san" 2>&1
    local rc=$?
    local errors
    errors=$(grep -oE "ERROR SUMMARY: [0-9]+ error" "$work/$name.san" | tail -1)
    echo "$name rc=$rc ${errors:-no summary} $(counts "$work/$name.san")" | tee -a "$log"
  done
  grep -c "ERROR SUMMARY: 0 errors" "$log" | xargs -I{} note "- {} test files with 0 errors"
  grep -v "ERROR SUMMARY: 0 errors" "$log" | sed 's/^/- not clean: /' >>"$summary"
}

stage_bench() {
  note "## Benchmarks (examples)"
  (cd "$repo/examples" && $python -m benchmarks --out "$out/bench") >"$out/bench.log" 2>&1
  note "- $(tail -1 "$out/bench.log")"
}

stage_buildspeed() {
  note "## Build speed (examples)"
  local cu=$repo/examples/csrc/vector_add/vector_add_cuda.cu
  (cd "$repo/examples" && touch "$cu" && /usr/bin/time -f "%e" -o "$work/rebuild.s" $python -m pip install --no-build-isolation --no-deps -e . >/dev/null 2>&1)
  note "- incremental rebuild after touching one .cu (pip install -e .): $(cat "$work/rebuild.s") s"
  local code="import time, torch; t=time.perf_counter(); import opgen_examples; print(round(time.perf_counter()-t, 2))"
  (cd "$repo/examples" && OPGEN_JIT=vector_add $python -c "import opgen_examples" >/dev/null 2>&1)
  note "- import with OPGEN_JIT=vector_add, unchanged op (warm ninja cache): $(cd "$repo/examples" && OPGEN_JIT=vector_add $python -c "$code" 2>&1 | tail -1) s"
}

for stage in $stages; do
  "stage_$stage"
done
echo "wrote $out"
