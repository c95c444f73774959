#!/usr/bin/env python3
"""Training executables against Hugging Face transformers + Debian's torch.

usage: check_train.py MODE EXE CONFIG WORKDIR [INFER_EXE]

The train executables are built from test/e2e/train*.bmb (jobs named in
TRAIN below); CONFIG names the model in configs.py. Every mode starts from
the same Hugging Face checkpoint (hf_reference.hf_model: re-drawn weights,
save_pretrained) loaded with --load, and from a token file written here
(tokfile.py) of uniform random ids, read in sequential order with no
held-out split, so that step s, row b is the window of T + 1 tokens starting
at (s * B + b) * T: tokens are its first T, targets its last T.

  grads    one step: the loss and every parameter's gradient (--dump-grads,
           Hugging Face names) against torch autograd of the same batch (a
           masked LM's: the one the executable masked, --dump-batch), then
           the same for a step of two micro-batches (--accum 2) against
           torch over both at once:
           max |ours - ref| / max |ref| <= 1e-4 per tensor; a tensor whose
           reference is zero or nearly (under 1e-6 of the largest gradient,
           e.g. GPT-2's key bias) is compared absolutely against 1e-6 of the
           largest gradient.
  adamw    one AdamW step on fixed gradients: torch.optim.AdamW, with the
           job's hyperparameters and decay groups, applied to OUR dumped
           gradients from the same weights, against the weights we saved.
  sgd      five steps of SGD with momentum (the _sgd job) against torch's
           parameters after five steps on the same batches: 1e-4 relative.
  overfit  200 steps on one batch: the last logged loss is under 0.05.
  resume   20 steps straight vs 10 + --resume + 10: identical weights and
           optimizer state (bytes).
  bad-inputs  missing, empty, too short and wrong-vocabulary data, another
           model's checkpoint, a diverging run (--lr 1e30 on a resumed
           run): clear errors, and the last good checkpoint stays newest.
  export   our saved checkpoint loads into transformers, whose logits equal
           the infer executable's (INFER_EXE, --load of the same checkpoint)
           to 1e-4.
  dropout  EXE has residual dropout (the _dropout job, pdrop 0.1), and
           NODROP_EXE is the same model without it: (a) one step's loss and
           gradients equal torch's when torch applies the same masks, drawn
           here by an independent Philox4x32-10 with the keying of
           runtime/include/bmrt/dropout.h (checked against Random123's
           known answers first), 1e-4 per tensor as in grads, also for a
           step of two micro-batches (--accum 2); (b) 20
           straight vs 10 + --resume + 10 are bit-identical; (c) --threads 1
           and 2 log identical losses; (d) evaluation applies no dropout:
           --eval-only prints what NODROP_EXE prints.
  checkpoint  EXE is PLAIN_EXE's job with `checkpoint = h` (bmb-checkpoint-
           activations): one step's loss and gradients (also --accum 2)
           and the weights and optimizer state after 3 steps are BITWISE
           those of PLAIN_EXE (--seed 5: masks too, with dropout), and the
           memory plan has fewer activation bytes (--info; with BMBC and
           BMB_FILE also bmbc --stats of both jobs).

usage of checkpoint: check_train.py checkpoint EXE CONFIG WORKDIR PLAIN_EXE
                     [BMBC BMB_FILE]
"""

import json
import os
import shutil
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import configs  # noqa: E402
import harness  # noqa: E402
import hf_reference  # noqa: E402
import tokfile  # noqa: E402

# The train jobs of test/e2e/train.bmb, as the test must know them.
TRAIN = {
    "gpt2-nano": dict(batch=4, seq=64,
                      adamw=dict(lr=1e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1),
                      sgd=dict(lr=0.05, momentum=0.9)),
    "llama-nano": dict(batch=4, seq=64,
                       adamw=dict(lr=1e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1),
                       sgd=dict(lr=0.05, momentum=0.9)),
    # test/e2e/train_bert.bmb: objective = masked_lm(prob = 0.15, mask_id = 3).
    "bert-tiny": dict(batch=4, seq=32, masked_lm=dict(prob=0.15, mask_id=3),
                      adamw=dict(lr=1e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)),
}
# The transformers class each family's checkpoint trains as.
LM_CLASS = {"gpt2": "GPT2LMHeadModel", "llama": "LlamaForCausalLM", "bert": "BertForMaskedLM"}
# Embedding tables, which our default grouping does not decay.
EMBEDDINGS = ("wte", "wpe", "embed_tokens", "_embeddings")
THREADS = ["--threads", "2"]


def hf_names_no_decay(model):
    """Our default no-decay set in Hugging Face names: rank-1 tensors
    (biases, norm weights) and the embedding tables (EMBEDDINGS)."""
    return {n for n, p in model.named_parameters()
            if p.dim() == 1 or any(e in n for e in EMBEDDINGS)}


def lm_class(c):
    import transformers as tf
    return getattr(tf, LM_CLASS[c["family"]])


def load_safetensors(path):
    from safetensors.numpy import load_file
    return load_file(path)


def init_model(c):
    """The checkpoint every mode starts from: hf_reference's model, or for
    BERT a BertForMaskedLM of its config with every parameter re-drawn."""
    model = hf_reference.hf_model(c)
    if c["family"] != "bert":
        return model
    import transformers as tf
    mlm = tf.BertForMaskedLM(model.config).float().eval()
    hf_reference.redraw(mlm, hf_reference.SEED)
    return mlm


def read_batch(s, dump_dir, window):
    """The masked batch the executable used (--dump-batch), checked against
    the windows it masked (`window`, the step's unmasked tokens): unpicked
    tokens kept, picked ones' targets the window's ids, and [MASK] for most
    picked tokens."""
    tokens = np.load(os.path.join(dump_dir, "tokens.npy"))
    targets = np.load(os.path.join(dump_dir, "targets.npy"))
    window = window.numpy()
    picked = targets != -100
    m = s.t["masked_lm"]
    bad = []
    if tokens.shape != window.shape or targets.shape != window.shape:
        bad.append("--dump-batch shapes %s, %s, want %s"
                   % (tokens.shape, targets.shape, window.shape))
        return None, None, bad
    if (tokens[~picked] != window[~picked]).any():
        bad.append("unpicked tokens differ from the data")
    if (targets[picked] != window[picked]).any():
        bad.append("targets differ from the data's ids at picked positions")
    frac = picked.mean()
    masked = (tokens[picked] == m["mask_id"]).mean() if picked.any() else 0
    print("masked-LM batch: %.3f picked (prob %.2f), %.2f of them [MASK]"
          % (frac, m["prob"], masked))
    if not (0.5 * m["prob"] < frac < 1.5 * m["prob"]) or not (0.6 < masked < 0.95):
        bad.append("picked %.3f / [MASK] %.2f far from prob %.2f / 0.8" % (frac, m["prob"], masked))
    return (torch.from_numpy(tokens.astype(np.int64)), torch.from_numpy(targets.astype(np.int64)),
            bad)


class Setup:
    def __init__(self, config, workdir, tokens_needed, seed=7):
        self.c = configs.get(config)
        self.t = TRAIN[config]
        self.B, self.T = self.t["batch"], self.t["seq"]
        self.dir = os.path.join(workdir, "train-" + config)
        os.makedirs(self.dir, exist_ok=True)
        self.init = os.path.join(self.dir, "init")
        if not os.path.exists(os.path.join(self.init, "model.safetensors")):
            init_model(self.c).save_pretrained(self.init, safe_serialization=True)
        rng = np.random.default_rng(seed)
        self.ids = rng.integers(0, self.c["vocab"], tokens_needed).tolist()
        self.data = os.path.join(self.dir, "data-%d.tok" % seed)
        tokfile.write(self.data, self.ids, self.c["vocab"])

    def model(self):
        m = lm_class(self.c).from_pretrained(self.init).float()
        m.config._attn_implementation = "eager"
        return m.train()

    def batch(self, step):
        B, T = self.B, self.T
        rows = [self.ids[(step * B + b) * T:(step * B + b) * T + T + 1] for b in range(B)]
        w = torch.tensor(rows, dtype=torch.long)
        return w[:, :T], w[:, 1:]

    def run(self, fails, label, exe, *args, timeout=600):
        """Runs exe on the test's data, from the test's weights unless it
        resumes (--resume takes everything from the checkpoint)."""
        start = [] if "--resume" in args else ["--load", self.init]
        cmd = [exe] + start + ["--data", self.data, "--order", "sequential",
                               "--val-fraction", "0"] + THREADS + [str(a) for a in args]
        p = harness.run(cmd, timeout=timeout)
        if p.returncode != 0:
            fails.add("%s: exit %s\n%s" % (label, p.returncode, harness.tail(p.stderr)))
            return None
        return p


def torch_loss(model, tokens, targets):
    logits = model(input_ids=tokens).logits
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                             targets.reshape(-1))


def logged(path, key="loss"):
    out = []
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if key in rec:
                out.append(rec)
    return out


def check_grads(fails, s, exe, accum=1):
    """accum > 1: the step is `accum` micro-batches (windows of batches 0 ..
    accum-1), whose gradients must equal torch's over all of them at once."""
    dump = os.path.join(s.dir, "grads-%d.safetensors" % accum)
    log = os.path.join(s.dir, "grads-%d.jsonl" % accum)
    for f in (dump, log):
        if os.path.exists(f):
            os.remove(f)
    batch_dir = os.path.join(s.dir, "grads-batch-%d" % accum)
    if not s.run(fails, "one step with --dump-grads (--accum %d)" % accum, exe, "--steps", 1,
                 "--accum", accum, "--dump-grads", dump, "--dump-batch", batch_dir, "--log", log):
        return
    model = s.model()
    parts = [s.batch(i) for i in range(accum)]
    tokens, targets = torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])
    if "masked_lm" in s.t:
        tokens, targets, bad = read_batch(s, batch_dir, tokens)
        for b in bad:
            fails.add(b)
        if tokens is None:
            return
    loss = torch_loss(model, tokens, targets)
    loss.backward()
    ours_loss = logged(log)[0]["loss"]
    err = abs(ours_loss - float(loss)) / abs(float(loss))
    print("loss: ours %.7f, torch %.7f, rel %.2e" % (ours_loss, float(loss), err))
    fails.check(err <= 1e-5, "loss %.7f vs torch %.7f (rel %.2e > 1e-5)"
                % (ours_loss, float(loss), err))
    ours = load_safetensors(dump)
    ref = {n: p.grad.double().numpy() for n, p in model.named_parameters()}
    largest = max(np.abs(g).max() for g in ref.values())
    for name, g in sorted(ref.items()):
        if name not in ours:
            fails.add("--dump-grads has no %s" % name)
            continue
        o = ours[name].astype(np.float64)
        if o.shape != g.shape:
            fails.add("%s: shape %s vs torch %s" % (name, o.shape, g.shape))
            continue
        if np.abs(g).max() < 1e-6 * largest:
            err = float(np.abs(o - g).max())
            ok = err <= 1e-6 * largest
            print("%-40s abs %.2e (reference ~0; limit %.2e)" % (name, err, 1e-6 * largest))
        else:
            err = harness.rel_err(o, g)
            ok = err <= harness.TOL
            print("%-40s rel %.2e" % (name, err))
        fails.check(ok, "gradient of %s differs: %.2e" % (name, err))
    # Tied tensors (GPT-2's lm_head, BERT's decoder) are state_dict names too.
    extra = sorted(set(ours) - set(ref) - set(model.state_dict()))
    fails.check(not extra, "--dump-grads has tensors torch does not: %s" % extra)


def check_adamw(fails, s, exe):
    """Torch's AdamW on our gradients must give our weights after step 1."""
    dump = os.path.join(s.dir, "adamw-grads.safetensors")
    save = os.path.join(s.dir, "adamw-ckpt")
    shutil.rmtree(save, ignore_errors=True)
    if not s.run(fails, "one AdamW step", exe, "--steps", 1, "--dump-grads", dump,
                 "--save", save):
        return
    model = s.model()
    grads = load_safetensors(dump)
    no_decay = hf_names_no_decay(model)
    a = s.t["adamw"]
    groups = [{"params": [p for n, p in model.named_parameters() if n not in no_decay],
               "weight_decay": a["weight_decay"]},
              {"params": [p for n, p in model.named_parameters() if n in no_decay],
               "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=a["lr"], betas=a["betas"], eps=a["eps"])
    for n, p in model.named_parameters():
        p.grad = torch.from_numpy(grads[n].copy())
    opt.step()
    ours = load_safetensors(os.path.join(latest(save), "model.safetensors"))
    for n, p in sorted(model.named_parameters()):
        err = harness.rel_err(ours[n], p.detach().numpy())
        fails.check(err <= 1e-6, "AdamW step: %s differs from torch (rel %.2e > 1e-6)" % (n, err))
    print("adamw: %d tensors compared" % len(list(model.parameters())))


def latest(save_dir):
    with open(os.path.join(save_dir, "latest")) as f:
        name = f.read().strip()
    return name if os.path.isabs(name) else os.path.join(save_dir, name)


def check_sgd(fails, s, exe):
    save = os.path.join(s.dir, "sgd-ckpt")
    shutil.rmtree(save, ignore_errors=True)
    if not s.run(fails, "five SGD steps", exe, "--steps", 5, "--save", save):
        return
    model = s.model()
    g = s.t["sgd"]
    opt = torch.optim.SGD(model.parameters(), lr=g["lr"], momentum=g["momentum"])
    for step in range(5):
        opt.zero_grad()
        torch_loss(model, *s.batch(step)).backward()
        opt.step()
    ours = load_safetensors(os.path.join(latest(save), "model.safetensors"))
    for n, p in sorted(model.named_parameters()):
        err = harness.rel_err(ours[n], p.detach().numpy())
        print("%-40s rel %.2e" % (n, err))
        fails.check(err <= harness.TOL, "after 5 SGD steps %s differs (rel %.2e)" % (n, err))


def check_overfit(fails, s, exe):
    log = os.path.join(s.dir, "overfit.jsonl")
    if os.path.exists(log):
        os.remove(log)
    # The data holds exactly one batch, so every step sees it again.
    one = os.path.join(s.dir, "one-batch.tok")
    tokfile.write(one, s.ids[:s.B * s.T + 1], s.c["vocab"])
    s.data = one
    if not s.run(fails, "200 steps on one batch", exe, "--steps", 200, "--lr", "3e-3",
                 "--log", log):
        return
    losses = [r["loss"] for r in logged(log)]
    print("overfit: loss %.4f -> %.4f over %d steps" % (losses[0], losses[-1], len(losses)))
    fails.check(len(losses) == 200, "expected 200 logged steps, got %d" % len(losses))
    fails.check(losses[-1] < 0.05, "loss after 200 steps on one batch: %.4f (want < 0.05)"
                % losses[-1])


def same_bytes(a, b):
    with open(a, "rb") as f, open(b, "rb") as g:
        return f.read() == g.read()


def check_resume(fails, s, exe):
    straight = os.path.join(s.dir, "resume-straight")
    split = os.path.join(s.dir, "resume-split")
    for d in (straight, split):
        shutil.rmtree(d, ignore_errors=True)
    if not s.run(fails, "20 steps", exe, "--steps", 20, "--save", straight, "--seed", 3):
        return
    if not s.run(fails, "10 steps", exe, "--steps", 10, "--save", split, "--seed", 3):
        return
    if not s.run(fails, "resume to 20", exe, "--steps", 20, "--save", split, "--seed", 3,
                 "--resume"):
        return
    for f in ("model.safetensors", "optimizer.safetensors"):
        a, b = os.path.join(latest(straight), f), os.path.join(latest(split), f)
        fails.check(same_bytes(a, b), "20 straight vs 10 + resume + 10: %s differs" % f)
    print("resume: compared %s and %s" % (latest(straight), latest(split)))


def refused(fails, label, p, code, *needles):
    """p (a CompletedProcess) exited with `code` and its stderr names every needle."""
    err = harness.text(p.stderr)
    ok = p.returncode == code and all(n.lower() in err.lower() for n in needles)
    fails.check(ok, "%s: want exit %d mentioning %s; got exit %s: %s"
                % (label, code, needles, p.returncode, harness.tail(err, 3)))


def check_bad_inputs(fails, s, exe):
    """The compiled executable's refusals: data, checkpoints, divergence."""
    base = [exe, "--threads", "2", "--steps", "2", "--order", "sequential"]
    missing = os.path.join(s.dir, "no-such-file.tok")
    refused(fails, "missing data", harness.run(base + ["--data", missing]), 1, "no-such-file")
    empty = os.path.join(s.dir, "empty.txt")
    open(empty, "w").close()
    refused(fails, "empty data", harness.run(base + ["--data", empty, "--tokenizer", "byte"]), 1,
            "empty.txt")
    short = os.path.join(s.dir, "short.tok")
    tokfile.write(short, s.ids[:s.T], s.c["vocab"])  # one token short of one window
    refused(fails, "data shorter than a window", harness.run(base + ["--data", short]), 1,
            "short.tok")
    wide = os.path.join(s.dir, "wide-vocab.tok")
    tokfile.write(wide, s.ids[:4 * s.B * (s.T + 1)], s.c["vocab"] * 4)
    refused(fails, "token file of a larger vocabulary", harness.run(base + ["--data", wide]), 1,
            "vocab")
    other = os.path.join(s.dir, "other-model")
    if not os.path.exists(os.path.join(other, "model.safetensors")):
        c = dict(s.c, dim=2 * s.c["dim"])
        init_model(c).save_pretrained(other, safe_serialization=True)
    refused(fails, "a checkpoint of another model",
            harness.run(base + ["--data", s.data, "--load", other]), 1, "model.safetensors")
    # A learning rate that blows the weights up: the run stops with the
    # step, and the checkpoint saved before it stays the newest.
    save = os.path.join(s.dir, "nan-ckpt")
    shutil.rmtree(save, ignore_errors=True)
    p = harness.run([exe, "--threads", "2", "--order", "sequential", "--val-fraction", "0",
                     "--load", s.init, "--data", s.data, "--steps", "2", "--save", save])
    if fails.check(p.returncode == 0, "2 good steps: exit %s" % p.returncode):
        kept = latest(save)
        p = harness.run([exe, "--threads", "2", "--order", "sequential", "--val-fraction", "0",
                         "--data", s.data, "--steps", "12", "--save", save, "--resume",
                         "--lr", "1e30"])
        refused(fails, "a diverging run", p, 1, "step")
        fails.check(latest(save) == kept, "after the diverging run, latest is %s, not %s"
                    % (latest(save), kept))
    print("bad inputs: %d checks" % 7)


def check_export(fails, s, exe, infer_exe):
    save = os.path.join(s.dir, "export-ckpt")
    shutil.rmtree(save, ignore_errors=True)
    if not s.run(fails, "train 3 steps and save", exe, "--steps", 3, "--save", save):
        return
    ckpt = latest(save)
    cls = lm_class(s.c)
    cfg = cls.config_class.from_pretrained(s.init)
    cfg._attn_implementation = "eager"
    model = cls(cfg).float().eval()
    missing, unexpected = model.load_state_dict(
        {k: torch.from_numpy(v) for k, v in
         load_safetensors(os.path.join(ckpt, "model.safetensors")).items()}, strict=False)
    fails.check(not unexpected, "transformers: unexpected tensors %s" % unexpected)
    fails.check(set(missing) <= {"lm_head.weight"}, "transformers: missing tensors %s" % missing)
    model.tie_weights()
    prompt = s.ids[:16]
    with torch.no_grad():
        ref = model(input_ids=torch.tensor([prompt])).logits[0, -1].double().numpy()
    out = os.path.join(s.dir, "export-dump")
    shutil.rmtree(out, ignore_errors=True)
    p = harness.run([infer_exe, "--load", ckpt, "--prompt-ids", ",".join(map(str, prompt)),
                     "--max-tokens", "1", "--sampling", "greedy", "--ignore-eos", "--output",
                     "ids", "--dump", out])
    if p.returncode != 0:
        fails.add("infer --load of our checkpoint: exit %s\n%s" % (p.returncode,
                                                                  harness.tail(p.stderr)))
        return
    ours = np.load(os.path.join(out, "step0000_logits.npy")).reshape(-1)
    err = harness.rel_err(ours, ref)
    print("export: transformers vs our infer executable on our checkpoint: rel %.2e" % err)
    fails.check(err <= harness.TOL, "logits of the exported checkpoint differ (rel %.2e)" % err)


# ---- dropout: the masks, from the published algorithm -----------------------

# Philox4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3",
# SC'11): the round multipliers and Weyl key increments. numpy's
# numpy.random.Philox is the 4x64 variant, so it cannot serve here.
PHILOX_M = (0xD2511F53, 0xCD9E8D57)
PHILOX_W = (0x9E3779B9, 0xBB67AE85)
MASK32 = np.uint64(0xFFFFFFFF)


def philox4x32_10(ctr, key):
    """ctr: four uint32 arrays (broadcast together), key: two ints -> the
    four output words, as uint64 arrays holding 32-bit values."""
    c0, c1, c2, c3 = (np.asarray(c, dtype=np.uint64) for c in ctr)
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    m0, m1 = np.uint64(PHILOX_M[0]), np.uint64(PHILOX_M[1])
    for _ in range(10):
        p0, p1 = m0 * c0, m1 * c2  # < 2^64: exact in uint64
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & MASK32,
                          (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & MASK32)
        k0 = (k0 + np.uint64(PHILOX_W[0])) & MASK32
        k1 = (k1 + np.uint64(PHILOX_W[1])) & MASK32
    return c0, c1, c2, c3


def check_philox(fails):
    # Random123's kat_vectors, philox4x32 10: counter, key -> result.
    vectors = [
        ([0, 0, 0, 0], [0, 0], [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
        ([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 2, [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
        ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0],
         [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
    ]
    for ctr, key, want in vectors:
        got = [int(w) for w in philox4x32_10(ctr, key)]
        fails.check(got == want, "the test's Philox: %s, %s -> %s, want %s"
                    % (ctr, key, [hex(x) for x in got], [hex(x) for x in want]))


def dropout_keep(seed, step, micro, rng_id, layer, shape, p):
    """The keep mask of one dropout (runtime/include/bmrt/dropout.h): element
    e (row-major) is kept when word 0 of Philox(ctr, key) >= floor(p 2^32),
    key = seed, ctr = (e lo, e hi16 | layer << 16, step, 1 << 31 |
    rng_id << 16 | micro)."""
    e = np.arange(int(np.prod(shape)), dtype=np.uint64)
    ctr = (e & MASK32,
           ((e >> np.uint64(32)) & np.uint64(0xFFFF)) | np.uint64(layer << 16),
           np.uint64(step & 0xFFFFFFFF),
           np.uint64(0x80000000 | (rng_id & 0x7FFF) << 16 | (micro & 0xFFFF)))
    bits = philox4x32_10(ctr, (seed & 0xFFFFFFFF, seed >> 32))[0]
    return (bits >= np.uint64(int(p * 4294967296.0))).reshape(shape)


# The GPT-2 Block's two residual dropouts, numbered by MLIRGen in program
# order: after attention (HF attn.resid_dropout) and after the MLP (HF
# mlp.dropout).
DROPOUT_P = 0.1
DROPOUT_IDS = {"attn": 0, "mlp": 1}


class FixedMask(torch.nn.Module):
    """x * keep / (1 - p): a dropout whose mask is given."""

    def __init__(self, keep, p):
        super().__init__()
        self.m = torch.from_numpy(keep.astype(np.float32) * np.float32(1.0 / (1.0 - p)))

    def forward(self, x):
        return x * self.m


class DropoutSetup(Setup):
    """The setup of the dropout executable, so that check_grads and
    check_resume run on it unchanged: every run gets --seed SEED (unless it
    names one), and the torch model gets our masks (`patch`)."""

    def __init__(self, s, seed):  # a copy of s, not a new setup
        self.__dict__.update(s.__dict__)
        self.seed, self.patch = seed, None

    def model(self):
        m = Setup.model(self)
        if self.patch:
            self.patch(m)
        return m

    def run(self, fails, label, exe, *args, **kw):
        if "--seed" not in args:
            args += ("--seed", self.seed)
        return Setup.run(self, fails, label, exe, *args, **kw)


def check_dropout(fails, s, exe, nodrop_exe):
    check_philox(fails)
    seed, step = 5, 1
    shape = (s.B, s.T, s.c["dim"])
    kept = []
    d = DropoutSetup(s, seed)

    def patcher(accum):
        """Puts our masks into the torch model: micro-batch m (rows m B ..
        (m+1) B of torch's batch) has the masks of micro-step m."""
        def patch(model):
            for layer, block in enumerate(model.transformer.h):
                masks = {k: np.concatenate([dropout_keep(seed, step, m, i, layer, shape,
                                                         DROPOUT_P) for m in range(accum)])
                         for k, i in DROPOUT_IDS.items()}
                kept.extend(m.mean() for m in masks.values())
                block.attn.resid_dropout = FixedMask(masks["attn"], DROPOUT_P)
                block.mlp.dropout = FixedMask(masks["mlp"], DROPOUT_P)
        return patch

    # (a) one step against torch with our masks, and one of two micro-batches.
    for accum in (1, 2):
        d.patch = patcher(accum)
        check_grads(fails, d, exe, accum=accum)
    d.patch = None
    if kept:
        print("dropout: keep rate of the masks %.4f (want ~%.2f)"
              % (np.mean(kept), 1 - DROPOUT_P))
        fails.check(abs(np.mean(kept) - (1 - DROPOUT_P)) < 0.01,
                    "keep rate %.4f is not ~%.2f" % (np.mean(kept), 1 - DROPOUT_P))
    # (b) resume (check_resume passes its own seed).
    check_resume(fails, d, exe)
    # (c) thread counts.
    losses = {}
    for n in (1, 2):
        log = os.path.join(s.dir, "dropout-threads%d.jsonl" % n)
        if os.path.exists(log):
            os.remove(log)
        if not d.run(fails, "5 steps, --threads %d" % n, exe, "--steps", 5, "--log", log,
                     "--threads", n):
            return
        losses[n] = [r["loss"] for r in logged(log)]
    print("dropout: losses with 1 thread %s, with 2 %s" % (losses[1], losses[2]))
    fails.check(len(losses[1]) == 5 and losses[1] == losses[2],
                "--threads 1 and 2 log different losses: %s vs %s" % (losses[1], losses[2]))
    # (d) evaluation runs without dropout: as the same model with pdrop 0.
    out = {}
    for label, e in (("dropout", exe), ("no dropout", nodrop_exe)):
        p = d.run(fails, "--eval-only (%s)" % label, e, "--eval-only", "--eval-split", "all")
        if not p:
            return
        out[label] = harness.text(p.stdout)
    print("dropout: --eval-only with dropout %r, without %r"
          % (out["dropout"].split("\n")[0], out["no dropout"].split("\n")[0]))
    fails.check(out["dropout"] == out["no dropout"] and "loss" in out["dropout"],
                "evaluation differs with dropout: %r vs %r" % (out["dropout"], out["no dropout"]))


def tensors_bitwise(a, b):
    """Names whose tensors differ in any bit between safetensors files a, b
    (or are in one only)."""
    x, y = load_safetensors(a), load_safetensors(b)
    bad = sorted(set(x) ^ set(y))
    for n in sorted(set(x) & set(y)):
        if x[n].dtype != y[n].dtype or x[n].shape != y[n].shape or \
                x[n].tobytes() != y[n].tobytes():
            bad.append(n)
    return bad, len(x)


def activation_bytes(fails, label, cmd, pattern):
    """The activation bytes a command prints: the number after `pattern`'s
    text in its first matching line (bmbc --stats: `activations of
    forward_backward ... (N bytes)`; --info: `activations X MiB`)."""
    import re
    p = harness.run(cmd)
    out = harness.text(p.stdout)
    m = re.search(pattern, out)
    if p.returncode != 0 or not m:
        fails.add("%s: exit %s, no activation figure\n%s%s" % (
            label, p.returncode, harness.tail(p.stdout), harness.tail(p.stderr)))
        return None
    return float(m.group(1))


def check_checkpoint(fails, s, exe, plain_exe, bmbc=None, bmb_file=None):
    d = DropoutSetup(s, 5)  # --seed 5 everywhere: the same masks if any
    # (a) one step's gradients, one and two micro-batches.
    for accum in (1, 2):
        dumps = []
        for label, e in (("plain", plain_exe), ("checkpoint", exe)):
            dump = os.path.join(s.dir, "ckpt-grads-%s-%d.safetensors" % (label, accum))
            log = os.path.join(s.dir, "ckpt-grads-%s-%d.jsonl" % (label, accum))
            for f in (dump, log):
                if os.path.exists(f):
                    os.remove(f)
            if not d.run(fails, "one step, --accum %d (%s)" % (accum, label), e, "--steps", 1,
                         "--accum", accum, "--dump-grads", dump, "--log", log):
                return
            dumps.append((dump, logged(log)[0]["loss"]))
        bad, n = tensors_bitwise(dumps[0][0], dumps[1][0])
        print("checkpoint: --accum %d: loss %r vs %r, %d gradient tensors, %d differ"
              % (accum, dumps[0][1], dumps[1][1], n, len(bad)))
        fails.check(dumps[0][1] == dumps[1][1], "--accum %d: loss %r with checkpointing, %r "
                    "without" % (accum, dumps[1][1], dumps[0][1]))
        fails.check(n > 0 and not bad, "--accum %d: gradients differ with checkpointing: %s"
                    % (accum, bad[:5]))
    # (b) weights and optimizer state after 3 steps.
    saved = []
    for label, e in (("plain", plain_exe), ("checkpoint", exe)):
        save = os.path.join(s.dir, "ckpt-steps-%s" % label)
        shutil.rmtree(save, ignore_errors=True)
        if not d.run(fails, "3 steps (%s)" % label, e, "--steps", 3, "--save", save):
            return
        saved.append(latest(save))
    files = sorted(f for f in os.listdir(saved[0]) if f.endswith(".safetensors"))
    fails.check("model.safetensors" in files, "no model.safetensors in %s" % saved[0])
    for f in files:
        bad, n = tensors_bitwise(os.path.join(saved[0], f), os.path.join(saved[1], f))
        print("checkpoint: after 3 steps, %s: %d tensors, %d differ" % (f, n, len(bad)))
        fails.check(not bad, "after 3 steps, %s differs with checkpointing: %s" % (f, bad[:5]))
    # (c) fewer activation bytes in the memory plan.
    info = {}
    for label, e in (("plain", plain_exe), ("checkpoint", exe)):
        info[label] = activation_bytes(fails, "--info (%s)" % label, [e, "--info"],
                                       r"activations ([0-9.]+) MiB")
    if None not in info.values():
        print("checkpoint: --info activations %.2f MiB without, %.2f MiB with"
              % (info["plain"], info["checkpoint"]))
        fails.check(info["checkpoint"] < info["plain"], "checkpointing does not shrink the "
                    "activations (--info): %s" % info)
    if bmbc:
        stats = {}
        for label, e in (("plain", plain_exe), ("checkpoint", exe)):
            p = harness.run([e, "--info"], quiet=True)
            job = harness.text(p.stdout).split("job: ", 1)[-1].split()[0]
            stats[label] = activation_bytes(
                fails, "bmbc --stats (%s)" % label,
                [bmbc, bmb_file, "--job", job, "-I", os.path.join(HERE, "..", ".."), "--stats"],
                r"activations of forward_backward .*\(([0-9]+) bytes\)")
        if None not in stats.values():
            print("checkpoint: bmbc --stats forward_backward activations %d bytes without, "
                  "%d with (%.2fx)" % (stats["plain"], stats["checkpoint"],
                                      stats["plain"] / stats["checkpoint"]))
            fails.check(stats["checkpoint"] < stats["plain"], "checkpointing does not shrink "
                        "the activations (bmbc --stats): %s" % stats)


def main(argv):
    if len(argv) < 4:
        harness.die(__doc__.strip().splitlines()[2])
    mode, exe, config, workdir = argv[:4]
    if config not in TRAIN:
        harness.die("no train job for config %r; known: %s" % (config, ", ".join(TRAIN)))
    torch.manual_seed(0)
    t = TRAIN[config]
    s = Setup(config, workdir, tokens_needed=t["batch"] * t["seq"] * 24 + 1)
    fails = harness.Failures("check_train %s %s" % (mode, config))
    if mode == "grads":
        check_grads(fails, s, exe)
        check_grads(fails, s, exe, accum=2)
    elif mode == "adamw":
        check_adamw(fails, s, exe)
    elif mode == "sgd":
        check_sgd(fails, s, exe)
    elif mode == "overfit":
        check_overfit(fails, s, exe)
    elif mode == "resume":
        check_resume(fails, s, exe)
    elif mode == "bad-inputs":
        check_bad_inputs(fails, s, exe)
    elif mode == "export":
        if len(argv) < 5:
            harness.die("export needs INFER_EXE")
        check_export(fails, s, exe, argv[4])
    elif mode == "dropout":
        if len(argv) < 5:
            harness.die("dropout needs NODROP_EXE")
        check_dropout(fails, s, exe, argv[4])
    elif mode == "checkpoint":
        if len(argv) < 5:
            harness.die("checkpoint needs PLAIN_EXE")
        check_checkpoint(fails, s, exe, argv[4], *argv[5:7])
    else:
        harness.die("unknown mode %r" % mode)
    return fails.exit_code()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
