"""The model configurations the end-to-end inference tests run, in one table.

Each entry gives the hyperparameters of one model of models/*.bmb (or of an
alias in test/e2e/*.bmb) and the test's prompt and decode length; which
infer job compiles it is in CMakeLists.txt. hf_reference.py builds the
Hugging Face model from these numbers, so they must match the .bmb side
exactly: a mismatch shows up as a shape error when our executable loads the
checkpoint.
"""

# Shared by every causal config: prompt length and greedy decode steps.
PROMPT_LEN = 16
DECODE_STEPS = 32

CONFIGS = {
    # GPT-2: learned positions, pre-LN, tanh-GELU, tied head, eps 1e-5
    # (models/gpt2.bmb has no eps parameter; hf_reference.py's default).
    "gpt2-nano": dict(family="gpt2", vocab=512, ctx=64, dim=64, layers=2, heads=4,
                      tokenizer=True),
    "gpt2-tiny": dict(family="gpt2", vocab=50257, ctx=256, dim=192, layers=6, heads=6),
    "gpt2-small": dict(family="gpt2", vocab=50257, ctx=1024, dim=768, layers=12, heads=12),
    # Llama: RMSNorm, rotary, grouped-query attention, SwiGLU, untied head.
    # The nano config keeps the defaults (eps 1e-5, base 1e4); the tiny one
    # (LlamaTiny in test/e2e/llama.bmb) sets other values, so that a compiler
    # ignoring either setting fails (self_test.py checks that it would).
    "llama-nano": dict(family="llama", vocab=512, ctx=64, dim=64, layers=2, heads=4,
                       kv_heads=2, hidden=176, eps=1e-5, rope_base=10000.0),
    "llama-tiny": dict(family="llama", vocab=1024, ctx=256, dim=256, layers=4, heads=8,
                       kv_heads=4, hidden=688, eps=1e-6, rope_base=500000.0),
    # BERT: post-LN encoder, erf-GELU, eps 1e-12, tanh pooler over row 0.
    "bert-tiny": dict(family="bert", vocab=1024, ctx=128, dim=128, layers=2, heads=2,
                      hidden=512, eps=1e-12,
                      prompt_len=24, tokenizer=True),
}


def get(name):
    """The config called `name`, with the shared defaults filled in."""
    if name not in CONFIGS:
        raise SystemExit("unknown config %r; known: %s" % (name, ", ".join(CONFIGS)))
    c = dict(CONFIGS[name])
    c["name"] = name
    c.setdefault("prompt_len", PROMPT_LEN)
    c.setdefault("steps", 0 if c["family"] == "bert" else DECODE_STEPS)
    c.setdefault("tokenizer", False)
    return c


def smaller(c):
    """The same family at half the width: a checkpoint of "another size" for
    the bad-input tests (every matrix's shape differs from `c`'s)."""
    s = dict(c)
    s["name"] = c["name"] + "-half"
    s["dim"] = c["dim"] // 2
    if "hidden" in c:
        s["hidden"] = c["hidden"] // 2
    s["tokenizer"] = False
    return s
