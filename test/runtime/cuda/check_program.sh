#!/usr/bin/env bash
# check_program.sh BMBC SRC_ROOT BMB_FILE JOB WORKDIR PROBE
# Builds JOB of BMB_FILE with `bmbc --target=cuda` (warnings are errors, for
# nvcc and the host compiler), runs the executable, and checks what it says:
#  - no usable GPU here (PROBE fails): exit 1 and
#      "error: no usable CUDA GPU: cudaGetDeviceCount failed: ..."
#  - a GPU: it opens it, makes the planned allocations, and exits 3 with
#      "error: the cuda backend's <kind> executable is not implemented yet"
# A crash, a hang (ctest's timeout) or another message fails the test.
set -u
bmbc=$1 src=$2 bmb=$3 job=$4 work=$5 probe=$6
mkdir -p "$work"
exe=$work/$job
export BMB_NVCC_FLAGS="-Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror"
start=$(date +%s)
if ! "$bmbc" "$bmb" -I "$src" --job "$job" --target=cuda -o "$exe"; then
  echo "FAIL: bmbc --target=cuda could not build $job"
  exit 1
fi
echo "built $job in $(($(date +%s) - start)) s"
"$exe" > "$work/$job.out" 2> "$work/$job.err" < /dev/null
rc=$?
cat "$work/$job.err"
if "$probe" > /dev/null 2>&1; then
  want_rc=3 want="error: the cuda backend's [a-z]* executable is not implemented yet"
else
  want_rc=1 want="error: no usable CUDA GPU: cudaGetDeviceCount failed: "
fi
if [ "$rc" != "$want_rc" ]; then
  echo "FAIL: $job exited with $rc, expected $want_rc"
  exit 1
fi
if ! grep -q "^$want" "$work/$job.err"; then
  echo "FAIL: $job did not say '$want'"
  exit 1
fi
echo "ok: $job exits $rc with the expected message"
