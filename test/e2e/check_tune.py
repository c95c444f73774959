#!/usr/bin/env python3
"""Prompt tuning (the tune executable) against a torch reference built here.

usage: check_tune.py MODE EXE_DIR WORKDIR

EXE_DIR holds the tune executables of test/e2e/tune.bmb (e2e_tune_gpt2,
e2e_tune_bert; their settings are repeated in JOBS below). The backbones are
transformers' GPT-2 nano and BertForMaskedLM-tiny with re-drawn weights
(check_train.init_model), saved as Hugging Face checkpoints, plus LoRA
tensors drawn here (non-zero, so every LoRA gradient is non-trivial) under
our names. The prompt ids come from bmb-prompt (checked against Hugging Face
tokenizers by test/runtime/prompt/compare_hf.py) for the plan the executable
carries (--info); everything after the ids is written here in torch: the
soft token rows, the model with LoRA as forward hooks, OpenPrompt's
ManualVerbalizer (reduce first/mean/max, softmax over the label words,
contextual calibration, log, mean over a label's words, sum over the masks)
and the cross-entropy over the classes.

  grads       per job: one step (--dump-grads, --lr 0) on 4 examples: the
              loss (its log) to 1e-5 and the gradients of every LoRA tensor
              and of the soft token to 1e-4 of the largest reference value
              (torch autograd). GPT-2: two masks (reduce first; reduce mean +
              calibration), a soft token initialised from " so"; BERT: one
              mask, reduce max, calibration, WordPiece label words of
              several tokens, a soft token read from the backbone file;
              GPT-2 with a soft verbalizer (scores = mask row . label rows,
              the rows starting from the head rows of each class's first
              word): also the label rows' gradient; a headless BERT-tiny
              (transformers' BertModel with its pooler, loaded through
              `checkpoint hf for BERT`) with a soft verbalizer on the
              [MASK] row's last hidden state (rows starting from the word
              embedding) and a soft token initialised from " so".
  train       GPT-2 on a trivially learnable task: 40 steps; the held-out
              accuracy beats the majority baseline; the delta checkpoint
              holds only the LoRA and soft tensors and is under 5% of the
              backbone's size; it loads over the original backbone
              (--load-delta checks the backbone's hash, so the frozen
              weights were bit-identical when it was saved) and evaluates;
              20 steps + --resume + 20 steps give the bit-identical deltas.
  bad-inputs  a data line without the template's field, a label that is not
              a class, a label word the tokenizer cannot spell or that needs
              more than 8 tokens, a delta checkpoint of another backbone, an
              unknown flag, several ranks: each a clear error and a non-zero
              exit.
"""

import json
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
import hf_reference  # noqa: E402
import hf_tokenizers  # noqa: E402

THREADS = ["--threads", "2"]
SEED = 5
RANK, ALPHA = 4, 8.0
# The tune jobs of test/e2e/tune.bmb, as the test must know them.
JOBS = {
    "gpt2": dict(exe="e2e_tune_gpt2", family="gpt2", config="gpt2-nano", batch=4, seq=48,
                 reduce=["first", "mean"], calibrate=[False, True]),
    "bert": dict(exe="e2e_tune_bert", family="bert", config="bert-tiny", batch=4, seq=32,
                 reduce=["max"], calibrate=[True], label_first=True),
    "gpt2-soft": dict(exe="e2e_tune_gpt2_soft", family="gpt2", config="gpt2-nano", batch=4,
                      seq=48, soft_verbalizer=True),
    # BertModel: no head, so the verbalizer reads the last hidden state.
    "bert-soft": dict(exe="e2e_tune_bert_soft", family="bert", config="bert-tiny", batch=4,
                      seq=32, soft_verbalizer=True, headless=True),
    # Prefix tuning (4 positions a layer) with the soft verbalizer: run by
    # check_cuda_tune.py only (the device against the host executable);
    # this file's modes do not take it.
    "gpt2-prefix": dict(exe="e2e_tune_gpt2_prefix", family="gpt2", config="gpt2-nano",
                        batch=4, seq=48, soft_verbalizer=True, prefix=4),
}
LABELS = ["negative", "positive"]
GRAD_EXAMPLES = [("the film was fine", "positive"), ("a dull and slow story", "negative"),
                 ("great acting", "positive"), ("it was a bad idea", "negative")]


def save_file(tensors, path):
    from safetensors.numpy import save_file as save
    save({k: np.ascontiguousarray(v) for k, v in tensors.items()}, path,
         metadata={"format": "pt"})


def write_tsv(path, rows, label_first=False):
    with open(path, "w") as f:
        for text, label in rows:
            f.write(("%s\t%s\n" % (label, text)) if label_first else ("%s\t%s\n" % (text, label)))


class Setup:
    """One job's backbone (with drawn LoRA tensors), tokenizer and executable."""

    def __init__(self, name, exe_dir, workdir):
        self.name = name
        self.job = JOBS[name]
        self.family = family = self.job["family"]
        self.c = configs.get(self.job["config"])
        self.exe = os.path.join(exe_dir, self.job["exe"])
        self.bin = os.path.normpath(os.path.join(exe_dir, "..", "..", "..", "bin"))
        self.dir = os.path.join(workdir, "tune-" + name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.model_dir = os.path.join(self.dir, "backbone")
        self.headless = self.job.get("headless", False)
        # hf_reference's BERT is a BertModel (pooler included), re-drawn;
        # check_train's a BertForMaskedLM.
        self.model = hf_reference.hf_model(self.c) if self.headless else \
            check_train.init_model(self.c)
        self.model.save_pretrained(self.model_dir, safe_serialization=True)
        self.backbone = os.path.join(self.model_dir, "model.safetensors")
        if family == "bert":
            hf_tokenizers.train("bert", self.c["vocab"], self.model_dir)
            self.tokenizer = self.model_dir
        else:
            self.tokenizer = "byte"
        L, D = self.c["layers"], self.c["dim"]
        rng = np.random.default_rng(7)
        n = lambda *shape: rng.normal(0.0, 0.3, shape).astype(np.float32)  # noqa: E731
        prefix = "h" if family == "gpt2" else "enc" if self.headless else "bert.enc"
        self.deltas = {}
        if "prefix" in self.job:  # [layers, length, kv width] keys and values
            for part in ("key", "value"):
                self.deltas["%s.attn.prefix_%s" % (prefix, part)] = n(L, self.job["prefix"], D)
        else:
            for m in ("q", "v"):
                self.deltas["%s.attn.%s.lora_a" % (prefix, m)] = n(L, RANK, D)
                self.deltas["%s.attn.%s.lora_b" % (prefix, m)] = n(L, D, RANK)
        if name == "bert":  # {soft} has no init word: its row comes from the file
            self.deltas["prompt.soft"] = (0.02 * n(1, D) / 0.3).astype(np.float32)
        self.start = os.path.join(self.dir, "start.safetensors")
        backbone = check_train.load_safetensors(self.backbone)
        save_file({**backbone, **self.deltas}, self.start)
        self.plan = self.read_plan()

    def read_plan(self):
        p = harness.run([self.exe, "--info"], quiet=True)
        if p.returncode != 0:
            harness.die("%s --info failed: %s" % (self.exe, harness.tail(p.stderr)))
        for line in harness.text(p.stdout).splitlines():
            if line.startswith("prompt plan: "):
                return json.loads(line[len("prompt plan: "):])
        harness.die("%s --info prints no prompt plan" % self.exe)

    def prompts(self, texts):
        """bmb-prompt's assembly of each text (and the label words, the
        content-free input, the soft tokens' init ids)."""
        plan = os.path.join(self.dir, "plan.json")
        with open(plan, "w") as f:
            json.dump(self.plan, f)
        examples = os.path.join(self.dir, "examples.jsonl")
        with open(examples, "w") as f:
            for t in texts:
                f.write(json.dumps({"text_a": t}) + "\n")
        p = harness.run([os.path.join(self.bin, "bmb-prompt"), "--tokenizer", self.tokenizer,
                         plan, examples], quiet=True)
        if p.returncode != 0:
            harness.die("bmb-prompt failed: %s" % harness.tail(p.stderr))
        return json.loads(harness.text(p.stdout))

    def run(self, fails, label, *args, load=None):
        cmd = [self.exe, "--tokenizer", self.tokenizer, "--seed", str(SEED)] + THREADS
        if load is not None:
            cmd += ["--load", load]
        p = harness.run(cmd + [str(a) for a in args])
        if p.returncode != 0:
            fails.add("%s: exit %s\n%s" % (label, p.returncode, harness.tail(p.stderr)))
            return None
        return p


def lora_hooks(s, model, leaves):
    scale = ALPHA / RANK
    D = s.c["dim"]
    if s.family == "gpt2":
        for i, block in enumerate(model.transformer.h):
            a = {m: leaves["h.attn.%s.lora_a" % m] for m in ("q", "v")}
            b = {m: leaves["h.attn.%s.lora_b" % m] for m in ("q", "v")}

            def hook(mod, inputs, out, i=i, a=a, b=b):
                x = inputs[0]
                q, k, v = out[..., :D], out[..., D:2 * D], out[..., 2 * D:]
                q = q + scale * (x @ a["q"][i].T) @ b["q"][i].T
                v = v + scale * (x @ a["v"][i].T) @ b["v"][i].T
                return torch.cat([q, k, v], dim=-1)
            block.attn.c_attn.register_forward_hook(hook)
    else:
        encoder, prefix = (model.encoder, "enc") if s.headless else (model.bert.encoder, "bert.enc")
        for i, layer in enumerate(encoder.layer):
            for m, mod in (("q", layer.attention.self.query), ("v", layer.attention.self.value)):
                a = leaves["%s.attn.%s.lora_a" % (prefix, m)]
                b = leaves["%s.attn.%s.lora_b" % (prefix, m)]

                def hook(mod, inputs, out, i=i, a=a, b=b):
                    return out + scale * (inputs[0] @ a[i].T) @ b[i].T
                mod.register_forward_hook(hook)


def mask_rows(s, model, soft, assembled, hidden=False):
    """The logits (or the hidden states before the head) at each example's
    mask positions, [B, M, V] ([B, M, D])."""
    T, V = s.job["seq"], s.c["vocab"]
    B = len(assembled)
    ids = torch.zeros(B, T, dtype=torch.long)
    attn = torch.zeros(B, T, dtype=torch.long)
    for b, a in enumerate(assembled):
        ids[b, :len(a["ids"])] = torch.tensor(a["ids"])
        attn[b, :len(a["ids"])] = 1
    emb = model.get_input_embeddings()(ids)
    rows = []
    for b, a in enumerate(assembled):
        e = emb[b]
        for pos, k in a["soft"]:
            e = torch.cat([e[:pos], soft[k:k + 1], e[pos + 1:]])
        rows.append(e)
    embeds = torch.stack(rows)
    if hidden:  # GPT-2: after ln_f, the head's input; BertModel: last_hidden_state
        if s.family == "gpt2":
            h = model.transformer(inputs_embeds=embeds)[0]
        else:
            h = model(inputs_embeds=embeds, attention_mask=attn,
                      token_type_ids=torch.zeros_like(ids))[0]
        return torch.stack([h[b, a["mask"]] for b, a in enumerate(assembled)])
    if s.family == "gpt2":
        logits = model(inputs_embeds=embeds).logits
    else:
        logits = model(inputs_embeds=embeds, attention_mask=attn,
                       token_type_ids=torch.zeros_like(ids)).logits
    assert logits.shape[-1] == V
    return torch.stack([logits[b, a["mask"]] for b, a in enumerate(assembled)])


def word_probs(s, rows, label_words):
    """OpenPrompt's ManualVerbalizer up to the softmax: [B, M, C, W] (padded
    words 0) and the mask of real words [M, C, W]."""
    B, M = rows.shape[0], rows.shape[1]
    C = len(LABELS)
    W = max(len(w) for mask in label_words for w in mask)
    out = torch.zeros(B, M, C, W, dtype=rows.dtype)
    valid = torch.zeros(M, C, W)
    for m in range(M):
        z = torch.full((B, C, W), -float("inf"), dtype=rows.dtype)
        for c in range(C):
            for w, toks in enumerate(label_words[m][c]):
                x = rows[:, m, toks]
                red = s.job["reduce"][m]
                z[:, c, w] = x[:, 0] if red == "first" else x.mean(-1) if red == "mean" \
                    else x.max(-1).values
                valid[m, c, w] = 1
        out[:, m] = torch.softmax(z.reshape(B, -1), -1).reshape(B, C, W)
    return out, valid


def class_scores(s, probs, valid, calibration):
    scores = 0
    for m in range(probs.shape[1]):
        p = probs[:, m]
        if s.job["calibrate"][m]:  # padded words (probability 0) keep divisor 1
            p = p / torch.where(valid[m] > 0, calibration[m], torch.ones_like(calibration[m]))
            p = p / p.sum(dim=(1, 2), keepdim=True)
        lp = torch.log(p + 1e-15) * valid[m]
        scores = scores + lp.sum(-1) / valid[m].sum(-1)
    return scores


def reference(s, examples):
    """(loss, {our name: grad}) of one step on `examples` in torch."""
    import transformers
    cls = transformers.BertModel if s.headless else check_train.lm_class(s.c)
    model = cls.from_pretrained(s.model_dir).float()
    model.config._attn_implementation = "eager"
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    leaves = {k: torch.tensor(v, requires_grad=True) for k, v in s.deltas.items()}
    lora_hooks(s, model, leaves)
    out = s.prompts([t for t, _ in examples] + [""])
    assembled, label_words = out["examples"][:-1], out["label_words"]
    table = model.get_input_embeddings().weight
    if "prompt.soft" not in leaves and out["soft_init"]:  # {soft: "so"}: its init word's rows
        init = torch.stack([table[ids].mean(0) for ids in out["soft_init"]])
        leaves["prompt.soft"] = init.detach().clone().requires_grad_(True)
    labels = torch.tensor([LABELS.index(l) for _, l in examples])
    if s.job.get("soft_verbalizer"):
        # OpenPrompt's SoftVerbalizer: class c's row starts as the mean head
        # row (GPT-2's head is tied to wte) of its first word's tokens; a
        # headless BertModel's, as the mean word-embedding row.
        init = torch.stack([table[words[0]].mean(0) for words in label_words[0]])
        leaves["prompt.labels"] = init.detach().clone().requires_grad_(True)
        rows = mask_rows(s, model, leaves.get("prompt.soft"), assembled, hidden=True)
        scores = (rows @ leaves["prompt.labels"].T).sum(1)
        loss = torch.nn.functional.cross_entropy(scores, labels)
        loss.backward()
        return float(loss), {k: v.grad.numpy() for k, v in leaves.items()}
    with torch.no_grad():  # contextual calibration: the content-free input, once
        cf, _ = word_probs(s, mask_rows(s, model, leaves["prompt.soft"], [out["content_free"]]),
                           label_words)
    probs, valid = word_probs(s, mask_rows(s, model, leaves["prompt.soft"], assembled),
                              label_words)
    scores = class_scores(s, probs, valid, cf[0])
    loss = torch.nn.functional.cross_entropy(scores, labels)
    loss.backward()
    return float(loss), {k: v.grad.numpy() for k, v in leaves.items()}


def check_grads(fails, s):
    data = os.path.join(s.dir, "grads.tsv")
    write_tsv(data, GRAD_EXAMPLES, s.job.get("label_first", False))
    grads, log = os.path.join(s.dir, "grads.safetensors"), os.path.join(s.dir, "grads.jsonl")
    if not s.run(fails, s.name + " one step", "--data", data, "--val-fraction", "0",
                 "--steps", "1", "--lr", "0", "--dump-grads", grads, "--log", log,
                 load=s.start):
        return
    ours_loss = check_train.logged(log)[0]["loss"]
    ref_loss, ref_grads = reference(s, GRAD_EXAMPLES)
    err = abs(ours_loss - ref_loss) / abs(ref_loss)
    print("%s: loss %.8f, torch %.8f (rel %.2e)" % (s.name, ours_loss, ref_loss, err))
    fails.check(err <= 1e-5, "%s: loss %.8f vs torch %.8f" % (s.name, ours_loss, ref_loss))
    ours = check_train.load_safetensors(grads)
    for name, ref in sorted(ref_grads.items()):
        if name not in ours:
            fails.add("%s: --dump-grads has no %s" % (s.name, name))
            continue
        e = harness.rel_err(ours[name], ref)
        print("  grad %-24s rel err %.2e (max |ref| %.3e)" % (name, e, np.abs(ref).max()))
        fails.check(e <= 1e-4 and np.abs(ref).max() > 0,
                    "%s: gradient of %s: rel err %.2e" % (s.name, name, e))


def learnable(n, seed):
    """A trivially learnable task: the label is which of two words the text holds."""
    rng = np.random.default_rng(seed)
    fill = ["the", "film", "plot", "was", "very", "quite", "so", "a", "story", "cast"]
    rows = []
    for i in range(n):
        pos = bool(rng.integers(0, 2)) if i % 5 else False  # 60/40 classes
        words = list(rng.choice(fill, size=int(rng.integers(2, 5))))
        words.insert(int(rng.integers(0, len(words) + 1)), "good" if pos else "awful")
        rows.append((" ".join(words), "positive" if pos else "negative"))
    return rows


def metrics(stdout):
    out = {}
    for line in harness.text(stdout).splitlines():
        k, _, v = line.partition(" ")
        try:
            out[k] = float(v)
        except ValueError:
            pass
    return out


def check_train_run(fails, s):
    data, val = os.path.join(s.dir, "train.tsv"), os.path.join(s.dir, "val.tsv")
    write_tsv(data, learnable(64, 1))
    write_tsv(val, learnable(20, 2))
    save = os.path.join(s.dir, "run")
    shutil.rmtree(save, ignore_errors=True)
    p = s.run(fails, "40 steps", "--data", data, "--val", val, "--steps", "40", "--save", save,
              "--eval-every", "20", "--log", os.path.join(s.dir, "train.jsonl"),
              load=s.backbone)
    if not p:
        return
    m = metrics(p.stdout)
    print("accuracy %.3f, macro-F1 %.3f, majority baseline %.3f"
          % (m.get("accuracy", -1), m.get("macro_f1", -1), m.get("majority_accuracy", -1)))
    fails.check(m.get("accuracy", 0) > m.get("majority_accuracy", 1) and
                m.get("accuracy", 0) >= 0.8,
                "held-out accuracy %s does not beat the majority baseline %s"
                % (m.get("accuracy"), m.get("majority_accuracy")))
    ckpt = os.path.join(save, "step-0000040")
    delta = os.path.join(ckpt, "delta.safetensors")
    if not fails.check(os.path.exists(delta), "no %s" % delta):
        return
    names = sorted(check_train.load_safetensors(delta))
    fails.check(all("lora_" in n or n == "prompt.soft" for n in names),
                "delta.safetensors holds %s" % names)
    ratio = os.path.getsize(delta) / os.path.getsize(s.backbone)
    print("delta.safetensors: %s, %.2f%% of the backbone" % (names, 100 * ratio))
    fails.check(ratio < 0.05, "delta.safetensors is %.1f%% of the backbone" % (100 * ratio))
    # Over the original backbone: the hash (of every frozen tensor at save
    # time) must match, and it evaluates.
    p = s.run(fails, "--eval-only over the backbone", "--eval-only", "--data", data, "--val", val,
              "--load-delta", delta, load=s.backbone)
    if p:
        e = metrics(p.stdout)
        fails.check(e.get("accuracy", 0) > e.get("majority_accuracy", 1),
                    "--eval-only of the checkpoint: accuracy %s" % e.get("accuracy"))
    # 20 + --resume + 20 steps: the same deltas, bit for bit.
    again = os.path.join(s.dir, "resumed")
    shutil.rmtree(again, ignore_errors=True)
    if not s.run(fails, "20 steps", "--data", data, "--val", val, "--steps", "20", "--save",
                 again, load=s.backbone):
        return
    if not s.run(fails, "--resume to 40", "--data", data, "--val", val, "--steps", "40",
                 "--save", again, "--resume", load=s.backbone):
        return
    a = check_train.load_safetensors(delta)
    b = check_train.load_safetensors(os.path.join(again, "step-0000040", "delta.safetensors"))
    fails.check(sorted(a) == sorted(b) and all(np.array_equal(a[k], b[k]) for k in a),
                "20 + --resume + 20 steps differ from 40 straight")


def refused(fails, label, p, code, *needles):
    check_train.refused(fails, label, p, code, *needles)
    if p.returncode == code:
        print("  %s: %s" % (label, harness.tail(p.stderr, 1)))


def check_bad_inputs(fails, g, b):
    base = [g.exe, "--tokenizer", "byte", "--load", g.backbone, "--steps", "1"] + THREADS
    bad = os.path.join(g.dir, "bad.tsv")
    with open(bad, "w") as f:
        f.write("a fine film\tpositive\njust one column\n")
    refused(fails, "a line without its label column", harness.run(base + ["--data", bad]), 1,
            "bad.tsv:2", "label")
    write_tsv(bad, [("a fine film", "positive"), ("so so", "neutral")])
    refused(fails, "a label that is not a class", harness.run(base + ["--data", bad]), 1,
            "bad.tsv:2", "neutral")
    # WordPiece vocabularies of single letters: without 'b', "bad" and
    # "terrible" are [UNK]; with every letter, "wonderful" is 9 tokens (K = 8).
    from transformers import BertTokenizerFast
    good = os.path.join(b.dir, "good.tsv")
    write_tsv(good, GRAD_EXAMPLES, label_first=True)
    # The BERT job reads label = 0, text_a = 1: a line with the label alone
    # lacks the template's field.
    nofield = os.path.join(b.dir, "nofield.tsv")
    with open(nofield, "w") as f:
        f.write("positive\tgreat acting\nnegative\n")
    refused(fails, "a line without the template's field text_a",
            harness.run([b.exe, "--tokenizer", b.tokenizer, "--load", b.backbone, "--steps", "1",
                         "--data", nofield] + THREADS), 1, "nofield.tsv:2", "text_a")
    for name, alphabet, needles in (("no-b", "acdefghijklmnopqrstuvwxyz", ("terrible", "[UNK]")),
                                    ("letters", "abcdefghijklmnopqrstuvwxyz",
                                     ("wonderful", "9 tokens", "at most 8"))):
        vocab_dir = os.path.join(b.dir, name)
        os.makedirs(vocab_dir, exist_ok=True)
        letters = list(alphabet)
        with open(os.path.join(vocab_dir, "vocab.txt"), "w") as f:
            f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "."] + letters +
                              ["##" + c for c in letters]) + "\n")
        BertTokenizerFast(vocab_file=os.path.join(vocab_dir, "vocab.txt"),
                          do_lower_case=True).save_pretrained(vocab_dir)
        refused(fails, "label words with tokenizer " + name,
                harness.run([b.exe, "--tokenizer", vocab_dir, "--load", b.backbone, "--steps",
                             "1", "--data", good] + THREADS), 1, *needles)
    # A delta checkpoint of another backbone.
    write_tsv(good, GRAD_EXAMPLES)
    save = os.path.join(g.dir, "one-step")
    shutil.rmtree(save, ignore_errors=True)
    harness.run(base + ["--data", good, "--val-fraction", "0", "--save", save])
    other_dir = os.path.join(g.dir, "other")
    model = check_train.init_model(g.c)
    with torch.no_grad():
        model.transformer.h[0].mlp.c_fc.weight[0, 0] += 1.0
    model.save_pretrained(other_dir, safe_serialization=True)
    refused(fails, "a delta checkpoint of another backbone",
            harness.run([g.exe, "--tokenizer", "byte", "--load",
                         os.path.join(other_dir, "model.safetensors"), "--eval-only", "--data",
                         good, "--load-delta",
                         os.path.join(save, "step-0000001", "delta.safetensors")] + THREADS), 1,
            "backbone")
    refused(fails, "an unknown flag", harness.run(base + ["--bogus"]), 2, "--bogus")
    mpirun = shutil.which("mpirun")
    if mpirun:
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")
        p = subprocess.run([mpirun, "-np", "2"] + base + ["--data", good], env=env, cwd=g.dir,
                           capture_output=True, timeout=300)
        refused(fails, "two ranks", p, 2, "one process")
    else:
        fails.add("mpirun is not installed: the multi-rank refusal is untested")


def main(argv):
    if len(argv) != 4 or argv[1] not in ("grads", "train", "bad-inputs"):
        harness.die("usage: check_tune.py grads|train|bad-inputs EXE_DIR WORKDIR")
    mode, exe_dir, workdir = argv[1], argv[2], argv[3]
    torch.set_num_threads(2)
    fails = harness.Failures("check_tune " + mode)
    if mode == "grads":
        for name in ("gpt2", "bert", "gpt2-soft", "bert-soft"):
            check_grads(fails, Setup(name, exe_dir, workdir))
    elif mode == "train":
        check_train_run(fails, Setup("gpt2", exe_dir, workdir))
    else:
        check_bad_inputs(fails, Setup("gpt2", exe_dir, workdir),
                         Setup("bert", exe_dir, workdir))
    return fails.exit_code()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
