#!/usr/bin/env bash
# bmbc after `cmake --install`: installs the build into a scratch prefix, then
# builds an infer executable with the installed bmbc (which must find
# <prefix>/include/bmrt, <prefix>/lib/bmb/libbmrt.a and the installed stdlib
# and models, not the build tree) and runs it.
#
#   check_install.sh BUILD_DIR SCRATCH_DIR PYTHON
set -euo pipefail
build=$1 scratch=$2 py=$3
rm -rf "$scratch"
mkdir -p "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" > "$scratch/install.log"
cat > "$scratch/chat.bmb" <<'BMB'
import "models/gpt2.bmb"
infer nano_chat for GPT2Nano {
  sampling = greedy
}
BMB
# Hide the build tree's runtime: an installed bmbc must not need it.
cd "$scratch"
"$scratch/prefix/bin/bmbc" chat.bmb -o "$scratch/chat"
"$scratch/chat" --info | grep -q "model: GPT2Nano"
# It runs: zero parameters give uniform logits, so greedy picks token 0.
# The checkpoint (our names, every param zero) is written from --info.
"$scratch/chat" --info | "$py" -c '
import re, sys, numpy as np
from safetensors.numpy import save_file
t = {m.group(1): np.zeros([int(d) for d in m.group(2).split(",")], np.float32)
     for m in re.finditer(r"^\s+(\S+)\s+f32\[([0-9, ]+)\]", sys.stdin.read(), re.M)}
assert t, "no params in --info"
save_file(t, sys.argv[1])' "$scratch/zeros.safetensors"
out=$("$scratch/chat" --load "$scratch/zeros.safetensors" --prompt-ids 1,2,3 --max-tokens 3 \
        --ignore-eos --output ids)
[ "$out" = "0 0 0" ] || { echo "unexpected output: '$out'" >&2; exit 1; }
echo "installed bmbc builds and runs an infer executable"
