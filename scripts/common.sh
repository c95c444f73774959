# shellcheck shell=bash disable=SC2034  # variables are used by the scripts that source this
# scripts/common.sh: sourced by the other scripts, never run on its own.
# Sets BMB_ROOT (the checkout), BMB_BUILD_DIR (default build/), BMB_JOBS and
# the Debian LLVM 19 paths, and provides stage timing helpers.

BMB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# The build directory: BMB_BUILD_DIR if set (relative paths are taken from the
# checkout, not from the caller's cwd), else build/.
BMB_BUILD_DIR="${BMB_BUILD_DIR:-build}"
case "$BMB_BUILD_DIR" in
  /*) ;;
  *) BMB_BUILD_DIR="$BMB_ROOT/$BMB_BUILD_DIR" ;;
esac

BMB_LLVM_PREFIX=/usr/lib/llvm-19
BMB_MLIR_DIR="$BMB_LLVM_PREFIX/lib/cmake/mlir"
BMB_LIT="$BMB_LLVM_PREFIX/build/utils/lit/lit.py"

# Parallel jobs: BMB_JOBS if set, else nproc capped by memory. MLIR TUs take
# 350-850 MB each (a few up to 2.5 GB), so allow one job per 2 GiB available.
bmb_default_jobs() {
  local cores mem_kb by_mem
  cores=$(nproc 2>/dev/null || echo 1)
  mem_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)
  by_mem=$(( mem_kb / (2 * 1024 * 1024) ))
  [ "$by_mem" -ge 1 ] || by_mem=1
  [ "$cores" -le "$by_mem" ] && echo "$cores" || echo "$by_mem"
}
BMB_JOBS="${BMB_JOBS:-$(bmb_default_jobs)}"

bmb_now() { date +%s.%N; }
bmb_elapsed() { awk -v a="$1" -v b="$(bmb_now)" 'BEGIN { printf "%.1f", b - a }'; }

# Python for the test harnesses: Debian's interpreter when there is one (it
# sees Debian's python3-* packages), else whatever python3 is on PATH.
if [ -x /usr/bin/python3 ]; then BMB_PYTHON=/usr/bin/python3; else BMB_PYTHON=python3; fi

# bmb_configure: runs cmake when the build dir has no build.ninja yet (or when
# BMB_CMAKE_ARGS asks for new cache values). Afterwards ninja re-runs cmake by
# itself whenever a CMakeLists.txt changes.
bmb_configure() {
  if [ -f "$BMB_BUILD_DIR/CMakeCache.txt" ] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$BMB_BUILD_DIR/CMakeCache.txt"; then
    echo "error: $BMB_BUILD_DIR was configured with another generator than Ninja;" \
         "remove it or set BMB_BUILD_DIR to another directory" >&2
    return 1
  fi
  if [ -f "$BMB_BUILD_DIR/build.ninja" ] && [ -z "${BMB_CMAKE_ARGS:-}" ]; then
    # Configured before: let ninja re-run cmake if a CMakeLists.txt changed.
    echo "configure: $BMB_BUILD_DIR is configured; regenerating if needed"
    ninja -C "$BMB_BUILD_DIR" build.ninja
    return
  fi
  # ccache (installed by install-deps.sh) makes rebuilds in fresh clones cheap
  # on a machine that built before; BMB_CCACHE=0 turns it off.
  local launcher=()
  if [ "${BMB_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null 2>&1; then
    # Only with a writable cache: ccache fails the compile when it has none.
    local cache_dir
    cache_dir=$(ccache --get-config cache_dir 2>/dev/null) || cache_dir=""
    if [ -n "$cache_dir" ] && mkdir -p "$cache_dir" 2>/dev/null && [ -w "$cache_dir" ]; then
      # base_dir: paths under the checkout are hashed relative to it, so
      # another clone of the same sources hits the same cache entries.
      local cc="/usr/bin/env;CCACHE_BASEDIR=$BMB_ROOT;ccache"
      launcher=(-DCMAKE_C_COMPILER_LAUNCHER="$cc" -DCMAKE_CXX_COMPILER_LAUNCHER="$cc")
    fi
  fi
  # shellcheck disable=SC2086 # BMB_CMAKE_ARGS is a list of words on purpose
  cmake -G Ninja -S "$BMB_ROOT" -B "$BMB_BUILD_DIR" \
    -DCMAKE_BUILD_TYPE="${BMB_BUILD_TYPE:-Release}" \
    -DMLIR_DIR="$BMB_MLIR_DIR" \
    -DLLVM_EXTERNAL_LIT="$BMB_LIT" \
    "${launcher[@]}" ${BMB_CMAKE_ARGS:-}
}

# bmb_heading TEXT: the banner between a demo's stages.
bmb_heading() {
  echo
  echo "================================================================"
  echo "== $*"
  echo "================================================================"
}

# bmb_show_bmbc ARGS...: prints the command, then runs the built bmbc from the
# checkout, so the paths it prints are relative to it (the demos use this).
bmb_show_bmbc() {
  echo "\$ bmbc $*"
  (cd "$BMB_ROOT" && "$BMB_BUILD_DIR/bin/bmbc" "$@")
}
