#!/usr/bin/env bash
# Makes .venv-ref/: the Python that the reference tests and benchmarks use.
# It is built from Debian's interpreter with --system-site-packages, so it
# sees Debian's python3-torch and python3-numpy, and adds from PyPI the
# Hugging Face packages we compare against (implementations nobody here
# wrote): transformers (the last release line that supports torch 1.13),
# tokenizers and safetensors. Idempotent: re-runs only pip when the pins
# change. Prints the path of the interpreter.
#
#   scripts/setup-venv.sh            # -> .venv-ref/bin/python
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

VENV="${BMB_VENV:-$BMB_ROOT/.venv-ref}"
PINS="transformers==4.40.2 tokenizers==0.19.1 safetensors==0.4.3"
STAMP="$VENV/.bmb-pins"

if [ ! -x /usr/bin/python3 ]; then
  echo "error: Debian's /usr/bin/python3 is missing (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$PINS" ]; then
  # shellcheck disable=SC2086  # PINS is a list of words
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check $PINS
  echo "$PINS" > "$STAMP"
fi
"$VENV/bin/python" -c 'import torch, numpy, transformers, tokenizers, safetensors' || {
  echo "error: $VENV cannot import torch/numpy/transformers/tokenizers/safetensors" >&2
  exit 1
}
echo "$VENV/bin/python"
