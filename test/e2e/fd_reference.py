"""The models of test/e2e/fd.bmb in float64 numpy, written from their
definitions (stdlib/nn.bmb, Hugging Face's GPT-2 and Llama conventions), not
from our kernels: check_fd.py compares the program's loss with these, so a
forward that is wrong in the same way in both of the program's entries (its
gradient would still match its own finite differences) is caught too.

The runtime takes norm eps, attention scale and rotary base as float32
arguments; the reference uses the exact values, which moves the loss by
about 1e-10 relative (check_fd.py allows 1e-8)."""

import numpy as np


def layernorm(x, w, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def rmsnorm(x, w, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def silu(x):
    return x / (1 + np.exp(-x))


def rotary(x, heads, base=10000.0):
    """Hugging Face's rotate_half form: feature i pairs with i + hd/2."""
    B, T, _ = x.shape
    x = x.reshape(B, T, heads, -1)
    half = x.shape[-1] // 2
    angle = np.arange(T)[:, None] * base ** (-np.arange(half) * 2.0 / (2 * half))[None]
    cos = np.concatenate([np.cos(angle)] * 2, -1)[None, :, None]
    sin = np.concatenate([np.sin(angle)] * 2, -1)[None, :, None]
    rotated = np.concatenate([-x[..., half:], x[..., :half]], -1)
    return (x * cos + rotated * sin).reshape(B, T, -1)


def attention(q, k, v, heads, kv_heads):
    """Causal multi-head attention; kv_heads < heads shares each k/v head
    among heads / kv_heads query heads."""
    B, T, D = q.shape
    hd = D // heads
    q = q.reshape(B, T, heads, hd).transpose(0, 2, 1, 3)
    k = np.repeat(k.reshape(B, T, kv_heads, hd).transpose(0, 2, 1, 3), heads // kv_heads, 1)
    v = np.repeat(v.reshape(B, T, kv_heads, hd).transpose(0, 2, 1, 3), heads // kv_heads, 1)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
    s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return (p @ v).transpose(0, 2, 1, 3).reshape(B, T, D)


def linear(x, w, b=None):
    return x @ w.T + (0 if b is None else b)


def one_block(W, tokens, heads=4):
    """fd_block: embeddings, one GPT-2 Block (pre-LN, biased attention,
    tanh-GELU MLP), final LayerNorm, head tied to wte."""
    x = W["wte.w"][tokens] + W["wpe.w"][np.arange(tokens.shape[1])]
    h = layernorm(x, W["h.ln1.w"], W["h.ln1.b"])
    q, k, v = (linear(h, W["h.attn.%s.w" % n], W["h.attn.%s.b" % n]) for n in "qkv")
    x = x + linear(attention(q, k, v, heads, heads), W["h.attn.o.w"], W["h.attn.o.b"])
    h = layernorm(x, W["h.ln2.w"], W["h.ln2.b"])
    x = x + linear(gelu_tanh(linear(h, W["h.mlp.up.w"], W["h.mlp.up.b"])),
                   W["h.mlp.down.w"], W["h.mlp.down.b"])
    return linear(layernorm(x, W["ln_f.w"], W["ln_f.b"]), W["wte.w"])


def two_llama_blocks(W, tokens, heads=4, kv_heads=2):
    """fd_llama: embedding, two Llama blocks (stacked params [2, ...]),
    final RMSNorm (eps 1e-6), untied head with a bias."""
    x = W["embed.w"][tokens]
    for i in range(W["h.attn.q.w"].shape[0]):
        p = {k[2:]: v[i] for k, v in W.items() if k.startswith("h.")}
        h = rmsnorm(x, p["attn_norm.w"], 1e-5)
        q = rotary(linear(h, p["attn.q.w"]), heads)
        k = rotary(linear(h, p["attn.k.w"]), kv_heads)
        y = attention(q, k, linear(h, p["attn.v.w"]), heads, kv_heads)
        x = x + linear(y, p["attn.o.w"])
        h = rmsnorm(x, p["mlp_norm.w"], 1e-5)
        x = x + linear(silu(linear(h, p["mlp.gate.w"])) * linear(h, p["mlp.up.w"]),
                       p["mlp.down.w"])
    return linear(rmsnorm(x, W["norm.w"], 1e-6), W["head.w"], W["head.b"])


MODELS = {"fd_block": one_block, "fd_llama": two_llama_blocks}


def loss(job, W, ids, batch, seq):
    """Mean next-token cross-entropy over the one batch: row b is the window
    of seq + 1 ids starting at b * seq."""
    rows = np.array([ids[b * seq:b * seq + seq + 1] for b in range(batch)])
    logits = MODELS[job](W, rows[:, :-1])
    logits = logits - logits.max(-1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    return float(-np.take_along_axis(logp, rows[:, 1:, None], -1).mean())
