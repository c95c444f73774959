#!/usr/bin/env bash
# check_program.sh BMBC SRC_ROOT BMB_FILE JOB WORKDIR PROBE KIND
# Builds JOB of BMB_FILE with `bmbc --target=cuda` (warnings are errors, for
# nvcc and the host compiler), runs the executable, and checks what it says.
# KIND is lm (a CausalLM infer job), encoder (an encoder's infer job), train
# (bf16 and fp16 jobs included) or tune; infer jobs run on fresh parameters
# (--init) with a 3-token prompt, train jobs 2 steps on random bytes
# (--tokenizer byte), tune jobs 2 steps from a backbone file that does not
# exist (their run on a GPU is cuda-gpu.tune's, which has a backbone).
#  - no usable GPU here (PROBE fails): exit 1 and
#      "error: no usable CUDA GPU: cudaGetDeviceCount failed: ..."
#  - a GPU, infer: exit 0 (lm: 2 generated ids; encoder: one line of floats)
#  - a GPU, train: exit 0 and "done: 2 steps"
#  - a GPU, tune: exit 1 after the GPU line, at the missing backbone
# A crash, a hang (ctest's timeout) or another message fails the test.
set -u
bmbc=$1 src=$2 bmb=$3 job=$4 work=$5 probe=$6 kind=$7
mkdir -p "$work"
exe=$work/$job
export BMB_NVCC_FLAGS="-Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror"
start=$(date +%s)
if ! "$bmbc" "$bmb" -I "$src" --job "$job" --target=cuda -o "$exe"; then
  echo "FAIL: bmbc --target=cuda could not build $job"
  exit 1
fi
echo "built $job in $(($(date +%s) - start)) s"
case $kind in
  lm) args=(--init 1 --prompt-ids 1,2,3 --max-tokens 2 --ignore-eos --output ids)
      want_out='^[0-9]+ [0-9]+$' ;;
  encoder) args=(--init 1 --prompt-ids 1,2,3) want_out='^-?[0-9]' ;;
  train)
    head -c 24000 /dev/urandom | base64 > "$work/$job.txt"
    args=(--data "$work/$job.txt" --tokenizer byte --steps 2 --val-fraction 0) want_out='' ;;
  tune) args=(--load "$work/$job.missing.safetensors" --data "$work/$job.missing.tsv" --steps 2)
    want_out='' ;;
  *) echo "FAIL: unknown kind '$kind'"; exit 1 ;;
esac
"$exe" "${args[@]}" > "$work/$job.out" 2> "$work/$job.err" < /dev/null
rc=$?
cat "$work/$job.err"
if ! "$probe" > /dev/null 2>&1; then
  want_rc=1 want="error: no usable CUDA GPU: cudaGetDeviceCount failed: " want_out=''
elif [ "$kind" = train ]; then
  want_rc=0 want="done: 2 steps"
elif [ "$kind" = tune ]; then
  want_rc=1 want="cuda: GPU [0-9]*: "
else
  want_rc=0 want="cuda: GPU [0-9]*: "
fi
if [ "$rc" != "$want_rc" ]; then
  echo "FAIL: $job exited with $rc, expected $want_rc"
  exit 1
fi
if ! grep -q "^$want" "$work/$job.err"; then
  echo "FAIL: $job did not say '$want'"
  exit 1
fi
if [ -n "$want_out" ] && ! grep -Eq "$want_out" "$work/$job.out"; then
  echo "FAIL: $job printed '$(head -c 200 "$work/$job.out")', expected /$want_out/"
  exit 1
fi
echo "ok: $job exits $rc with the expected output"
