#!/usr/bin/env bash
# The main job, end to end: installs dependencies, builds bmbc and libbmrt,
# then takes models/gpt2.bmb's `chat_mini` infer job from source to a running
# program:
#   1. the pass pipeline it runs                  (--print-pipeline)
#   2. the parameter table and memory plan        (--stats)
#   3. a Hugging Face checkpoint + tokenizer      (scripts/make-demo-checkpoint.py:
#      transformers' save_pretrained layout, random weights: no download here)
#   4. the executable                             (bmbc ... -o build/demo/gpt2-chat)
#   5. generation, streamed, with a profile       (gpt2-chat --load ... --prompt ...)
# The weights are random, so the text is noise; the path is the real one.
# Works from any directory. Environment: BMB_BUILD_DIR, BMB_JOBS (see
# scripts/build.sh); BMB_SKIP_DEPS=1 skips the apt and pip steps.
set -uo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

MODEL=models/gpt2.bmb
JOB=chat_mini
DEMO="$BMB_BUILD_DIR/demo"

heading() {
  echo
  echo "================================================================"
  echo "== $*"
  echo "================================================================"
}

heading "1/7 dependencies"
if [ "${BMB_SKIP_DEPS:-0}" != 1 ]; then
  "$BMB_ROOT/scripts/install-deps.sh" || exit 1
fi
"$BMB_ROOT/scripts/detect-cuda.sh"
PY=$("$BMB_ROOT/scripts/setup-venv.sh") || exit 1

heading "2/7 build bmbc and libbmrt ($BMB_BUILD_DIR)"
bmb_configure || exit 1
ninja -C "$BMB_BUILD_DIR" -j"$BMB_JOBS" bmbc bmrt || exit 1
BMBC="$BMB_BUILD_DIR/bin/bmbc"

# bmbc ARGS...: from the checkout, so paths print relative to it.
bmbc() {
  echo "\$ bmbc $*"
  (cd "$BMB_ROOT" && "$BMBC" "$@")
}

heading "3/7 the pass pipeline for job '$JOB'"
bmbc "$MODEL" --job "$JOB" --print-pipeline || exit 1

heading "4/7 parameters and the memory plan"
bmbc "$MODEL" --job "$JOB" --stats || exit 1

heading "5/7 a Hugging Face checkpoint and tokenizer ($DEMO/ckpt-mini)"
if [ ! -f "$DEMO/ckpt-mini/model.safetensors" ] || [ ! -f "$DEMO/ckpt-mini/tokenizer.json" ]; then
  "$PY" "$BMB_ROOT/scripts/make-demo-checkpoint.py" "$DEMO/ckpt-mini" || exit 1
else
  echo "(kept from an earlier run)"
fi

heading "6/7 the executable"
mkdir -p "$DEMO"
bmbc "$MODEL" --job "$JOB" -o "$DEMO/gpt2-chat" || exit 1
"$DEMO/gpt2-chat" --info | head -8

heading "7/7 generate (random weights: expect noise)"
echo "\$ gpt2-chat --load $DEMO/ckpt-mini --prompt 'Once upon a time' --max-tokens 48 --seed 1 --profile"
"$DEMO/gpt2-chat" --load "$DEMO/ckpt-mini" --prompt "Once upon a time" --max-tokens 48 \
  --seed 1 --profile || exit 1
echo
echo "demo: done (the executable: $DEMO/gpt2-chat; bmbc: $BMBC)"
