#!/usr/bin/env bash
# On a GPU machine: build fresh generated projects (one op of each kind; torch_api stable and aten)
# and examples/ for sm_90, run their tests on CUDA, a wheel built elsewhere with another torch,
# compute-sanitizer over the CUDA tests, the benchmarks and build speed; write a report.
#   scripts/gpu_check.sh [STAGE ...]    stages: env build test cmake wheel overhead sanitize bench sweep
#   buildspeed (default: all); build_examples builds examples/ alone; cmake builds examples/ with CMake (into
#   $WORK/cmake-examples, apart from the pip build) and runs their CUDA tests against that build.
#   skeletons builds and tests the fresh projects alone (build_skeletons: builds only). port builds
#   the package ports (tests/activation_port.py, tests/rmsnorm_port.py) and the row-wise families
#   (tests/row_families.py), and runs their upstream tests, their conformance suites on CUDA and benchmarks.
#   triton (after build_examples): examples/' Triton ops and their CUDA twins: tests, --tune, sweep.
#   survive (after build_examples): the conformance checks of export, CUDA graphs, autocast,
#   determinism, dynamic shapes and tags alone.
#   scripts/gpu_check.sh prepare        (on a machine with copier, before): renders the fresh projects
#   and builds the stable project's CUDA wheel with this machine's torch into $CARRY (default
#   .gpu-carry); the GPU run takes them from there (copier and the other torch need not be on it).
#   SANITIZER_TOOLS="memcheck racecheck synccheck" picks the compute-sanitizer tools, SANITIZER_TESTS
#   the test files (default: all of examples/tests), SANITIZER_SELECT the pytest -k expression,
#   SANITIZER_FILE_TIMEOUT the seconds one test file may take. BENCH_OPS="op ..." benchmarks only those ops;
#   SWEEP_OPS="op ..." sweeps only those, SWEEP_ARGS="--quick" each line's ends and key points only.
# Results go to $OUT (default ./gpu-report): summary.md, one log per stage, bench/report.{md,json,png},
# sweep/ (sweep.md, <op>.json, <op>.png).
# Needs torch with CUDA, nvcc, ninja, pytest; copier and opgen come from PYTHONPATH or pip.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$repo/gpu-report}
work=${WORK:-/tmp/opgen-gpu}
python=${PYTHON:-python3}
stages=${*:-env build test cmake wheel overhead sanitize bench sweep buildspeed}
carry=${CARRY:-$repo/.gpu-carry}
skeleton=$work/skeleton         # torch_api stable
skeleton_aten=$work/skeleton-aten
examples=$repo/examples
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0a} MAX_JOBS=${MAX_JOBS:-16} PYTHONUNBUFFERED=1
export PYTHONPATH="$repo/generator${PYTHONPATH:+:$PYTHONPATH}"
# Build with the system compilers, whatever CC/CXX say: a compiler that links its own copy of
# libstdc++ into the extension makes it crash as soon as it formats a number into an error message
# (seen with a preset CXX on a GPU machine, while the system g++ of the same version worked).
[ -x /usr/bin/gcc ] && export CC=/usr/bin/gcc
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
mkdir -p "$out" "$work"
summary=$out/summary.md

note() { echo "$*" | tee -a "$summary"; }
# The skips a GPU machine may take (pytest -rs lines): the two-GPU tests on one GPU, the tests past
# 2**31 elements on a GPU with too little memory, and a conformance check that applies to no op of
# the project (examples/ has no out= op). Any other skip hides a test that should run here.
expected_skip='^SKIPPED \[[0-9]+\] [^ ]+:[0-9]+: (fewer than 2 CUDA devices|needs a CUDA device with [0-9.]+ GiB$|needs [0-9.]+ GiB of cuda memory)'
expected_skip+='|^SKIPPED \[[0-9]+\] tests/test_opgen_conformance.py:[0-9]+: got empty parameter set for'
# (torch before 2.12 registers no tags through the stable ABI: the tags check skips, saying so)
expected_skip+="|^SKIPPED \\[[0-9]+\\] tests/test_opgen_conformance.py:[0-9]+: torch [^ ]+'s stable ABI registers no tags"
# Last pytest summary line of a log, e.g. "312 passed, 4 skipped in 20.1s", and FAIL with the
# unexpected skips' lines if there are any.
counts() {
  local unexpected
  unexpected=$(grep -E "^SKIPPED" "$1" | grep -vE "$expected_skip" | cut -c1-200 | paste -sd ';')
  echo "$(grep -E "^(=+ )?[0-9]+ (passed|failed|error|skipped)" "$1" | tail -1 | sed 's/=//g')${unexpected:+; FAIL, unexpected skips: $unexpected}"
}
pytest_in() { (cd "$1" && $python -m pytest -q -p no:cacheprovider -rs "${@:2}"); }

stage_env() {
  note "## Machine"
  note "- $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
  note "- $($python -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda)')"
  note "- $(nvcc --version | tail -1); CXX=${CXX:-c++}"
}

# A fresh project with one op of each kind and three from schemas, answering torch_api=$2 (unbuilt).
render_skeleton() {
  rm -rf "$1"
  $python -m copier copy --defaults --vcs-ref HEAD --data project_name="gpu-ops-$2" --data torch_api="$2" "$repo" "$1" &&
    (cd "$1" && $python -m opgen new gelu_approx --kind elementwise && $python -m opgen new row_sumsq --kind reduction &&
      $python -m opgen new my_blank --kind blank &&
      $python -m opgen new fma3 --schema "(Tensor a, Tensor b, Tensor c, float alpha=0.5) -> Tensor" --with-out &&
      $python -m opgen new add_into --schema "(Tensor! out, Tensor a, Tensor b) -> ()" &&
      $python -m opgen new two_outs --kind blank --schema "(Tensor x, Tensor? w=None, *, float eps=1e-5) -> (Tensor, Tensor)")
}

stage_prepare() {
  rm -rf "$carry" && mkdir -p "$carry/wheels"
  # CUTLASS's headers for examples/moe (the device has no index): installed there by build_examples.
  $python -m pip download --quiet --no-deps "nvidia-cutlass==4.2.0.0" -d "$carry/cutlass" &&
  $python "$repo/tests/activation_port.py" "$carry/port" >/dev/null &&
    $python "$repo/tests/rmsnorm_port.py" "$carry/rmsnorm_port" >/dev/null &&
    $python "$repo/tests/row_families.py" "$carry/families" >/dev/null &&
    render_skeleton "$carry/skeleton" stable && render_skeleton "$carry/skeleton-aten" aten &&
    (cd "$carry/skeleton" && $python gpu_ops_stable/_variants.py --variants "${PREPARE_VARIANTS:-cpu,cu13}" \
      --out "$carry/wheels" --kernels-dir "$carry/kernels" &&
      rm -rf build "$carry"/skeleton/gpu_ops_stable/_C* "$carry"/skeleton/gpu_ops_stable/_build_info.json) &&
    echo "prepared $carry: $(ls "$carry/wheels"), built with $($python -c 'import torch; print("torch", torch.__version__)')"
}

# The fresh project for torch_api=$2 at $1: copied from $carry when prepared there, else rendered.
fresh_skeleton() {
  local from=$carry/skeleton
  [ "$2" = aten ] && from=$carry/skeleton-aten
  if [ -d "$from" ]; then rm -rf "$1" && cp -r "$from" "$1"; else render_skeleton "$1" "$2"; fi
}

build_skeleton() {
  fresh_skeleton "$1" "$2" && (cd "$1" && time $python -m pip install --no-build-isolation --no-deps -e .)
}

build_examples() {
  for wheel in "$carry"/cutlass/nvidia_cutlass-*.whl; do
    [ -f "$wheel" ] && $python -m pip install --quiet --no-deps "$wheel"
  done
  (cd "$examples" && time $python -m pip install --no-build-isolation --no-deps -e .)
}

stage_build() {
  note "## Builds for sm_90: fresh projects (copier copy + opgen new, one op of each kind) and examples/"
  build_skeleton "$skeleton" stable >"$work/build-skeleton.log" 2>&1 &
  local stable_pid=$!
  build_skeleton "$skeleton_aten" aten >"$work/build-skeleton-aten.log" 2>&1 &
  local aten_pid=$!
  build_examples >"$work/build-examples.log" 2>&1
  local examples_rc=$?
  wait $stable_pid
  local stable_rc=$?
  wait $aten_pid
  local aten_rc=$?
  cat "$work/build-skeleton.log" "$work/build-skeleton-aten.log" "$work/build-examples.log" >"$out/build.log"
  note "- fresh project, torch_api stable: rc=$stable_rc ($(grep real "$work/build-skeleton.log" | tail -1))"
  note "- fresh project, torch_api aten: rc=$aten_rc ($(grep real "$work/build-skeleton-aten.log" | tail -1))"
  note "- examples build: rc=$examples_rc ($(grep real "$work/build-examples.log" | tail -1))"
}

# The fresh projects alone (no examples/): build both (build_skeletons), and run their tests (skeletons).
stage_build_skeletons() {
  note "## Fresh projects only, built for sm_90"
  build_skeleton "$skeleton" stable >"$out/build-skeleton.log" 2>&1
  note "- torch_api stable: build rc=$? ($(grep real "$out/build-skeleton.log" | tail -1))"
  build_skeleton "$skeleton_aten" aten >"$out/build-skeleton-aten.log" 2>&1
  note "- torch_api aten: build rc=$? ($(grep real "$out/build-skeleton-aten.log" | tail -1))"
}

stage_skeletons() {
  stage_build_skeletons
  note "## Fresh projects, tested on CUDA"
  pytest_in "$skeleton" >"$out/test-skeleton.log" 2>&1
  note "- torch_api stable: $(counts "$out/test-skeleton.log")"
  pytest_in "$skeleton_aten" >"$out/test-skeleton-aten.log" 2>&1
  note "- torch_api aten: $(counts "$out/test-skeleton-aten.log")"
  grep -hE "^(FAILED|ERROR)" "$out"/test-skeleton*.log | cut -c1-300 | head -40 >>"$summary"
}

stage_build_examples() {
  note "## Build of examples/ for sm_90"
  build_examples >"$out/build.log" 2>&1
  note "- examples build: rc=$? ($(grep real "$out/build.log" | tail -1))"
}

stage_test() {
  note "## Tests on CUDA"
  pytest_in "$skeleton" >"$out/test-skeleton.log" 2>&1
  note "- fresh project, torch_api stable: $(counts "$out/test-skeleton.log")"
  pytest_in "$skeleton_aten" >"$out/test-skeleton-aten.log" 2>&1
  note "- fresh project, torch_api aten: $(counts "$out/test-skeleton-aten.log")"
  pytest_in "$examples" >"$out/test-examples.log" 2>&1
  note "- examples: $(counts "$out/test-examples.log")"
  grep -hE "^(FAILED|ERROR)" "$out"/test-*.log | cut -c1-300 | head -60 >>"$summary"
}

stage_survive() {
  # The checks of what models do to an op (tags, determinism, CUDA graphs, autocast, dynamic shapes,
  # export + AOTInductor), alone: after build_examples (and skeletons for the fresh projects).
  note "## What models do to an op, on CUDA"
  # (the tags check has no device in its name: it reads the registration, once per op)
  local select="tags or (cuda and (same_bits or nondeterministic or cuda_graph or autocast or dynamic or aoti))"
  pytest_in "$examples" -n "${MAX_JOBS}" -k "$select" --durations=5 tests/test_opgen_conformance.py >"$out/survive-examples.log" 2>&1
  note "- examples: $(counts "$out/survive-examples.log")"
  # (the aten project too: under a torch before 2.12 only its build registers tags to check)
  local api project
  for api in stable aten; do
    project=$skeleton
    [ "$api" = aten ] && project=$skeleton_aten
    [ -d "$project" ] || continue
    pytest_in "$project" -n "${MAX_JOBS}" -k "$select" tests/test_opgen_conformance.py >"$out/survive-skeleton-$api.log" 2>&1
    note "- fresh project, torch_api $api: $(counts "$out/survive-skeleton-$api.log")"
  done
  grep -hE "^(FAILED|ERROR)" "$out"/survive-*.log | cut -c1-300 | head -30 >>"$summary"
}

stage_cmake() {
  # examples/ through CMakeLists.txt (the fourth build mode), loaded through OPGEN_LIBRARY.
  note "## CMake build of examples/ for sm_90, CUDA tests against it"
  local build=$work/cmake-examples
  rm -rf "$build"
  (cd "$examples" && time $python scripts/build_cmake.py "$build") >"$out/cmake.log" 2>&1
  note "- build: rc=$? ($(grep real "$out/cmake.log" | tail -1)); $(grep '^OK build_cmake' "$out/cmake.log" | cut -c1-200)"
  OPGEN_LIBRARY=$build pytest_in "$examples" -k cuda >"$out/test-cmake.log" 2>&1
  note "- examples' CUDA tests on the CMake build: $(counts "$out/test-cmake.log")"
  grep -hE "^(FAILED|ERROR)" "$out/test-cmake.log" | cut -c1-300 | head -30 >>"$summary"
}

stage_wheel() {
  # The stable project's CUDA wheel from `prepare` (built with another torch), installed apart from
  # any source and run through the project's whole test suite, CUDA tests included, as its README
  # says: `python -m pytest --installed` beside the project's tests, not its sources.
  note "## Stable CUDA wheel built elsewhere, under this torch"
  local wheel
  wheel=$(ls "$carry"/wheels/*+cu*.whl 2>/dev/null | head -1)
  [ -n "$wheel" ] || { note "- no CUDA wheel in $carry/wheels: run the prepare stage first"; return; }
  rm -rf "$work/wheel" && mkdir -p "$work/wheel"
  cp -r "$carry/skeleton/tests" "$carry/skeleton/conftest.py" "$carry/skeleton/pyproject.toml" "$work/wheel/"
  $python -m pip install --quiet --no-deps --target "$work/wheel/site" "$wheel" >"$out/test-wheel.log" 2>&1
  (cd "$work/wheel" && PYTHONPATH=$work/wheel/site $python -m gpu_ops_stable &&
    PYTHONPATH=$work/wheel/site $python -m pytest -q -p no:cacheprovider -rs -n "${MAX_JOBS}" --installed tests) >>"$out/test-wheel.log" 2>&1
  note "- $(basename "$wheel"): $(counts "$out/test-wheel.log")"
  grep -E "^  (build|CUDA)" "$out/test-wheel.log" | head -3 >>"$summary"
  note "- runs here on torch $($python -c 'import torch; print(torch.__version__)')"
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

stage_sweep() {
  note "## Sweep (L2 flushed between timed runs): $out/sweep/sweep.md"
  # Each op's results land in sweep/<op>.json as it finishes; the report covers every such file.
  (cd "$examples" && $python -m benchmarks --sweep ${SWEEP_ARGS:-} ${SWEEP_OPS:-} --out "$out/sweep") >"$out/sweep.log" 2>&1
  note "- examples: $(grep '^sweep of' "$out/sweep.log" | tail -1)"
  sed -n '/^## Targets/,/^## Worst point/p' "$out/sweep/sweep.md" | grep "^| " >>"$summary"
}

stage_port() {
  # kernels-community's activation package (with an RMSNorm beside it) and its rmsnorm package,
  # ported as math and declarations (tests/*_port.py), and the row-wise families (LayerNorm, softmax,
  # log-softmax, rotary: tests/row_families.py), all rendered by `prepare`: the packages' own tests
  # (activation's are CUDA only, rmsnorm's CPU only), the conformance suite on CUDA, and the row-wise
  # and element-wise ops' benchmarks.
  note "## The package ports, built for sm_90"
  local port name
  for name in port rmsnorm_port families; do
    port=$work/$name
    rm -rf "$port" && cp -r "$carry/$name" "$port"
    (cd "$port" && time $python -m pip install --no-build-isolation --no-deps -e .) >"$out/$name-build.log" 2>&1
    note "- $name build: rc=$? ($(grep real "$out/$name-build.log" | tail -1))"
    if [ "$name" != families ]; then
      pytest_in "$port" -n "${MAX_JOBS}" "$(cd "$port" && echo tests/kernels_community_*)" >"$out/$name-upstream.log" 2>&1
      note "- $name, the package's own tests: $(counts "$out/$name-upstream.log")"
    fi
    pytest_in "$port" -n "${MAX_JOBS}" -k "cuda and not 2_to_the_31 and not aoti" tests/test_opgen_conformance.py >"$out/$name-conformance.log" 2>&1
    note "- $name, conformance on CUDA: $(counts "$out/$name-conformance.log")"
  done
  grep -hE "^(FAILED|ERROR)" "$out"/*port-*.log | cut -c1-300 | head -30 >>"$summary"
  (cd "$work/port" && $python -m benchmarks ${PORT_BENCH_OPS:-rms_norm silu_and_mul gelu_fast} --out "$out/port-bench") >"$out/port-bench.log" 2>&1
  grep -E "GB/s|rms_norm|silu_and_mul|gelu_fast" "$out/port-bench.log" | head -40 >>"$summary"
}

stage_triton() {
  # examples/' Triton ops beside their CUDA C++ twins (after build_examples): the conformance suite on
  # CUDA (past 2**31 elements apart, one at a time), the tuned configs stored (--tune), and the sweep
  # of both against eager and torch.compile. TRITON_OPS="op ..." picks the ops (default: those four).
  note "## Triton ops and their CUDA twins"
  local ops=${TRITON_OPS:-fused_bias_gelu_triton fused_bias_gelu rms_norm_triton rms_norm} select
  select=$(echo "$ops" | sed 's/ / or /g')
  pytest_in "$examples" -n "${MAX_JOBS}" -k "cuda and ($select) and not 2_to_the_31" tests/test_opgen_conformance.py \
    >"$out/triton-conformance.log" 2>&1
  note "- conformance on CUDA: $(counts "$out/triton-conformance.log")"
  pytest_in "$examples" -k "cuda and ($select) and 2_to_the_31" tests/test_opgen_conformance.py >"$out/triton-large.log" 2>&1
  note "- past 2**31 elements: $(counts "$out/triton-large.log")"
  grep -hE "^(FAILED|ERROR)" "$out"/triton-*.log | cut -c1-300 | head -20 >>"$summary"
  (cd "$examples" && time $python -m benchmarks --tune) >"$out/triton-tune.log" 2>&1
  note "- tune: $(grep -c 'stored for this GPU' "$out/triton-tune.log") op(s); $(grep real "$out/triton-tune.log")"
  grep "stored for this GPU" "$out/triton-tune.log" >>"$summary"
  mkdir -p "$out/tuned" && cp "$examples"/opgen_examples/tuned/*.json "$out/tuned/" 2>/dev/null
  (cd "$examples" && $python -m benchmarks --sweep ${SWEEP_ARGS:-} $ops --out "$out/triton-sweep") >"$out/triton-sweep.log" 2>&1
  note "- sweep: $(grep '^sweep of' "$out/triton-sweep.log" | tail -1)"
}

stage_overhead() {
  note "## Per-call host time at one element (after the build stage)"
  (cd "$skeleton" && PYTHONPATH=. $python "$repo/scripts/call_overhead.py" gpu_ops_stable) 2>&1 | tail -1 | tee -a "$summary"
  (cd "$skeleton_aten" && PYTHONPATH=. $python "$repo/scripts/call_overhead.py" gpu_ops_aten) 2>&1 | tail -1 | tee -a "$summary"
}

stage_buildspeed() {
  note "## Build speed (fresh copies of the two projects)"
  local projects=()
  for api in stable aten; do
    fresh_skeleton "$work/speed-$api" "$api" >/dev/null 2>&1
    projects+=(--project "$work/speed-$api")
  done
  $python "$repo/scripts/build_speed.py" "${projects[@]}" --out "$out/buildspeed.md" >"$out/buildspeed.log" 2>&1
  cat "$out/buildspeed.md" >>"$summary" 2>/dev/null || tail -5 "$out/buildspeed.log" >>"$summary"
}

for stage in $stages; do
  "stage_$stage"
done
echo "wrote $out"
