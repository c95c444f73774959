#!/usr/bin/env bash
# The test command: installs dependencies, configures, builds, then runs every
# test suite, timing each stage. Works from a fresh clone on a fresh Debian 12
# machine and re-runs incrementally; works from any directory.
#
#   scripts/test.sh
#
# Stages: deps (scripts/install-deps.sh), cuda (scripts/detect-cuda.sh, for the
# log), venv (scripts/setup-venv.sh: the Hugging Face references), configure,
# build (ninja -k 0: builds all it can), lit (test/lit via lit), unit
# (GoogleTest suites and the runtime's reference tests via ctest), e2e (.bmb
# -> executable -> run, against Hugging Face), fuzz (ctest's fuzz-mutations:
# mutated .bmb files through bmbc, and the harness's self-test),
# libfuzzer-build + libfuzzer (the parser and Sema under libFuzzer and ASan for at
# most 30 s, built with clang in build-fuzz/). Each stage prints
#   == stage: <name> ... <seconds> s <result>
# and a summary table closes the run, then one line `N passed, N failed`
# counting tests (lit tests, ctest tests; a failed deps, configure or build
# stage counts as one failure). Exits non-zero when anything failed.
#
# Environment: BMB_BUILD_DIR, BMB_JOBS, BMB_BUILD_TYPE, BMB_CMAKE_ARGS (see
# scripts/build.sh); BMB_SKIP_DEPS=1 skips the apt step; BMB_LIBFUZZER=0
# skips the libFuzzer stages; BMB_FUZZ_BUILD_DIR (default: the build dir
# + "-fuzz").
set -uo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

B="$BMB_BUILD_DIR"
LOGDIR="$B/test-logs"
STAGE_NAMES=() STAGE_TIMES=() STAGE_RESULTS=() STAGE_NOTES=()
TOTAL_PASSED=0 TOTAL_FAILED=0 TOTAL_SKIPPED=0
ANY_FAILED=0
RUN_START=$(bmb_now)

# record NAME SECONDS RESULT NOTE
record() {
  STAGE_NAMES+=("$1") STAGE_TIMES+=("$2") STAGE_RESULTS+=("$3") STAGE_NOTES+=("$4")
  echo "== stage: $1 ... $2 s $3${4:+ ($4)}"
  [ "$3" = FAILED ] && ANY_FAILED=1
  return 0
}
skip() { record "$1" 0.0 skipped "$2"; }

# stage NAME CMD...: runs a step that has no test counts; a failure counts as
# one failed test.
stage() {
  local name=$1 t rc
  shift
  echo
  echo "== stage: $name"
  t=$(bmb_now)
  "$@"
  rc=$?
  if [ $rc -eq 0 ]; then
    record "$name" "$(bmb_elapsed "$t")" ok ""
  else
    TOTAL_FAILED=$((TOTAL_FAILED + 1))
    record "$name" "$(bmb_elapsed "$t")" FAILED "exit $rc"
  fi
  return $rc
}

# count LOG REGEX: the sum of the first number after REGEX (anchored with ^)
# over the lines of LOG that match it.
count() {
  grep -E "$2" "$1" | sed -E "s/$2[^0-9]*([0-9]+).*/\1/" | awk '{ n += $1 } END { print n + 0 }'
}

# suite_done NAME START RC PASSED FAILED SKIPPED
suite_done() {
  local name=$1 t=$2 rc=$3 p=$4 f=$5 s=$6 result=ok
  TOTAL_PASSED=$((TOTAL_PASSED + p)) TOTAL_SKIPPED=$((TOTAL_SKIPPED + s))
  if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ]; then
    result=FAILED
    # A runner that failed without naming a failing test still is a failure.
    [ "$f" -eq 0 ] && f=1
  fi
  TOTAL_FAILED=$((TOTAL_FAILED + f))
  record "$name" "$(bmb_elapsed "$t")" "$result" "$p passed, $f failed, $s skipped"
}

run_lit() {
  local t log rc p f s
  echo
  echo "== stage: lit"
  # -print -quit, not `| grep -q .`: under pipefail, grep's early exit
  # kills find with SIGPIPE and the test would wrongly find nothing.
  if [ -z "$(find "$BMB_ROOT/test/lit" -type f \( -name '*.mlir' -o -name '*.bmb' -o -name '*.test' \) \
       -not -path '*/Inputs/*' -print -quit 2>/dev/null)" ]; then
    skip lit "no tests under test/lit"
    return
  fi
  t=$(bmb_now)
  log="$LOGDIR/lit.log"
  local timeout_arg=()
  "$BMB_PYTHON" -c 'import psutil' 2>/dev/null && timeout_arg=(--timeout=300)
  "$BMB_PYTHON" "$BMB_LIT" -sv "${timeout_arg[@]}" "$B/test" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  # lit's summary: "  Passed: 12 (100.00%)", "  Failed: 1 (..)", ...
  p=$(( $(count "$log" '^ +Passed *:') + $(count "$log" '^ +Expectedly Failed *:') ))
  f=$(( $(count "$log" '^ +Failed *:') + $(count "$log" '^ +Unresolved *:') \
      + $(count "$log" '^ +Timed Out *:') + $(count "$log" '^ +Unexpectedly Passed *:') ))
  s=$(( $(count "$log" '^ +Unsupported *:') + $(count "$log" '^ +Skipped *:') \
      + $(count "$log" '^ +Excluded *:') ))
  suite_done lit "$t" "$rc" "$p" "$f" "$s"
}

# run_ctest NAME JOBS CTEST-ARGS...: one ctest selection as a stage.
run_ctest() {
  local name=$1 jobs=$2 t log rc total f s
  shift 2
  echo
  echo "== stage: $name"
  t=$(bmb_now)
  log="$LOGDIR/$name.log"
  # build/test: the top-level CMakeLists.txt need not call enable_testing().
  ctest --test-dir "$B/test" --output-on-failure --timeout 600 -j"$jobs" "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  if grep -q 'No tests were found' "$log"; then
    record "$name" "$(bmb_elapsed "$t")" skipped "no tests"
    return
  fi
  # "100% tests passed, 0 tests failed out of 42"
  total=$(count "$log" '^.*tests failed out of')
  f=$(count "$log" '^.*tests passed, ')
  s=$(grep -cE '^[[:space:]]+[0-9]+ - .* \((Skipped|Disabled)\)$' "$log")
  suite_done "$name" "$t" "$rc" $((total - f - s)) "$f" "$s"
}

# The libFuzzer smoke run: the parser built with clang, ASan and coverage in
# a build dir of its own (only the front end: ~20 s), then at most 30 s of
# fuzzing (ctest fuzz-libfuzzer-smoke).
run_libfuzzer() {
  local fb="${BMB_FUZZ_BUILD_DIR:-$B-fuzz}" t rc=0
  case "$fb" in /*) ;; *) fb="$BMB_ROOT/$fb" ;; esac
  if [ "${BMB_LIBFUZZER:-1}" = 0 ]; then
    skip libfuzzer "BMB_LIBFUZZER=0"
    return
  fi
  if ! command -v clang++-19 >/dev/null 2>&1; then
    skip libfuzzer "no clang++-19"
    return
  fi
  echo
  echo "== stage: libfuzzer-build ($fb)"
  t=$(bmb_now)
  (
    BMB_BUILD_DIR="$fb"
    if [ -f "$fb/build.ninja" ]; then
      BMB_CMAKE_ARGS=""
    else
      BMB_CMAKE_ARGS="-DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 -DBMB_ENABLE_FUZZER=ON"
    fi
    bmb_configure && ninja -C "$fb" -j"$BMB_JOBS" bmb-frontend-fuzzer
  ) || rc=$?
  if [ $rc -ne 0 ]; then
    TOTAL_FAILED=$((TOTAL_FAILED + 1))
    record libfuzzer-build "$(bmb_elapsed "$t")" FAILED "exit $rc"
    return
  fi
  record libfuzzer-build "$(bmb_elapsed "$t")" ok ""
  B="$fb" run_ctest libfuzzer 1 -R '^fuzz-libfuzzer-smoke$'
}

summary() {
  local i total_time
  total_time=$(bmb_elapsed "$RUN_START")
  echo
  echo "== summary ($B, -j$BMB_JOBS)"
  printf '%-16s %9s  %-8s %s\n' stage "time (s)" result detail
  for i in "${!STAGE_NAMES[@]}"; do
    printf '%-16s %9s  %-8s %s\n' "${STAGE_NAMES[$i]}" "${STAGE_TIMES[$i]}" \
      "${STAGE_RESULTS[$i]}" "${STAGE_NOTES[$i]}"
  done
  printf '%-16s %9s\n' total "$total_time"
  if [ "$TOTAL_SKIPPED" -ne 0 ]; then
    echo "$TOTAL_PASSED passed, $TOTAL_FAILED failed, $TOTAL_SKIPPED skipped"
  else
    echo "$TOTAL_PASSED passed, $TOTAL_FAILED failed"
  fi
}

echo "bmb test: checkout $BMB_ROOT, build dir $B, $BMB_JOBS jobs${CI:+, CI=$CI}"

if [ "${BMB_SKIP_DEPS:-0}" = 1 ]; then
  skip deps "BMB_SKIP_DEPS=1"
else
  stage deps "$BMB_ROOT/scripts/install-deps.sh"
fi
stage cuda "$BMB_ROOT/scripts/detect-cuda.sh"
# The Python references (Hugging Face transformers, tokenizers, safetensors
# over Debian's torch) that the runtime and end-to-end tests compare with.
stage venv "$BMB_ROOT/scripts/setup-venv.sh"

if ! stage configure bmb_configure; then
  for s in build lit unit e2e fuzz libfuzzer; do skip "$s" "configure failed"; done
  summary
  exit 1
fi
mkdir -p "$LOGDIR"

# -k 0: build everything that builds, so the suites below still test what
# they can; the build failure itself is reported and fails the run.
stage build ninja -C "$B" -j"$BMB_JOBS" -k 0

run_lit
run_ctest unit "$BMB_JOBS" -E '^(lit|fuzz-.*)$' -LE e2e
# .bmb -> executable -> run, against Hugging Face (label e2e): one at a time,
# each uses both cores.
run_ctest e2e 1 -L e2e
if ! ctest --test-dir "$B/test" -N -R '^fuzz-mutations$' 2>/dev/null | grep -q 'Total Tests: [1-9]'; then
  echo "test: note: no fuzz-mutations test: this tree has no bmbc target yet"
fi
# One at a time (the mutation test runs bmbc on every core itself), verbose.
run_ctest fuzz 1 -R '^fuzz-' -E '^fuzz-libfuzzer' -V
run_libfuzzer

summary
[ "$ANY_FAILED" -eq 0 ]
