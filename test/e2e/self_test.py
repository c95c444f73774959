"""Checks of the reference side alone (check_infer.py --self-test): that what
hf_reference.py wrote is what Hugging Face computes, and that the test built
on it can fail.

  1. The saved checkpoint reloads (from_pretrained, offline) and one uncached
     full forward over prompt + greedy tokens gives every cached step's
     logits and the same greedy tokens (BERT: the prompt padded with masked
     tokens gives the same rows and pooled output).
  2. Every saved tensor is finite and non-constant (no default ones/zeros).
  3. Sensitivity: the same model with its norms and biases reset to HF's
     defaults, or with another norm eps (1e-5 <-> the config's), or another
     rope base, misses the reference by far more than the tolerance, so a
     checkpoint mapping that drops them or a compiler that ignores a
     setting cannot pass.
  4. The tokenizer, when there is one, reloads and encodes the text prompt to
     the ids the reference used.
"""

import os

import numpy as np
import torch

import harness
import hf_reference
import hf_tokenizers

SELF_TOL = 1e-5  # HF against HF: 10x tighter than what ours must meet


def reload(c, d):
    import transformers as tf
    cls = {"gpt2": tf.GPT2LMHeadModel, "llama": tf.LlamaForCausalLM, "bert": tf.BertModel}
    return cls[c["family"]].from_pretrained(d, local_files_only=True,
                                            attn_implementation="eager").float().eval()


def check_causal(c, d, model, fails):
    prompt = np.load(os.path.join(d, "prompt_ids.npy")).tolist()
    ref = np.load(os.path.join(d, "ref_logits.npy"))
    tokens = np.load(os.path.join(d, "ref_tokens.npy"))
    full = hf_reference.causal_full_forward(model, prompt, tokens.tolist())
    errs = [harness.rel_err(full[k], ref[k]) for k in range(len(ref))]
    print("cached decode vs full forward: %d steps, max rel err %.2e (step %d)"
          % (len(ref), max(errs), int(np.argmax(errs))))
    for k, e in enumerate(errs):
        fails.check(e <= SELF_TOL, "step %d: cached logits differ from the full forward by "
                    "%.2e > %.0e" % (k, e, SELF_TOL))
    greedy = full[:len(tokens)].argmax(axis=1)
    fails.check(np.array_equal(greedy, tokens), "greedy tokens of the full forward %s != cached %s"
                % (greedy.tolist(), tokens.tolist()))
    m = hf_reference.margins(ref, len(tokens)).min()
    print("greedy margin (top1 - top2) / max|logit|: min %.2e over %d steps"
          % (m, len(tokens)))
    fails.check(m >= hf_reference.MIN_MARGIN, "a greedy step is a near tie (%.2e)" % m)
    print("tokens (%d distinct): %s" % (len(set(tokens.tolist())), tokens.tolist()))
    return prompt, ref


def check_bert(c, d, model, fails):
    prompt = np.load(os.path.join(d, "prompt_ids.npy")).tolist()
    hidden = np.load(os.path.join(d, "ref_hidden.npy"))
    pooled = np.load(os.path.join(d, "ref_pooled.npy"))
    pad = np.random.default_rng(7).integers(0, c["vocab"], 8).tolist()
    h2, p2 = hf_reference.bert_reference(model, prompt + pad, [1] * len(prompt) + [0] * 8)
    e_h = harness.rel_err(h2[:len(prompt)], hidden)
    e_p = harness.rel_err(p2, pooled)
    print("padded+masked vs reference: hidden rel err %.2e, pooled rel err %.2e" % (e_h, e_p))
    fails.check(e_h <= SELF_TOL, "hidden with masked padding differs: %.2e" % e_h)
    fails.check(e_p <= SELF_TOL, "pooled with masked padding differs: %.2e" % e_p)
    return prompt, hidden


def check_tensors(d, fails):
    from safetensors.numpy import load_file
    tensors = load_file(os.path.join(d, "model.safetensors"))
    bad = [k for k, v in tensors.items() if not np.all(np.isfinite(v)) or v.min() == v.max()]
    print("checkpoint: %d tensors, %d values, none constant: %s"
          % (len(tensors), sum(v.size for v in tensors.values()), "yes" if not bad else "NO"))
    fails.check(not bad, "constant or non-finite tensors in the checkpoint: %s" % bad)


def first_output(c, model, prompt):
    """The step-0 output: the prompt's last logits row, or BERT's hidden."""
    if c["family"] == "bert":
        return hf_reference.bert_reference(model, prompt)[0]
    return hf_reference.causal_reference(model, prompt, 0)[0][0]


def check_setting_probes(c, prompt, ref, fails):
    """The model with one setting changed (same seed, so same weights) must
    miss the reference by > 10x the tolerance."""
    eps = c.get("eps", 1e-5)
    probes = [("eps", 1e-6 if eps == 1e-5 else 1e-5)]
    if c["family"] == "llama":
        probes.append(("rope_base", 500000.0 if c["rope_base"] == 10000.0 else 10000.0))
    for key, value in probes:
        e = harness.rel_err(first_output(c, hf_reference.hf_model(dict(c, **{key: value})),
                                         prompt), ref[0] if c["family"] != "bert" else ref)
        print("sensitivity: %s %g instead of %g misses the reference by %.2e"
              % (key, value, c.get(key, eps), e))
        fails.check(e > 10 * harness.TOL, "%s %g instead of %g changes the output by only "
                    "%.2e: a compiler ignoring it would pass" % (key, value, c.get(key, eps), e))


def check_sensitivity(c, model, prompt, ref, fails):
    """Norm weights -> 1 and biases -> 0, as HF's init leaves them (changes
    `model` in place: run last)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.zero_()
            elif "norm" in name.lower() or name.split(".")[-2].startswith("ln"):
                p.fill_(1.0)
    e = harness.rel_err(first_output(c, model, prompt), ref[0] if c["family"] != "bert" else ref)
    print("sensitivity: default norms/biases miss the reference by %.2e (tolerance %.0e)"
          % (e, harness.TOL))
    fails.check(e > 100 * harness.TOL, "resetting norms and biases changes the output by only "
                "%.2e: the test could not tell" % e)


def check_tokenizer(c, d, fails):
    tok = hf_tokenizers.load(d)
    ids = tok(hf_reference.TEXT_PROMPT)["input_ids"]
    want = np.load(os.path.join(d, "text_prompt_ids.npy")).tolist()
    print("tokenizer: %s, %d entries; %r -> %s"
          % (type(tok).__name__, len(tok), hf_reference.TEXT_PROMPT, ids))
    fails.check(ids == want, "tokenizer reload encodes the text prompt to %s, not %s" % (ids, want))
    fails.check(len(tok) <= c["vocab"], "tokenizer has %d entries > vocab %d"
                % (len(tok), c["vocab"]))


def main(c, workdir):
    fails = harness.Failures("self-test %s" % c["name"])
    d = hf_reference.ensure(c, workdir)
    print("reference directory: %s" % d)
    torch.set_num_threads(2)
    model = reload(c, d)
    print("%s: %d parameters" % (type(model).__name__, sum(p.numel() for p in model.parameters())))
    if c["family"] == "bert":
        prompt, ref = check_bert(c, d, model, fails)
    else:
        prompt, ref = check_causal(c, d, model, fails)
    check_tensors(d, fails)
    if c["tokenizer"]:
        check_tokenizer(c, d, fails)
    check_setting_probes(c, prompt, ref, fails)
    check_sensitivity(c, model, prompt, ref, fails)
    return fails.exit_code()
