#!/usr/bin/env bash
# bench/gemv/run.sh [runtime-build-dir [shapes|sweep]]: batch-1 matvec GB/s against the
# machine's read bandwidth (see gemv_bench.cpp). Uses libbmrt.a from the
# given runtime build dir (cmake -S runtime), else configures and builds one
# in $BMB_BUILD_DIR/bench/gemv-runtime. Threads: BMB_THREADS (default 2).
# A benchmark, not a test: prints figures, fails only if it cannot run.
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/common.sh"

rt="${1:-$BMB_BUILD_DIR/bench/gemv-runtime}"
if [ ! -f "$rt/build.ninja" ]; then
  cmake -G Ninja -S "$BMB_ROOT/runtime" -B "$rt" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
ninja -C "$rt" -j "${BMB_JOBS:-2}" bmrt >/dev/null

openblas=/usr/lib/x86_64-linux-gnu/openblas-openmp
g++ -std=c++17 -O3 -march=native -fopenmp \
  -I"$BMB_ROOT/runtime/include" -I"$BMB_ROOT/runtime" \
  -I/usr/include/x86_64-linux-gnu/openblas-openmp \
  "$BMB_ROOT/bench/gemv/gemv_bench.cpp" "$rt/lib/libbmrt.a" \
  -L"$openblas" -Wl,-rpath,"$openblas" -lopenblas -o "$rt/gemv_bench"

OMP_NUM_THREADS="${BMB_THREADS:-2}" OMP_PROC_BIND=close "$rt/gemv_bench" "${@:2}"
