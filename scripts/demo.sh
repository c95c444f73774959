#!/usr/bin/env bash
# The main job, end to end: installs dependencies, builds bmbc, then shows
# what bmbc does with models/gpt2.bmb's `pretrain` job:
#   1. the pass pipeline it runs        (--print-pipeline)
#   2. the per-rank memory plan          (--stats)
#   3. the MLIR it produces              (--emit=mlir)
# Works from any directory. Environment: BMB_BUILD_DIR, BMB_JOBS (see
# scripts/build.sh); BMB_SKIP_DEPS=1 skips the apt step.
set -uo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

MODEL="$BMB_ROOT/models/gpt2.bmb"
JOB=pretrain
failed=0

heading() {
  echo
  echo "================================================================"
  echo "== $*"
  echo "================================================================"
}

heading "1/5 dependencies"
if [ "${BMB_SKIP_DEPS:-0}" != 1 ]; then
  "$BMB_ROOT/scripts/install-deps.sh" || exit 1
fi
"$BMB_ROOT/scripts/detect-cuda.sh"

heading "2/5 build bmbc ($BMB_BUILD_DIR)"
bmb_configure || exit 1
# Captured first: under pipefail, `ninja ... | grep -q` fails when grep's
# early exit kills ninja with SIGPIPE.
targets=$(ninja -C "$BMB_BUILD_DIR" -t targets all 2>/dev/null)
if ! grep -q '^bmbc:' <<<"$targets"; then
  echo "demo: error: this checkout does not build bmbc yet (no 'bmbc' target)" >&2
  exit 1
fi
ninja -C "$BMB_BUILD_DIR" -j"$BMB_JOBS" bmbc || exit 1
BMBC="$BMB_BUILD_DIR/bin/bmbc"

# run STEP TITLE ARGS...: runs bmbc from the checkout (so paths print relative
# to it) and reports its exit code without stopping the demo.
run() {
  local step=$1 title=$2 rc
  shift 2
  heading "$step $title"
  echo "\$ bmbc $*"
  (cd "$BMB_ROOT" && "$BMBC" "$@")
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "demo: bmbc exited with $rc" >&2
    failed=1
  fi
}

run 3/5 "the pass pipeline for job '$JOB'" models/gpt2.bmb --job "$JOB" --print-pipeline
run 4/5 "the memory plan for job '$JOB'" models/gpt2.bmb --job "$JOB" --stats
run 5/5 "the MLIR for job '$JOB'" models/gpt2.bmb --job "$JOB" --emit=mlir

echo
if [ $failed -eq 0 ]; then
  echo "demo: done (bmbc: $BMBC; source: ${MODEL#"$BMB_ROOT"/})"
else
  echo "demo: some steps failed (see above)" >&2
fi
exit $failed
