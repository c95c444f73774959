#!/usr/bin/env bash
# Runs benchmarks side by side: bench/<name>/bench.py for every <name> given
# (default: all), each with Debian's /usr/bin/python3 and the path of a JSONL
# results file as its argument. Builds bmb first (scripts/build.sh).
# Results: $BMB_BUILD_DIR/bench/results-<time>.jsonl (default build/bench/).
# `bench/run.sh checkpoint`: GPT-2 small training (train/'s job) with and
# without activation checkpointing: planned activations, peak RSS, step time.
# Not a test: nothing here fails on a slow figure.
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"

"$BMB_ROOT/scripts/build.sh"
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for d in "$BMB_ROOT"/bench/*/; do
    [ -f "$d/bench.py" ] && names+=("$(basename "$d")")
  done
fi
out="$BMB_BUILD_DIR/bench/results-$(date +%Y%m%d-%H%M%S).jsonl"
mkdir -p "$(dirname "$out")"
export BMB_BUILD_DIR BMB_ROOT
status=0
for n in "${names[@]}"; do
  echo "== bench: $n"
  t=$(bmb_now)
  py="$BMB_PYTHON"
  # bench/infer builds Hugging Face checkpoints: it needs the reference
  # interpreter (transformers, safetensors), which scripts/setup-venv.sh makes.
  if [ "$n" = infer ]; then py=$("$BMB_ROOT/scripts/setup-venv.sh" | tail -n 1); fi
  if ! "$py" "$BMB_ROOT/bench/$n/bench.py" "$out"; then
    echo "bench: $n failed" >&2
    status=1
  fi
  echo "== bench: $n ... $(bmb_elapsed "$t") s"
done
echo "results: $out"
exit $status
