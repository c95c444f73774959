"""Hugging Face reference for the end-to-end inference tests.

For a config of configs.py this builds the `transformers` model with the same
hyperparameters as ours (GPT2LMHeadModel, LlamaForCausalLM, BertModel),
re-draws every parameter from a fixed seed with non-trivial values (norm
weights away from 1, biases away from 0: a wrong name mapping or a dropped
bias cannot hide behind a default init), saves it with save_pretrained as
safetensors and computes, in fp32 with torch:
  causal models: the logits of the prompt's last row (step 0) and of each
    greedy decode step through HF's own KV cache (past_key_values), and the
    greedy tokens -> ref_logits.npy [steps + 1, vocab], ref_tokens.npy [steps];
  BERT: last_hidden_state and pooler_output with an all-ones mask
    -> ref_hidden.npy [T, dim], ref_pooled.npy [1, dim].
With a tokenizer (configs' tokenizer=True) it also trains one
(hf_tokenizers.py) into the directory and computes the same for a text prompt
(text_*.npy). The directory is cached: meta.json holds a key made of these
sources and the config, and `ensure` rebuilds only when the key changes.

    hf_reference.py CONFIG DIR      # writes DIR (a checkpoint + references)
"""

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import sys

import numpy as np
import torch

# Nothing is downloaded at test time: transformers must not touch the hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import configs  # noqa: E402
import hf_tokenizers  # noqa: E402

SEED = 1234
TEXT_PROMPT = "The licensee may copy and distribute the Program"
TEXT_STEPS = 8
# A greedy step whose top two logits are closer than this (relative to the
# step's max |logit|) could flip under a 1e-4 error; prompts are chosen so no
# step is that close.
MIN_MARGIN = 5e-4
PROMPT_TRIES = 8
WANT_DISTINCT = 3


def hf_model(c):
    """The transformers model for config `c`, fp32, eval mode, eager attention,
    with every parameter re-drawn (see redraw)."""
    import transformers as tf
    f = c["family"]
    if f == "gpt2":
        cfg = tf.GPT2Config(vocab_size=c["vocab"], n_positions=c["ctx"], n_embd=c["dim"],
                            n_layer=c["layers"], n_head=c["heads"], n_inner=None,
                            activation_function="gelu_new",
                            layer_norm_epsilon=c.get("eps", 1e-5),
                            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                            tie_word_embeddings=True,
                            bos_token_id=c["vocab"] - 1, eos_token_id=c["vocab"] - 1)
        cls = tf.GPT2LMHeadModel
    elif f == "llama":
        cfg = tf.LlamaConfig(vocab_size=c["vocab"], hidden_size=c["dim"],
                             intermediate_size=c["hidden"], num_hidden_layers=c["layers"],
                             num_attention_heads=c["heads"], num_key_value_heads=c["kv_heads"],
                             max_position_embeddings=c["ctx"], rms_norm_eps=c["eps"],
                             rope_theta=c["rope_base"], rope_scaling=None, hidden_act="silu",
                             tie_word_embeddings=False, attention_bias=False,
                             attention_dropout=0.0, pretraining_tp=1)
        cls = tf.LlamaForCausalLM
    elif f == "bert":
        cfg = tf.BertConfig(vocab_size=c["vocab"], hidden_size=c["dim"],
                            num_hidden_layers=c["layers"], num_attention_heads=c["heads"],
                            intermediate_size=c["hidden"], hidden_act="gelu",
                            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                            max_position_embeddings=c["ctx"], type_vocab_size=2,
                            layer_norm_eps=c["eps"], position_embedding_type="absolute")
        cls = tf.BertModel
    else:
        raise ValueError("unknown family %r" % f)
    cfg._attn_implementation = "eager"  # the plain softmax(QK^T)V path, fp32
    model = cls(cfg).float().eval()
    redraw(model, SEED)
    return model


def redraw(model, seed):
    """Re-draws every parameter: matrices N(0, clip(1/sqrt(fan_in), .02, .2)),
    embeddings N(0, .02), biases N(0, .05), norm weights 1 + N(0, .2), norm
    biases N(0, .1). Fails on a parameter it does not know, so nothing keeps
    its default (ones/zeros) init. Tied tensors are drawn once, by their
    first owner (GPT-2's wte before lm_head). The small embeddings make the
    first norm's input small, so that its eps moves the output far more than
    the tolerance (self_test.py checks that it does)."""
    from transformers.pytorch_utils import Conv1D
    g = torch.Generator().manual_seed(seed)
    done = set()
    for mname, mod in model.named_modules():
        for pname, p in mod.named_parameters(recurse=False):
            if id(p) in done:
                continue
            done.add(id(p))
            kind = type(mod).__name__
            with torch.no_grad():
                if pname == "bias" and ("Norm" in kind):
                    p.normal_(0.0, 0.1, generator=g)
                elif pname == "bias":
                    p.normal_(0.0, 0.05, generator=g)
                elif "Norm" in kind:  # LayerNorm, LlamaRMSNorm
                    p.normal_(1.0, 0.2, generator=g)
                elif isinstance(mod, torch.nn.Embedding):
                    p.normal_(0.0, 0.02, generator=g)
                elif isinstance(mod, (torch.nn.Linear, Conv1D)):
                    fan_in = p.shape[0] if isinstance(mod, Conv1D) else p.shape[1]
                    p.normal_(0.0, min(0.2, max(0.02, fan_in ** -0.5)), generator=g)
                else:
                    raise RuntimeError("redraw: no rule for %s.%s (%s)" % (mname, pname, kind))
    every = {id(p) for p in model.parameters()}
    if every != done:
        raise RuntimeError("redraw: %d parameters not re-drawn" % len(every - done))


@torch.no_grad()
def causal_reference(model, prompt, steps):
    """Greedy decode through HF's KV cache. Returns (logits [steps+1, vocab]:
    row 0 the prompt's last row, row k the step after feeding token k-1;
    tokens [steps])."""
    out = model(input_ids=torch.tensor([prompt]), use_cache=True)
    rows = [out.logits[0, -1]]
    past = out.past_key_values
    tokens = []
    for _ in range(steps):
        t = int(torch.argmax(rows[-1]))
        tokens.append(t)
        out = model(input_ids=torch.tensor([[t]]), past_key_values=past, use_cache=True)
        past = out.past_key_values
        rows.append(out.logits[0, -1])
    return torch.stack(rows).float().numpy(), np.array(tokens, dtype=np.int32)


@torch.no_grad()
def causal_full_forward(model, prompt, tokens):
    """The same logits from one uncached forward over prompt + tokens."""
    ids = list(prompt) + list(tokens)
    logits = model(input_ids=torch.tensor([ids]), use_cache=False).logits[0]
    return logits[len(prompt) - 1:].float().numpy()


@torch.no_grad()
def bert_reference(model, ids, mask=None):
    """(last_hidden_state [T, dim], pooler_output [1, dim]), token types 0,
    mask all ones unless given."""
    x = torch.tensor([ids])
    m = torch.ones_like(x) if mask is None else torch.tensor([mask])
    out = model(input_ids=x, attention_mask=m, token_type_ids=torch.zeros_like(x))
    return (out.last_hidden_state[0].float().numpy(), out.pooler_output.float().numpy())


def margins(logits, upto):
    """Per step: (top1 - top2) / max|logits| for the first `upto` rows."""
    top = np.sort(logits[:upto], axis=1)[:, -2:]
    return (top[:, 1] - top[:, 0]) / np.abs(logits[:upto]).max(axis=1)


def pick_prompt(model, c):
    """A random prompt (fixed seeds, tried in order) whose greedy steps all
    clear MIN_MARGIN and, if one of the first tries gives it, whose greedy
    continuation has a few distinct tokens (random GPT-2s like to repeat
    one token). Returns (prompt, logits, tokens, min margin)."""
    best, best_score = None, None
    for s in range(PROMPT_TRIES):
        prompt = np.random.default_rng(1000 + s).integers(0, c["vocab"], c["prompt_len"])
        prompt = [int(t) for t in prompt]
        if c["family"] == "bert":
            return prompt, None, None, None
        logits, tokens = causal_reference(model, prompt, c["steps"])
        m = float(margins(logits, c["steps"]).min())
        score = (m >= MIN_MARGIN, min(len(set(tokens.tolist())), WANT_DISTINCT), m)
        if best is None or score > best_score:
            best, best_score = (prompt, logits, tokens, m), score
        if score[:2] == (True, WANT_DISTINCT):
            break
    if not best_score[0]:
        print("hf_reference: warning: no prompt with greedy margin >= %g; best %g"
              % (MIN_MARGIN, best[3]), file=sys.stderr)
    return best


def cache_key(c):
    h = hashlib.sha256(json.dumps(c, sort_keys=True).encode())
    for name in ("configs.py", "hf_reference.py", "hf_tokenizers.py"):
        with open(os.path.join(HERE, name), "rb") as f:
            h.update(f.read())
    import transformers
    h.update(transformers.__version__.encode() + torch.__version__.encode())
    if c["tokenizer"]:
        h.update(hf_tokenizers.corpus_hash().encode())
    return h.hexdigest()[:20]


def save(name, array, d):
    np.save(os.path.join(d, name), array)


def build(c, d, references=True):
    """Writes the checkpoint (and references, tokenizer) of config c into d."""
    torch.set_num_threads(2)
    model = hf_model(c)
    model.save_pretrained(d, safe_serialization=True)
    meta = {"config": c, "params": sum(p.numel() for p in model.parameters())}
    if references:
        prompt, logits, tokens, m = pick_prompt(model, c)
        save("prompt_ids.npy", np.array(prompt, dtype=np.int32), d)
        if c["family"] == "bert":
            hidden, pooled = bert_reference(model, prompt)
            save("ref_hidden.npy", hidden, d)
            save("ref_pooled.npy", pooled, d)
        else:
            save("ref_logits.npy", logits, d)
            save("ref_tokens.npy", tokens, d)
            meta["min_margin"] = m
    if references and c["tokenizer"]:
        hf_tokenizers.train(c["family"], c["vocab"], d)
        tok = hf_tokenizers.load(d)
        ids = [int(t) for t in tok(TEXT_PROMPT)["input_ids"]]
        save("text_prompt_ids.npy", np.array(ids, dtype=np.int32), d)
        meta["text_prompt"] = TEXT_PROMPT
        if c["family"] == "bert":
            hidden, pooled = bert_reference(model, ids)
            save("text_ref_hidden.npy", hidden, d)
            save("text_ref_pooled.npy", pooled, d)
        else:
            logits, tokens = causal_reference(model, ids, TEXT_STEPS)
            save("text_ref_logits.npy", logits, d)
            save("text_ref_tokens.npy", tokens, d)
            meta["text_min_margin"] = float(margins(logits, TEXT_STEPS).min())
            meta["text_generated"] = tok.decode([int(t) for t in tokens])
    return meta


@contextlib.contextmanager
def locked(path):
    """An exclusive lock file: ctest may run the tests of one config at once."""
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def ensure(c, workdir, references=True):
    """The directory of config c under workdir, built unless cached."""
    os.makedirs(workdir, exist_ok=True)
    d = os.path.join(workdir, c["name"])
    key = cache_key(c) + ("" if references else "-noref")
    with locked(os.path.join(workdir, "." + c["name"] + ".lock")):
        try:
            with open(os.path.join(d, "meta.json")) as f:
                if json.load(f)["key"] == key:
                    return d
        except (OSError, ValueError, KeyError):
            pass
        print("hf_reference: building %s in %s" % (c["name"], d), file=sys.stderr)
        tmp = d + ".tmp%d" % os.getpid()
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        meta = build(c, tmp, references)
        meta["key"] = key
        with open(os.path.join(tmp, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
        shutil.rmtree(d, ignore_errors=True)
        os.rename(tmp, d)
    return d


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    c = configs.get(argv[1])
    d = os.path.abspath(argv[2])
    os.makedirs(d, exist_ok=True)
    meta = build(c, d)
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(d)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
