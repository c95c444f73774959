#!/usr/bin/env bash
# The main job, end to end: installs dependencies, builds bmbc and libbmrt,
# then trains models/gpt2.bmb's GPT2Mini (the tiny configuration with a
# 4096-token vocabulary) on the text of Debian's `fortunes` package and
# generates from the checkpoint it saved:
#   1. dependencies (apt, the reference venv)
#   2. bmbc, libbmrt and bmb-tokenize
#   3. the corpus: fortunes -> JSONL, a BPE tokenizer trained on it, a token file
#   4. the train job: its pass pipeline and memory plan (--stats)
#   5. the train executable (bmbc ... --job pretrain_mini -o gpt2-train)
#   6. training: a few minutes, loss falling, checkpoints and a metrics log
#   7. the loss curve as a PNG
#   8. the infer executable generating from the saved checkpoint
# Works from any directory. Environment: BMB_BUILD_DIR, BMB_JOBS (see
# scripts/build.sh); BMB_SKIP_DEPS=1 skips the apt and pip steps;
# BMB_DEMO_STEPS (default: the job's 600, about 3 minutes on 2 cores) sets
# the training length.
set -uo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

MODEL=models/gpt2.bmb
TRAIN_JOB=pretrain_mini
CHAT_JOB=chat_mini
DEMO="$BMB_BUILD_DIR/demo"
STEPS="${BMB_DEMO_STEPS:-600}"

bmb_heading "1/8 dependencies"
if [ "${BMB_SKIP_DEPS:-0}" != 1 ]; then
  "$BMB_ROOT/scripts/install-deps.sh" || exit 1
fi
"$BMB_ROOT/scripts/detect-cuda.sh"

bmb_heading "2/8 build bmbc, libbmrt and bmb-tokenize ($BMB_BUILD_DIR)"
bmb_configure || exit 1
ninja -C "$BMB_BUILD_DIR" -j"$BMB_JOBS" bmbc bmrt bmb-tokenize || exit 1
BMBC="$BMB_BUILD_DIR/bin/bmbc"
TOKENIZE="$BMB_BUILD_DIR/bin/bmb-tokenize"

bmb_heading "3/8 the corpus: Debian's fortunes, a BPE tokenizer, a token file ($DEMO/data)"
mkdir -p "$DEMO/data"
"$BMB_PYTHON" "$BMB_ROOT/scripts/fortunes-corpus.py" "$DEMO/data/fortunes.jsonl" || exit 1
echo "\$ bmb-tokenize --train-bpe 4096 fortunes.jsonl -o tokenizer"
"$TOKENIZE" --train-bpe 4096 "$DEMO/data/fortunes.jsonl" -o "$DEMO/data/tokenizer" || exit 1
echo "\$ bmb-tokenize --tokenizer tokenizer fortunes.jsonl -o fortunes.tok --append-eos"
"$TOKENIZE" --tokenizer "$DEMO/data/tokenizer" "$DEMO/data/fortunes.jsonl" \
  -o "$DEMO/data/fortunes.tok" --append-eos || exit 1

bmb_heading "4/8 the train job: passes and memory plan"
bmb_show_bmbc "$MODEL" --job "$TRAIN_JOB" --print-pipeline || exit 1
bmb_show_bmbc "$MODEL" --job "$TRAIN_JOB" --stats || exit 1

bmb_heading "5/8 the train executable"
bmb_show_bmbc "$MODEL" --job "$TRAIN_JOB" -o "$DEMO/gpt2-train" || exit 1

bmb_heading "6/8 train for $STEPS steps (Ctrl-C saves a checkpoint and stops)"
rm -rf "$DEMO/ckpt" "$DEMO/metrics.jsonl"
echo "\$ gpt2-train --data fortunes.tok --steps $STEPS --save ckpt --log metrics.jsonl"
"$DEMO/gpt2-train" --data "$DEMO/data/fortunes.tok" --steps "$STEPS" --seed 1 \
  --save "$DEMO/ckpt" --save-every 200 --log "$DEMO/metrics.jsonl" || exit 1
CKPT="$DEMO/ckpt/$(cat "$DEMO/ckpt/latest")"

bmb_heading "7/8 the loss curve"
"$BMB_PYTHON" "$BMB_ROOT/scripts/plot-loss.py" "$DEMO/metrics.jsonl" "$DEMO/loss.png" \
  --title "GPT2Mini on fortunes" || exit 1

bmb_heading "8/8 generate from the checkpoint"
bmb_show_bmbc "$MODEL" --job "$CHAT_JOB" -o "$DEMO/gpt2-chat" || exit 1
echo "\$ gpt2-chat --load $CKPT --tokenizer tokenizer --prompt 'The computer' --max-tokens 60"
"$DEMO/gpt2-chat" --load "$CKPT" --tokenizer "$DEMO/data/tokenizer" --prompt "The computer" \
  --max-tokens 60 --seed 1 || exit 1
echo
echo "demo: done"
echo "  checkpoint:   $CKPT (model.safetensors in Hugging Face's GPT-2 layout)"
echo "  metrics log:  $DEMO/metrics.jsonl"
echo "  loss curve:   $DEMO/loss.png"
echo "  executables:  $DEMO/gpt2-train, $DEMO/gpt2-chat (bmbc: $BMBC)"
