#!/usr/bin/env bash
# The tuning demo, end to end and offline: pre-trains a small BERT-style
# masked LM (models/bert.bmb's BertMini) on the text of Debian's `fortunes`
# package, then prompt-tunes it with LoRA to tell which fortune file a
# fortune comes from (computers, love, science, food, law, sports), and
# prints the held-out accuracy and macro-F1 next to the majority-class
# baseline:
#   1. dependencies (apt)
#   2. bmbc, libbmrt and bmb-tokenize
#   3. the data: fortunes -> a corpus, a BPE tokenizer with a <mask> token,
#      a token file; the labelled topic examples, split train / validation
#   4. masked-LM pre-training (the pretrain_mlm_mini train job)
#   5. the tune job: its passes, and the executable
#   6. prompt tuning with LoRA (the topics_mini tune job): template
#      "{text_a} This is about {mask}.", verbalizer topics -> label words
# Works from any directory. Environment: BMB_BUILD_DIR, BMB_JOBS (see
# scripts/build.sh); BMB_SKIP_DEPS=1 skips apt; BMB_PRETRAIN_STEPS (default
# the job's 800, about 4 minutes on 2 cores) and BMB_TUNE_STEPS (default the
# job's 300) set the lengths.
set -uo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

MODEL=models/bert.bmb
PRETRAIN_JOB=pretrain_mlm_mini
TUNE_JOB=topics_mini
DEMO="$BMB_BUILD_DIR/demo-tune"
PRETRAIN_STEPS="${BMB_PRETRAIN_STEPS:-800}"
TUNE_STEPS="${BMB_TUNE_STEPS:-300}"

heading() {
  echo
  echo "================================================================"
  echo "== $*"
  echo "================================================================"
}

heading "1/6 dependencies"
if [ "${BMB_SKIP_DEPS:-0}" != 1 ]; then
  "$BMB_ROOT/scripts/install-deps.sh" || exit 1
fi

heading "2/6 build bmbc, libbmrt and bmb-tokenize ($BMB_BUILD_DIR)"
bmb_configure || exit 1
ninja -C "$BMB_BUILD_DIR" -j"$BMB_JOBS" bmbc bmrt bmb-tokenize || exit 1
BMBC="$BMB_BUILD_DIR/bin/bmbc"
TOKENIZE="$BMB_BUILD_DIR/bin/bmb-tokenize"

bmbc() {
  echo "\$ bmbc $*"
  (cd "$BMB_ROOT" && "$BMBC" "$@")
}

heading "3/6 the data ($DEMO/data)"
DATA="$DEMO/data"
mkdir -p "$DATA"
"$BMB_PYTHON" "$BMB_ROOT/scripts/fortunes-corpus.py" "$DATA/fortunes.jsonl" || exit 1
echo "\$ bmb-tokenize --train-bpe 4096 fortunes.jsonl -o tokenizer --mask-token '<mask>'"
"$TOKENIZE" --train-bpe 4096 "$DATA/fortunes.jsonl" -o "$DATA/tokenizer" --mask-token '<mask>' || exit 1
echo "\$ bmb-tokenize --tokenizer tokenizer fortunes.jsonl -o fortunes.tok --append-eos"
"$TOKENIZE" --tokenizer "$DATA/tokenizer" "$DATA/fortunes.jsonl" -o "$DATA/fortunes.tok" \
  --append-eos || exit 1
"$BMB_PYTHON" "$BMB_ROOT/scripts/fortunes-topics.py" "$DATA/fortunes.jsonl" "$DATA/topics" || exit 1

heading "4/6 masked-LM pre-training for $PRETRAIN_STEPS steps"
bmbc "$MODEL" --job "$PRETRAIN_JOB" -o "$DEMO/mlm-train" || exit 1
rm -rf "$DEMO/ckpt-mlm"
echo "\$ mlm-train --data fortunes.tok --steps $PRETRAIN_STEPS --save ckpt-mlm"
"$DEMO/mlm-train" --data "$DATA/fortunes.tok" --steps "$PRETRAIN_STEPS" --seed 1 \
  --save "$DEMO/ckpt-mlm" --save-every "$PRETRAIN_STEPS" --log "$DEMO/mlm-metrics.jsonl" || exit 1
BACKBONE="$DEMO/ckpt-mlm/$(cat "$DEMO/ckpt-mlm/latest")"

heading "5/6 the tune job: passes and executable"
bmbc "$MODEL" --job "$TUNE_JOB" --print-pipeline || exit 1
bmbc "$MODEL" --job "$TUNE_JOB" --stats || exit 1
bmbc "$MODEL" --job "$TUNE_JOB" -o "$DEMO/topics-tune" || exit 1

heading "6/6 prompt tuning with LoRA for $TUNE_STEPS steps"
rm -rf "$DEMO/ckpt-tune"
echo "\$ topics-tune --load $BACKBONE --data topics/train.jsonl --val topics/val.jsonl" \
  "--steps $TUNE_STEPS --save ckpt-tune"
"$DEMO/topics-tune" --load "$BACKBONE" --tokenizer "$DATA/tokenizer" \
  --data "$DATA/topics/train.jsonl" --val "$DATA/topics/val.jsonl" --steps "$TUNE_STEPS" \
  --seed 1 --save "$DEMO/ckpt-tune" --log "$DEMO/tune-metrics.jsonl" || exit 1
echo
echo "demo-tune: done"
echo "  backbone:     $BACKBONE"
echo "  delta:        $DEMO/ckpt-tune (LoRA and prompt params only, with the backbone's hash)"
echo "  metrics logs: $DEMO/mlm-metrics.jsonl, $DEMO/tune-metrics.jsonl"
