"""Checks runtime/io's checkpoint loader and saver against Hugging Face.

Why: the "hf" name map (transposed Conv1D weights, q/k/v split out of
c_attn, lm_head tied to wte) is easy to get subtly wrong, and a wrong map
still loads. So the reference is transformers itself: its GPT-2 writes the
checkpoint, its state_dict (sliced here in Python, independently of the C++
rules) says what every one of our tensors must hold, and its from_pretrained
must give identical logits for the file we write back.

  python check_gpt2_checkpoint.py <checkpoint_tool>

Also: BF16/F16/F64 files convert exactly as torch's .float() does, sharded
checkpoints load, and each kind of bad checkpoint fails with a message that
names the problem. Prints "OK" and exits 0 when everything holds.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import torch
from safetensors.torch import load_file, save_file
from transformers import GPT2Config, GPT2LMHeadModel
from transformers.utils import logging as hf_logging

TOOL = sys.argv[1]
L, C, V, P = 2, 64, 128, 32  # the sizes of tiny_gpt2_program.h
hf_logging.set_verbosity_error()


def make_model(n_layer=L, n_embd=C, seed=1234):
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(
        GPT2Config(n_layer=n_layer, n_embd=n_embd, n_head=4, vocab_size=V, n_positions=P))
    # Redraw everything: HF's init leaves LayerNorms at exactly 1 and biases at
    # 0, which would hide a swapped weight/bias or a missed copy.
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn_like(p) * 0.5)
    return model.eval()


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60)


def expect_ok(*args, layout):
    r = run(*args)
    if r.returncode != 0 or f"layout={layout}" not in r.stdout:
        sys.exit(f"FAIL: {args}: expected success with layout={layout}, got exit "
                 f"{r.returncode}\nstdout: {r.stdout}\nstderr: {r.stderr}")
    return r.stdout


def expect_error(what, path, *needles):
    r = run("load", path)
    if r.returncode != 1 or not r.stderr.startswith("error: "):
        sys.exit(f"FAIL ({what}): expected 'error: ...' and exit 1, got exit {r.returncode}\n"
                 f"stderr: {r.stderr}")
    for needle in needles:
        if needle not in r.stderr:
            sys.exit(f"FAIL ({what}): message lacks {needle!r}:\n{r.stderr}")


def ours_from_hf(sd):
    """Our tensors, derived from HF's state_dict by hand (Conv1D is [in, out])."""
    out = {"wte.w": sd["transformer.wte.weight"], "wpe.w": sd["transformer.wpe.weight"],
           "ln_f.w": sd["transformer.ln_f.weight"], "ln_f.b": sd["transformer.ln_f.bias"]}
    per_layer = {}
    for i in range(L):
        h = f"transformer.h.{i}."
        c_attn_w = sd[h + "attn.c_attn.weight"]  # [C, 3C]: x @ W gives q|k|v
        c_attn_b = sd[h + "attn.c_attn.bias"]
        q_w, k_w, v_w = c_attn_w.split(C, dim=1)
        q_b, k_b, v_b = c_attn_b.split(C, dim=0)
        layer = {
            "h.ln1.w": sd[h + "ln_1.weight"], "h.ln1.b": sd[h + "ln_1.bias"],
            "h.attn.q.w": q_w.t(), "h.attn.k.w": k_w.t(), "h.attn.v.w": v_w.t(),
            "h.attn.q.b": q_b, "h.attn.k.b": k_b, "h.attn.v.b": v_b,
            "h.attn.o.w": sd[h + "attn.c_proj.weight"].t(), "h.attn.o.b": sd[h + "attn.c_proj.bias"],
            "h.ln2.w": sd[h + "ln_2.weight"], "h.ln2.b": sd[h + "ln_2.bias"],
            "h.mlp.up.w": sd[h + "mlp.c_fc.weight"].t(), "h.mlp.up.b": sd[h + "mlp.c_fc.bias"],
            "h.mlp.down.w": sd[h + "mlp.c_proj.weight"].t(),
            "h.mlp.down.b": sd[h + "mlp.c_proj.bias"],
        }
        for name, t in layer.items():
            per_layer.setdefault(name, []).append(t)
    for name, ts in per_layer.items():
        out[name] = torch.stack(ts)
    return {k: v.float().contiguous() for k, v in out.items()}


def check_ours(path, expected, what):
    got = load_file(path)
    if set(got) != set(expected):
        sys.exit(f"FAIL ({what}): tensor names {sorted(got)} != {sorted(expected)}")
    for name, want in expected.items():
        if got[name].dtype != torch.float32 or got[name].shape != want.shape:
            sys.exit(f"FAIL ({what}): {name} is {got[name].dtype} {tuple(got[name].shape)}, "
                     f"expected float32 {tuple(want.shape)}")
        # Bitwise: conversions must match torch's exactly (NaN-free here).
        if not torch.equal(got[name], want):
            diff = (got[name] - want).abs().max().item()
            sys.exit(f"FAIL ({what}): {name} differs from HF's (max abs diff {diff})")


def logits(model, ids):
    with torch.no_grad():
        return model(ids).logits


def main():
    work = tempfile.mkdtemp(prefix="bmrt-io-gpt2-")
    try:
        checks(work)
    finally:
        shutil.rmtree(work)
    print("OK")


def checks(work):
    j = lambda *p: os.path.join(work, *p)
    model = make_model()
    model.save_pretrained(j("hf"), safe_serialization=True)
    sd = {k: v.clone() for k, v in model.state_dict().items()}
    expected = ours_from_hf(sd)

    # (a) HF file -> our names: every tensor is the right slice of HF's.
    expect_ok("convert", j("hf"), j("ours.safetensors"), "ours", layout="hf")
    check_ours(j("ours.safetensors"), expected, "hf -> ours")

    # (b) our names -> hf layout: transformers loads it, same logits.
    os.makedirs(j("back"))
    expect_ok("convert", j("ours.safetensors"), j("back", "model.safetensors"), "hf",
              layout="ours")
    shutil.copy(j("hf", "config.json"), j("back", "config.json"))
    written = load_file(j("back", "model.safetensors"))
    if not torch.equal(written["lm_head.weight"], sd["transformer.wte.weight"]):
        sys.exit("FAIL: the tied lm_head.weight we wrote is not wte")
    reloaded = GPT2LMHeadModel.from_pretrained(j("back")).eval()
    ids = torch.randint(0, V, (2, P), generator=torch.Generator().manual_seed(7))
    if not torch.equal(logits(reloaded, ids), logits(model, ids)):
        sys.exit("FAIL: logits of the checkpoint we wrote differ from the original's")
    # Loading a file whose tied tensor is present (and equal) works, and the
    # round trip is byte-identical.
    expect_ok("convert", j("back"), j("ours2.safetensors"), "ours", layout="hf")
    if open(j("ours.safetensors"), "rb").read() != open(j("ours2.safetensors"), "rb").read():
        sys.exit("FAIL: hf -> ours -> hf -> ours is not byte-identical")
    if any(".tmp." in f for f in os.listdir(work)):
        sys.exit(f"FAIL: a temp file was left behind: {os.listdir(work)}")

    # Other dtypes: converted exactly as torch converts them to float32.
    for dtype, name in [(torch.bfloat16, "BF16"), (torch.float16, "F16"), (torch.float64, "F64")]:
        m = make_model().to(dtype)
        with torch.no_grad():  # values where conversions go wrong: subnormal, max, -0, tiny
            special = torch.tensor([1e-7, -3e-6, 6e-5, 65504.0, -0.0, 1e-40, 3.0e38, -1.5])
            m.transformer.wpe.weight[0, :8] = special.to(dtype)
        m.save_pretrained(j(name), safe_serialization=True)
        expect_ok("convert", j(name), j(name + ".safetensors"), "ours", layout="hf")
        check_ours(j(name + ".safetensors"), ours_from_hf(m.state_dict()), name + " -> F32")

    # Sharded checkpoints (model.safetensors.index.json).
    model.save_pretrained(j("sharded"), safe_serialization=True, max_shard_size="100KB")
    if not os.path.exists(j("sharded", "model.safetensors.index.json")):
        sys.exit("FAIL: HF did not shard the test checkpoint")
    expect_ok("convert", j("sharded"), j("sharded.safetensors"), "ours", layout="hf")
    check_ours(j("sharded.safetensors"), expected, "sharded")

    # HF buffers that carry no parameters are ignored.
    hf = load_file(j("hf", "model.safetensors"))
    extra = dict(hf)
    extra["transformer.h.0.attn.bias"] = torch.ones(1, 1, P, P)
    extra["transformer.h.0.attn.masked_bias"] = torch.tensor(-1e4)
    save_file(extra, j("buffers.safetensors"), metadata={"format": "pt"})
    expect_ok("load", j("buffers.safetensors"), layout="hf")

    bad_checkpoints(j, hf)


def bad_checkpoints(j, hf):
    def variant(name, change):
        tensors = dict(hf)
        change(tensors)
        save_file(tensors, j(name), metadata={"format": "pt"})
        return j(name)

    make_model(n_embd=32).save_pretrained(j("small"), safe_serialization=True)
    expect_error("another size", j("small"),
                 "shape mismatch for tensor 'transformer.wte.weight' (needed for wte.w)",
                 "expected [128, 64], file has [128, 32]", "another architecture or size")
    make_model(n_layer=3).save_pretrained(j("deeper"), safe_serialization=True)
    expect_error("more layers", j("deeper"), "unexpected tensors that name map 'hf' does not use",
                 "'transformer.h.2.")
    make_model(n_layer=1).save_pretrained(j("shallower"), safe_serialization=True)
    expect_error("fewer layers", j("shallower"), "does not fit model 'GPT'",
                 "missing tensor 'transformer.h.1.")
    expect_error("missing tensor",
                 variant("missing.safetensors",
                         lambda t: t.pop("transformer.h.1.attn.c_attn.weight")),
                 "missing tensor 'transformer.h.1.attn.c_attn.weight' (needed for h.attn.q.w + "
                 "h.attn.k.w + h.attn.v.w, layer 1)", "name map 'hf': 1 of 28 tensors missing")
    expect_error("unexpected tensor",
                 variant("unexpected.safetensors",
                         lambda t: t.update({"transformer.extra.weight": torch.zeros(3)})),
                 "1 unexpected tensor that name map 'hf' does not use: 'transformer.extra.weight'")
    expect_error("tied tensor differs",
                 variant("tied.safetensors",
                         lambda t: t.update({"lm_head.weight": torch.zeros(V, C)})),
                 "tensor 'lm_head.weight' is declared tied to wte.w", "values differ")
    expect_error("unsupported dtype",
                 variant("u8.safetensors", lambda t: t.update(
                     {"transformer.ln_f.bias": torch.zeros(C, dtype=torch.uint8)})),
                 "tensor 'transformer.ln_f.bias' has dtype U8, which is not supported")
    expect_error("integer for a float param",
                 variant("i32.safetensors", lambda t: t.update(
                     {"transformer.ln_f.bias": torch.zeros(C, dtype=torch.int32)})),
                 "tensor 'transformer.ln_f.bias' has dtype I32, but ln_f.b is F32")
    os.makedirs(j("pickle"))
    torch.save({}, j("pickle", "pytorch_model.bin"))
    expect_error("no safetensors in the directory", j("pickle"),
                 "no model.safetensors or model.safetensors.index.json in this directory",
                 "pytorch_model.bin")


if __name__ == "__main__":
    main()
