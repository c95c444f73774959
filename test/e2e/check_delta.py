#!/usr/bin/env python3
"""Delta tuning (bmb-insert-deltas) against a torch reference assembled here.

usage: check_delta.py KIND EXE WORKDIR [INFER_EXE...] [BACKBONE_EXE]

KIND is lora, lora-dropout, lora-iter, adapter, bitfit, prefix, serve,
serve-adapter or serve-bitfit; EXE the train executable of the job e2e_delta_KIND (- as _;
serve: e2e_delta_lora, serve-X: e2e_delta_X) of test/e2e/train_delta.bmb
(GPT-2 nano, settings in DELTAS below). PEFT is not installed, so the reference is transformers' GPT-2 with
the delta written out in torch (forward hooks): LoRA adds
(alpha/r) (x A^T) B^T to the q and v thirds of c_attn; adapters add
up(gelu_tanh(down(y))) to the outputs of attn and mlp; BitFit trains the
biases; prefix tuning passes each layer's prefixes as past_key_values
([B, heads, P, head_dim], the same leaves for every sequence) with
position_ids 0..T-1 (the prefix shifts no position; OpenDelta's semantics). Every check starts from hf_reference's GPT-2 nano (re-drawn
weights) plus delta tensors drawn here (non-zero, so that every delta
gradient is non-trivial), in one safetensors file: the backbone under its
Hugging Face names, the deltas under ours (h.attn.q.lora_a, [layers, ...]).

  1. one step (--dump-grads): the loss to 1e-5 and every delta param's
     gradient to 1e-4 of the largest reference value, per tensor;
  2. five AdamW steps (--save): every frozen tensor bit-identical to the
     start, every trained one changed;
  3. the step's delta.safetensors (only the trained tensors, the backbone
     pinned by a hash) is under 5% of model.safetensors; --load of the
     backbone + --load-delta evaluates (--eval-only) exactly as --load of
     the full checkpoint; over another backbone (one weight changed) it is
     refused;
  lora-iter: 1, 2 and 3 with LoRA on layer 1 of 2 only (`h.1.attn.q`): its
     tensors stack that layer only ([1, ...]); layer 0 is the backbone's;
  lora-dropout: 1 and 2 with LoRA's input dropout (p 0.1), torch applying
     the masks drawn by check_train.dropout_keep (Philox, ids 0 and 1 for q
     and v, the layer index); 5 straight vs 3 + --resume + 2 steps give
     bit-identical weights;
  lora only:
  4. from the bare backbone (no delta tensors in the file): the deltas start
     from their initializers (B = 0), so the loss equals the backbone's;
  5. INFER_EXE (the infer job with the same delta, merged into the weights
     at load) and UNMERGED_INFER_EXE (merge = false: the delta computed
     beside the weights) on the checkpoint of 2: their logits equal each
     other and transformers' with the LoRA merged into the weights
     (W_q += (alpha/r) B A, in float64) to 1e-5 relative; the backbone plus
     --load-delta gives the full checkpoint's logits exactly; a file without
     the delta tensors is refused.
  serve (7; INFER_EXE and UNMERGED_INFER_EXE as for lora, BACKBONE_EXE the
  infer job without a delta): two LoRA deltas (a and b: one step each from
  the backbone plus LoRA tensors drawn with two seeds) served by one process
  (--delta a=A --delta b=B) to a stdin stream alternating a, b, none (the
  backbone alone) in plain and JSON lines: every request's tokens and dumped
  logits are bit-identical to a separate run with that delta alone (--delta
  FILE, or --use-delta none), merged and unmerged; none's logits equal the
  backbone job's (bit-identical); an unknown delta name and a
  malformed JSON line fail alone (named by line, the rest served, exit 1);
  a duplicate name (exit 2) and a delta pinned to another backbone (exit 1,
  naming the file, before any request) are refused at start-up.
  serve-adapter, serve-bitfit: the same with the adapter and the BitFit infer
  jobs (adapters copied in; BitFit's deltas are backbone biases, restored
  from their pristine copy for none). Every none is bit-identical to the
  backbone job.
  prefix-iter: 1, 2, 3 and 8 with the prefix on layer 1 of 2 only
     (`h.1.attn`; layer 0's past_key_values are empty);
  prefix only:
  8. INFER_EXE (the infer job with the same prefix) on the checkpoint of 2:
     the logits of its prefill and of a decode step (the KV cache holds the
     prefix) equal transformers' with the trained prefixes as
     past_key_values to 1e-5 relative.
  adapter only:
  6. INFER_EXE (the infer job with the same adapters) on the checkpoint of
     2: the logits of its prefill and of a decode step equal transformers'
     with the trained adapters (hooks) to 1e-5 relative.
"""

import os
import shutil
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_train  # noqa: E402
import configs  # noqa: E402
import harness  # noqa: E402
import tokfile  # noqa: E402

CONFIG = "gpt2-nano"
B, T = 4, 64
DELTAS = {
    "lora": dict(rank=4, alpha=8.0, on=("q", "v")),
    "lora-dropout": dict(rank=4, alpha=8.0, on=("q", "v"), dropout=0.1, ids={"q": 0, "v": 1}),
    "lora-iter": dict(rank=4, alpha=8.0, on=("q", "v"), layers=(1,)),
    "adapter": dict(dim=8, on=("attn", "mlp")),
    "bitfit": dict(),
    "prefix": dict(length=4),
    "prefix-iter": dict(length=4, layers=(1,)),
}
THREADS = ["--threads", "2"]
SEED = 5  # --seed of every run: LoRA dropout's masks


def save_file(tensors, path):
    from safetensors.numpy import save_file as save
    save({k: np.ascontiguousarray(v) for k, v in tensors.items()}, path,
         metadata={"format": "pt"})


class Setup:
    def __init__(self, kind, workdir, label=None):
        self.kind = kind
        self.c = configs.get(CONFIG)
        self.L, self.D = self.c["layers"], self.c["dim"]
        self.dir = os.path.join(workdir, "delta-" + (label or kind))
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.init = os.path.join(self.dir, "init")
        check_train.init_model(self.c).save_pretrained(self.init, safe_serialization=True)
        rng = np.random.default_rng(11)
        self.ids = rng.integers(0, self.c["vocab"], 8 * B * T + 1).tolist()
        self.data = os.path.join(self.dir, "data.tok")
        tokfile.write(self.data, self.ids, self.c["vocab"])
        self.backbone = check_train.load_safetensors(os.path.join(self.init, "model.safetensors"))
        self.deltas = self.draw(np.random.default_rng(5))
        self.start = os.path.join(self.dir, "start.safetensors")
        save_file({**self.backbone, **self.deltas}, self.start)

    def draw(self, rng):
        L, D = self.L, self.D
        d = DELTAS[self.kind]
        n = lambda *shape: rng.normal(0.0, 0.3, shape).astype(np.float32)  # noqa: E731
        out = {}
        if self.kind.startswith("lora"):
            stack = len(d.get("layers", range(L)))  # per-iteration: the selected layers
            for m in d["on"]:
                out["h.attn.%s.lora_a" % m] = n(stack, d["rank"], D)
                out["h.attn.%s.lora_b" % m] = n(stack, D, d["rank"])
        elif self.kind == "adapter":
            for m in d["on"]:
                out["h.%s.adapter.down.w" % m] = n(L, d["dim"], D)
                out["h.%s.adapter.down.b" % m] = n(L, d["dim"])
                out["h.%s.adapter.up.w" % m] = n(L, D, d["dim"])
                out["h.%s.adapter.up.b" % m] = n(L, D)
        elif self.kind.startswith("prefix"):
            stack = len(d.get("layers", range(L)))
            for part in ("key", "value"):
                out["h.attn.prefix_%s" % part] = n(stack, d["length"], D)
        return out

    def batch(self, step):
        rows = [self.ids[(step * B + b) * T:(step * B + b) * T + T + 1] for b in range(B)]
        w = torch.tensor(rows, dtype=torch.long)
        return w[:, :T], w[:, 1:]

    def run(self, fails, label, exe, load, *args):
        start = [] if "--resume" in args else ["--load", load]
        cmd = [exe] + start + ["--data", self.data, "--order", "sequential", "--val-fraction",
                               "0", "--seed", str(SEED)] + THREADS + [str(a) for a in args]
        p = harness.run(cmd)
        if p.returncode != 0:
            fails.add("%s: exit %s\n%s" % (label, p.returncode, harness.tail(p.stderr)))
            return None
        return p


def reference(s, deltas):
    """transformers' GPT-2 with the deltas as torch leaves (hooks); returns
    (model, {our name: leaf})."""
    model = check_train.lm_class(s.c).from_pretrained(s.init).float()
    model.config._attn_implementation = "eager"
    model.train()
    for p in model.parameters():
        p.requires_grad_(s.kind == "bitfit" and p.dim() == 1 and not is_norm_weight(model, p))
    leaves = {k: torch.tensor(v, requires_grad=True) for k, v in deltas.items()}
    d, D = DELTAS[s.kind], s.D
    for i, block in enumerate(model.transformer.h):
        if s.kind.startswith("lora"):
            layers = list(d.get("layers", range(s.L)))
            if i not in layers:
                continue  # a LoRA on some layers only: this one is the backbone's
            slot = layers.index(i)  # its entry in the tensors stacked over `layers`
            scale = d["alpha"] / d["rank"]
            parts = {m: (leaves["h.attn.%s.lora_a" % m], leaves["h.attn.%s.lora_b" % m])
                     for m in d["on"]}
            drop = {m: lambda x: x for m in d["on"]}
            if d.get("dropout"):
                p = d["dropout"]
                for m in d["on"]:
                    keep = check_train.dropout_keep(SEED, 1, 0, d["ids"][m], i, (B, T, D), p)
                    drop[m] = check_train.FixedMask(keep, p)

            def lora(mod, inputs, out, slot=slot, parts=parts, scale=scale, drop=drop):
                x = inputs[0]
                q, k, v = out[..., :D], out[..., D:2 * D], out[..., 2 * D:]
                add = lambda y, m: y if m not in parts else (  # noqa: E731
                    y + scale * (drop[m](x) @ parts[m][0][slot].T) @ parts[m][1][slot].T)
                return torch.cat([add(q, "q"), add(k, "k"), add(v, "v")], dim=-1)
            block.attn.c_attn.register_forward_hook(lora)
        elif s.kind == "adapter":
            for m in d["on"]:
                dw, db, uw, ub = (leaves["h.%s.adapter.%s" % (m, x)]
                                  for x in ("down.w", "down.b", "up.w", "up.b"))

                def adapter(mod, inputs, out, i=i, dw=dw, db=db, uw=uw, ub=ub):
                    y = out[0] if isinstance(out, tuple) else out
                    h = torch.nn.functional.gelu(y @ dw[i].T + db[i], approximate="tanh")
                    y = y + h @ uw[i].T + ub[i]
                    return (y,) + tuple(out[1:]) if isinstance(out, tuple) else y
                getattr(block, m).register_forward_hook(adapter)
        elif s.kind.startswith("prefix"):
            # GPT-2's causal mask buffer covers n_positions keys; the prefix
            # adds P: a larger lower triangle (the same mask otherwise).
            n = s.c["ctx"] + d["length"]
            block.attn.register_buffer(
                "bias", torch.tril(torch.ones((n, n), dtype=torch.bool)).view(1, 1, n, n),
                persistent=False)
    return model, leaves


def prefix_past(s, leaves, batch):
    """Each layer's (key, value) prefixes as past_key_values: [batch, heads,
    P, head_dim], the same leaves for every sequence; empty (P = 0) for a
    layer without a prefix."""
    H = s.c["heads"]
    layers = list(DELTAS[s.kind].get("layers", range(s.L)))
    out = []
    for i in range(s.L):
        kv = []
        for part in ("key", "value"):
            if i not in layers:
                kv.append(torch.zeros(batch, H, 0, s.D // H))
                continue
            x = leaves["h.attn.prefix_%s" % part][layers.index(i)]  # [P, D], heads major
            P = x.shape[0]
            kv.append(x.view(P, H, s.D // H).permute(1, 0, 2).unsqueeze(0)
                      .expand(batch, H, P, s.D // H))
        out.append(tuple(kv))
    return tuple(out)


def prefix_logits(s, model, leaves, tokens):
    """The logits of `tokens` [batch, T] with the prefixes (positions 0..T-1)."""
    batch, t = tokens.shape
    pos = torch.arange(t).unsqueeze(0).expand(batch, t)
    return model(input_ids=tokens, past_key_values=prefix_past(s, leaves, batch),
                 position_ids=pos).logits


def is_norm_weight(model, p):
    return any(p is m.weight for m in model.modules() if isinstance(m, torch.nn.LayerNorm))


def check_step(fails, s, exe):
    dump = os.path.join(s.dir, "grads.safetensors")
    log = os.path.join(s.dir, "grads.jsonl")
    if not s.run(fails, "one step with --dump-grads", exe, s.start, "--steps", 1,
                 "--dump-grads", dump, "--log", log):
        return
    model, leaves = reference(s, s.deltas)
    tokens, targets = s.batch(0)
    if s.kind.startswith("prefix"):
        logits = prefix_logits(s, model, leaves, tokens)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 targets.reshape(-1))
    else:
        loss = check_train.torch_loss(model, tokens, targets)
    loss.backward()
    ours_loss = check_train.logged(log)[0]["loss"]
    err = abs(ours_loss - float(loss)) / abs(float(loss))
    print("loss: ours %.7f, torch %.7f, rel %.2e" % (ours_loss, float(loss), err))
    fails.check(err <= 1e-5, "loss %.7f vs torch %.7f (rel %.2e)" % (ours_loss, float(loss), err))
    ours = check_train.load_safetensors(dump)
    ref = {k: v.grad.double().numpy() for k, v in leaves.items()}
    if s.kind == "bitfit":
        ref = {n: p.grad.double().numpy() for n, p in model.named_parameters() if p.requires_grad}
        fails.check(len(ref) == 6 * s.L + 1, "bitfit reference trains %d biases" % len(ref))
    for name, g in sorted(ref.items()):
        if name not in ours:
            fails.add("--dump-grads has no %s" % name)
            continue
        e = harness.rel_err(ours[name].astype(np.float64), g)
        print("%-32s %-14s rel %.2e" % (name, tuple(g.shape), e))
        fails.check(e <= harness.TOL, "gradient of %s differs: %.2e" % (name, e))
    # Frozen params get no gradient: the dump holds zeros for them.
    for name, g in ours.items():
        if name not in ref and name != "lm_head.weight":
            fails.check(not np.any(g), "frozen %s has a non-zero gradient" % name)


def check_frozen(fails, s, exe):
    save = os.path.join(s.dir, "ckpt")
    if not s.run(fails, "five steps and save", exe, s.start, "--steps", 5, "--save", save):
        return None
    ckpt = check_train.latest(save)
    after = check_train.load_safetensors(os.path.join(ckpt, "model.safetensors"))
    start = {**s.backbone, **s.deltas}
    trained = set(s.deltas)
    if s.kind == "bitfit":
        trained = {n for n in s.backbone if n.endswith(".bias")}
    same = changed = 0
    for name, v in sorted(start.items()):
        if name not in after:
            if not name.endswith((".attn.bias", ".attn.masked_bias")):
                fails.add("the checkpoint lacks %s" % name)
            continue
        identical = after[name].tobytes() == v.tobytes()
        if name in trained:
            changed += not identical
            fails.check(not identical, "trained %s did not change in 5 steps" % name)
        else:
            same += identical
            fails.check(identical, "frozen %s changed in 5 steps" % name)
    print("after 5 steps: %d frozen tensors bit-identical, %d trained tensors changed"
          % (same, changed))
    size = os.path.getsize(os.path.join(ckpt, "model.safetensors"))
    delta_bytes = sum(after[n].nbytes for n in trained if n in after)
    print("delta tensors: %d bytes of %d (%.1f%% of the checkpoint)"
          % (delta_bytes, size, 100.0 * delta_bytes / size))
    return ckpt


def eval_only(fails, s, exe, label, *load):
    p = harness.run([exe] + list(load) + ["--data", s.data, "--eval-only", "--eval-split", "all"]
                    + THREADS)
    if p.returncode != 0:
        fails.add("%s: exit %s\n%s" % (label, p.returncode, harness.tail(p.stderr)))
        return None
    return harness.text(p.stdout).strip()


def check_delta_checkpoint(fails, s, exe, ckpt):
    delta = os.path.join(ckpt, "delta.safetensors")
    if not fails.check(os.path.exists(delta), "the checkpoint has no delta.safetensors"):
        return
    full = os.path.getsize(os.path.join(ckpt, "model.safetensors"))
    small = os.path.getsize(delta)
    print("delta checkpoint: %d bytes, %.2f%% of model.safetensors (%d bytes)"
          % (small, 100.0 * small / full, full))
    fails.check(small < 0.05 * full, "delta.safetensors is %d of %d bytes" % (small, full))
    names = set(check_train.load_safetensors(delta))
    if s.kind == "bitfit":  # the 9 bias params, our names (h.ln1.b, ..., ln_f.b)
        fails.check(len(names) == 9 and all(n.endswith(".b") for n in names),
                    "bitfit's delta checkpoint holds %s" % sorted(names))
    else:
        fails.check(names == set(s.deltas), "delta.safetensors holds %s, want %s"
                    % (sorted(names), sorted(s.deltas)))
    a = eval_only(fails, s, exe, "--eval-only of the full checkpoint", "--load", ckpt)
    b = eval_only(fails, s, exe, "--eval-only of backbone + delta", "--load", s.init,
                  "--load-delta", delta)
    print("eval-only, full checkpoint: %s; backbone + delta: %s"
          % (a and a.replace("\n", ", "), b and b.replace("\n", ", ")))
    fails.check(a is not None and a == b, "backbone + delta evaluates differently")
    other = dict(s.backbone)
    other["transformer.wpe.weight"] = other["transformer.wpe.weight"] * np.float32(1.001)
    other_path = os.path.join(s.dir, "other-backbone.safetensors")
    save_file(other, other_path)
    p = harness.run([exe, "--load", other_path, "--load-delta", delta, "--data", s.data,
                     "--eval-only"] + THREADS)
    fails.check(p.returncode not in (0, None) and b"tuned on another backbone" in p.stderr,
                "a delta over another backbone: exit %s, %s"
                % (p.returncode, harness.tail(p.stderr, 2)))
    print("over another backbone: %s" % harness.tail(p.stderr, 1))


def check_resume(fails, s, exe):
    straight, split = os.path.join(s.dir, "straight"), os.path.join(s.dir, "split")
    if not (s.run(fails, "5 steps straight", exe, s.start, "--steps", 5, "--save", straight)
            and s.run(fails, "3 steps", exe, s.start, "--steps", 3, "--save", split)
            and s.run(fails, "--resume to 5", exe, s.start, "--steps", 5, "--save", split,
                      "--resume")):
        return
    a = check_train.load_safetensors(os.path.join(check_train.latest(straight),
                                                  "model.safetensors"))
    b = check_train.load_safetensors(os.path.join(check_train.latest(split), "model.safetensors"))
    same = sorted(a) == sorted(b) and all(a[k].tobytes() == b[k].tobytes() for k in a)
    print("resume: 5 straight vs 3 + --resume + 2: %s" % ("bit-identical" if same else "DIFFER"))
    fails.check(same, "5 steps straight and 3 + --resume + 2 differ")


def check_fresh_lora(fails, s, exe):
    log = os.path.join(s.dir, "fresh.jsonl")
    p = s.run(fails, "one step from the bare backbone", exe, s.init, "--steps", 1, "--log", log)
    if not p:
        return
    out = harness.text(p.stdout) + harness.text(p.stderr)
    fails.check("4 fresh delta tensors" in out, "the banner does not report 4 fresh deltas")
    model = check_train.lm_class(s.c).from_pretrained(s.init).float()
    model.config._attn_implementation = "eager"
    with torch.no_grad():
        ref = float(check_train.torch_loss(model, *s.batch(0)))
    ours = check_train.logged(log)[0]["loss"]
    err = abs(ours - ref) / ref
    print("fresh LoRA (B = 0): loss %.7f, backbone %.7f, rel %.2e" % (ours, ref, err))
    fails.check(err <= 1e-5, "fresh LoRA changes the loss: %.7f vs %.7f" % (ours, ref))


def infer_logits(fails, s, exe, load, prompt, label, steps=1):
    """The logits of the prefill (steps 1) and of steps - 1 greedy decode
    steps, concatenated."""
    out = os.path.join(s.dir, "infer-dump-" + label)
    shutil.rmtree(out, ignore_errors=True)
    args = ["--prompt-ids", ",".join(map(str, prompt)), "--max-tokens", str(steps), "--sampling",
            "greedy", "--ignore-eos", "--output", "ids", "--dump", out]
    p = harness.run([exe] + load + args)
    if p.returncode != 0:
        fails.add("%s infer %s: exit %s\n%s"
                  % (label, " ".join(load), p.returncode, harness.tail(p.stderr)))
        return None
    return np.concatenate([np.load(os.path.join(out, "step%04d_logits.npy" % k)).reshape(-1)
                           for k in range(steps)]).astype(np.float64)


def check_merged_lora(fails, s, ckpt, infer_exe, unmerged_exe):
    tensors = check_train.load_safetensors(os.path.join(ckpt, "model.safetensors"))
    d, D = DELTAS["lora"], s.D
    scale = d["alpha"] / d["rank"]
    merged = {k: v.astype(np.float64) for k, v in tensors.items() if not k.startswith("h.")}
    for i in range(s.L):
        w = merged["transformer.h.%d.attn.c_attn.weight" % i]  # [in, 3 out]
        for m, col in (("q", 0), ("v", 2)):
            a = tensors["h.attn.%s.lora_a" % m][i].astype(np.float64)
            b = tensors["h.attn.%s.lora_b" % m][i].astype(np.float64)
            w[:, col * D:(col + 1) * D] += scale * (b @ a).T
    cls = check_train.lm_class(s.c)
    cfg = cls.config_class.from_pretrained(s.init)
    cfg._attn_implementation = "eager"
    model = cls(cfg).double().eval()
    model.load_state_dict({k: torch.from_numpy(v) for k, v in merged.items()}, strict=False)
    model.tie_weights()
    prompt = s.ids[:16]
    with torch.no_grad():
        first = model(input_ids=torch.tensor([prompt])).logits[0, -1]
        second = model(input_ids=torch.tensor([prompt + [int(first.argmax())]])).logits[0, -1]
    ref = torch.cat([first, second]).numpy()
    merged = infer_logits(fails, s, infer_exe, ["--load", ckpt], prompt, "merged", steps=2)
    unmerged = infer_logits(fails, s, unmerged_exe, ["--load", ckpt], prompt, "unmerged",
                            steps=2)
    split = infer_logits(fails, s, infer_exe, ["--load", s.init, "--load-delta",
                                               os.path.join(ckpt, "delta.safetensors")],
                         prompt, "backbone-delta", steps=2)
    if merged is None or unmerged is None or split is None:
        return
    fails.check(np.array_equal(merged, split),
                "infer: --load backbone --load-delta differs from --load of the full checkpoint")
    for label, ours in (("merged at load", merged), ("unmerged", unmerged)):
        err = harness.rel_err(ours, ref)
        print("LoRA inference (prefill, a decode step), %s, vs transformers with the LoRA "
              "merged (float64): rel %.2e"
              % (label, err))
        fails.check(err <= 1e-5, "%s LoRA logits differ from the reference (rel %.2e)"
                    % (label, err))
    err = harness.rel_err(merged, unmerged)
    print("LoRA inference merged vs unmerged: rel %.2e" % err)
    fails.check(err <= 1e-5, "merged and unmerged LoRA logits differ (rel %.2e)" % err)
    p = harness.run([infer_exe, "--load", s.init, "--prompt-ids", "1,2", "--max-tokens", "1"])
    fails.check(p.returncode not in (0, None) and b"no delta tensor 'h.attn.q.lora_a'" in p.stderr,
                "infer on a checkpoint without the deltas: exit %s, %s"
                % (p.returncode, harness.tail(p.stderr, 2)))


def check_adapter_infer(fails, s, ckpt, infer_exe):
    tensors = check_train.load_safetensors(os.path.join(ckpt, "model.safetensors"))
    trained = {k: tensors[k] for k in s.deltas}
    model, _ = reference(s, trained)
    model.eval()
    prompt = s.ids[:16]
    with torch.no_grad():
        first = model(input_ids=torch.tensor([prompt])).logits[0, -1]
        second = model(input_ids=torch.tensor([prompt + [int(first.argmax())]])).logits[0, -1]
    ref = torch.cat([first, second]).double().numpy()
    ours = infer_logits(fails, s, infer_exe, ["--load", ckpt], prompt, "adapter", steps=2)
    if ours is None:
        return
    err = harness.rel_err(ours, ref)
    print("adapter inference (prefill and a decode step) vs transformers with the trained "
          "adapters: rel %.2e" % err)
    fails.check(err <= 1e-5, "adapter inference logits differ (rel %.2e)" % err)


def check_prefix_infer(fails, s, ckpt, infer_exe):
    tensors = check_train.load_safetensors(os.path.join(ckpt, "model.safetensors"))
    trained = {k: tensors[k] for k in s.deltas}
    model, leaves = reference(s, trained)
    model.eval()
    prompt = s.ids[:16]
    with torch.no_grad():
        first = prefix_logits(s, model, leaves, torch.tensor([prompt]))[0, -1]
        nxt = prompt + [int(first.argmax())]
        second = prefix_logits(s, model, leaves, torch.tensor([nxt]))[0, -1]
    ref = torch.cat([first, second]).double().numpy()
    ours = infer_logits(fails, s, infer_exe, ["--load", ckpt], prompt, "prefix", steps=2)
    if ours is None:
        return
    err = harness.rel_err(ours, ref)
    print("prefix inference (prefill and a decode step over the KV cache) vs transformers "
          "with the trained prefixes as past_key_values: rel %.2e" % err)
    fails.check(err <= 1e-5, "prefix inference logits differ (rel %.2e)" % err)


# serve modes: the delta kind, and the labels of the infer executables given.
SERVE = {"serve": ("lora", ["merged", "unmerged"]), "serve-adapter": ("adapter", ["adapter"]),
         "serve-bitfit": ("bitfit", ["bitfit"])}
SERVE_PROMPTS = ["The quick brown fox", "hello, world", "0123 456 {x}"]
SERVE_ARGS = ["--tokenizer", "byte", "--max-tokens", "4", "--ignore-eos", "--output", "ids",
              "--sampling", "greedy"] + THREADS


def train_one_step(fails, s, exe, label, seed):
    """A delta file: one step from the backbone plus delta tensors drawn with
    `seed` (BitFit: the backbone with its biases drawn, which the delta file
    holds and its backbone hash leaves out)."""
    rng = np.random.default_rng(seed)
    start = os.path.join(s.dir, "start-%s.safetensors" % label)
    tensors = {**s.backbone, **s.draw(rng)}
    if s.kind == "bitfit":
        for name, v in tensors.items():
            if name.endswith(".bias") and v.ndim == 1:
                tensors[name] = v + rng.normal(0.0, 0.3, v.shape).astype(np.float32)
    save_file(tensors, start)
    save = os.path.join(s.dir, "ckpt-" + label)
    if not s.run(fails, "one step for delta " + label, exe, start, "--steps", 1, "--save", save):
        return None
    return os.path.join(check_train.latest(save), "delta.safetensors")


def dumps(path):
    """{file name: bytes} of a --dump directory."""
    return {n: np.load(os.path.join(path, n)).tobytes() for n in sorted(os.listdir(path))}


def serve_stream():
    """(stdin line, the delta it uses or None if it must fail, prompt or
    error fragment), alternating a, b and none in plain and JSON lines."""
    import json
    p0, p1, p2 = SERVE_PROMPTS
    req = lambda d, p: json.dumps({"delta": d, "prompt": p})  # noqa: E731
    return [
        (p0, "a", p0),  # plain text: the default, the first --delta
        (req("b", p1), "b", p1),
        (req("none", p2), "none", p2),
        (req("a", p1), "a", p1),
        (req("zzz", p1), None, "no delta named 'zzz' (loaded: a, b, none)"),
        (req("b", p0), "b", p0),
        ('{"prompt": "x", "delta": "a"', None, "JSON request: invalid JSON at byte"),
        (req("none", p0), "none", p0),
        (json.dumps({"prompt": p2, "delta": None}), "a", p2),
        (req("b", p2), "b", p2),
        (req("a", p0), "a", p0),
        (p2, "a", p2),
    ]


def check_serving(fails, s, exe, infers, backbone_exe):
    """infers: [(label, infer executable)], each serving the same two deltas."""
    files = {"a": train_one_step(fails, s, exe, "a", 21), "b": train_one_step(fails, s, exe, "b", 22)}
    if None in files.values():
        return
    stream = serve_stream()
    stdin = "".join(line + "\n" for line, _, _ in stream).encode()
    for label, infer in infers:
        served = os.path.join(s.dir, "serve-" + label)
        shutil.rmtree(served, ignore_errors=True)
        cmd = [infer, "--load", s.init, "--delta", "a=" + files["a"], "--delta",
               "b=" + files["b"], "--dump", served, "--profile"] + SERVE_ARGS
        print("$ " + " ".join(cmd) + " < %d request lines" % len(stream), flush=True)
        p = subprocess.run(cmd, input=stdin, capture_output=True, timeout=300)
        err = harness.text(p.stderr)
        fails.check(p.returncode == 1, "%s: the stream with two bad lines exits %s"
                    % (label, p.returncode))
        memory = [x for x in err.splitlines() if x.startswith("deltas:")]
        print("%s: %s" % (label, memory[0] if memory else "no deltas line in --profile"))
        outputs = harness.text(p.stdout).splitlines()
        alone, different = {}, set()
        for number, (line, delta, what) in enumerate(stream, 1):
            if delta is None:
                fails.check("error: stdin line %d: %s" % (number, what) in err,
                            "%s: line %d: no error '%s' in\n%s" % (label, number, what, err))
                continue
            key = (delta, what)
            if key not in alone:
                out = os.path.join(s.dir, "alone-%s-%s-%d" % (label, delta, SERVE_PROMPTS.index(what)))
                shutil.rmtree(out, ignore_errors=True)
                pick = ["--use-delta", "none"] if delta == "none" else ["--delta", files[delta]]
                q = harness.run([infer, "--load", s.init] + pick + SERVE_ARGS
                                + ["--prompt", what, "--dump", out])
                if not fails.check(q.returncode == 0, "%s alone %s: exit %s\n%s"
                                   % (label, key, q.returncode, harness.tail(q.stderr))):
                    return
                alone[key] = (harness.text(q.stdout).strip(), dumps(out))
            tokens, logits = alone[key]
            got = outputs.pop(0) if outputs else None
            same = got == tokens and dumps(os.path.join(served, "line%04d" % number)) == logits
            print("%s line %2d (%s): %s %s" % (label, number, delta, got,
                                               "bit-identical" if same else "DIFFERS"))
            fails.check(same, "%s: stdin line %d (delta %s) differs from a run with it alone"
                        % (label, number, delta))
        fails.check("2 of %d requests failed (the first: stdin line 5)" % len(stream) in err,
                    "%s: no summary of the failed requests in\n%s" % (label, err))
        # The deltas matter: the first step's logits of one prompt differ.
        first = {d: alone[(d, SERVE_PROMPTS[0])][1]["step0000_logits.npy"]
                 for d in ("a", "b", "none")}
        fails.check(len(set(first.values())) == 3, "%s: deltas a, b and none give the same "
                    "logits" % label)
        # none is the backbone alone: the job without a delta.
        out = os.path.join(s.dir, "backbone-" + label)
        shutil.rmtree(out, ignore_errors=True)
        q = harness.run([backbone_exe, "--load", s.init] + SERVE_ARGS
                        + ["--prompt", SERVE_PROMPTS[0], "--dump", out])
        if fails.check(q.returncode == 0, "backbone job: exit %s\n%s"
                       % (q.returncode, harness.tail(q.stderr))):
            ours = np.frombuffer(first["none"], dtype=np.float32)
            ref = np.load(os.path.join(out, "step0000_logits.npy")).reshape(-1)
            e = harness.rel_err(ours, ref)
            exact = ours.tobytes() == ref.tobytes()
            print("%s: delta none vs the backbone job: rel %.2e%s"
                  % (label, e, ", bit-identical" if exact else ""))
            fails.check(exact, "%s: delta none differs from the backbone job (rel %.2e)"
                        % (label, e))
    # --save with --use-delta writes the backbone with that delta (unmerged).
    first = infers[0][1]
    saved = os.path.join(s.dir, "saved-b.safetensors")
    p = harness.run([first, "--load", s.init, "--delta", "a=" + files["a"], "--delta",
                     "b=" + files["b"], "--use-delta", "b", "--save", saved])
    if fails.check(p.returncode == 0, "--save: exit %s\n%s" % (p.returncode, harness.tail(p.stderr))):
        ours, want = check_train.load_safetensors(saved), check_train.load_safetensors(files["b"])
        same = all(ours[k].tobytes() == v.tobytes() for k, v in want.items())
        print("--save --use-delta b: the %d tensors of b %s" % (len(want),
                                                             "saved as they are" if same else "DIFFER"))
        fails.check(same, "--save --use-delta b does not hold delta b's tensors")
    # Refused at start-up, before any request.
    p = harness.run([first, "--load", s.init, "--delta", "x=" + files["a"], "--delta",
                     "x=" + files["b"], "--prompt", "hi"] + SERVE_ARGS)
    fails.check(p.returncode == 2 and b"two deltas named 'x'" in p.stderr,
                "a duplicate delta name: exit %s, %s" % (p.returncode, harness.tail(p.stderr, 2)))
    from safetensors import safe_open
    with safe_open(files["b"], "np") as f:
        meta = dict(f.metadata())
    meta["bmb.backbone"] = "0123456789abcdef"
    other = os.path.join(s.dir, "other-backbone-delta.safetensors")
    from safetensors.numpy import save_file as save_raw
    save_raw(check_train.load_safetensors(files["b"]), other, metadata=meta)
    p = subprocess.run([first, "--load", s.init, "--delta", "a=" + files["a"], "--delta",
                        "c=" + other] + SERVE_ARGS, input=stdin, capture_output=True, timeout=300)
    fails.check(p.returncode == 1 and p.stdout == b""
                and (other + ": the delta was tuned on another backbone").encode() in p.stderr,
                "a delta of another backbone: exit %s, %s"
                % (p.returncode, harness.tail(p.stderr, 2)))
    print("refused: %s / %s" % (harness.tail(harness.run(
        [first, "--load", s.init, "--delta", "x=" + files["a"], "--delta", "x=" + files["b"]],
        quiet=True).stderr, 2).splitlines()[0], harness.tail(p.stderr, 1)))


def main(argv):
    if len(argv) < 3 or (argv[0] not in DELTAS and argv[0] not in SERVE):
        harness.die(__doc__.strip().splitlines()[2])
    kind, exe, workdir = argv[:3]
    fails = harness.Failures("check_delta.py " + kind)
    if kind in SERVE:
        delta, labels = SERVE[kind]
        if len(argv) != 4 + len(labels):
            harness.die("%s needs EXE WORKDIR %s BACKBONE_EXE"
                        % (kind, " ".join("INFER_EXE_" + x.upper() for x in labels)))
        check_serving(fails, Setup(delta, workdir, kind), exe, list(zip(labels, argv[3:-1])),
                      argv[-1])
        return fails.exit_code()
    s = Setup(kind, workdir)
    check_step(fails, s, exe)
    ckpt = check_frozen(fails, s, exe)
    if kind == "lora-dropout":
        check_resume(fails, s, exe)
        return fails.exit_code()
    if ckpt:
        check_delta_checkpoint(fails, s, exe, ckpt)
    if kind == "adapter" and ckpt and len(argv) > 3:
        check_adapter_infer(fails, s, ckpt, argv[3])
    if kind.startswith("prefix") and ckpt and len(argv) > 3:
        check_prefix_infer(fails, s, ckpt, argv[3])
    if kind == "lora":
        check_fresh_lora(fails, s, exe)
        if ckpt and len(argv) > 4:
            check_merged_lora(fails, s, ckpt, argv[3], argv[4])
    return fails.exit_code()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
