# Sourced by scripts/test.sh: route this run's C++ and CUDA compiles through ccache, where the
# machine has it. The suite builds generated sources in many temporary projects (pip, JIT, CMake,
# wheels, mutants); where the same source recurs with the same flags, a cache shared by those builds
# compiles it once per run (a few percent of the compiles: most projects differ in their names).
# Nothing changes where ccache is missing.
#   ccache_setup CACHE_DIR BASE_DIR     (BASE_DIR: the folder holding the tests' temporary projects)
ccache_setup() {
  command -v ccache >/dev/null || { echo "(ccache not found: compiles are not cached)"; return 0; }
  export CCACHE_DIR="$1"
  # Paths under BASE_DIR are hashed relative to the build folder, so a project built in another
  # temporary folder hits; its compile flags carry -g, which would hash the folder itself too.
  # Depend mode: a miss costs no preprocessor run (most compiles here are misses).
  export CCACHE_BASEDIR="$2" CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1 CCACHE_MAXSIZE=8G
  local masquerade
  for masquerade in /usr/lib/ccache /usr/lib64/ccache /usr/local/opt/ccache/libexec; do
    [ -x "$masquerade/g++" ] && { export PATH="$masquerade:$PATH"; break; }
  done
  # nvcc has no masquerade link: torch.utils.cpp_extension puts ccache in front of it by itself
  # (torch >= 2.15: both compilers, where ccache is on PATH), CMake where asked to.
  export CMAKE_CUDA_COMPILER_LAUNCHER=ccache
  ccache --zero-stats >/dev/null
  echo "(compiles cached by ccache in $CCACHE_DIR)"
}
