"""GPT-2 training in plain PyTorch: the PyTorch side of the training benchmark.

What a PyTorch user writes for fp32 GPT-2 pre-training without a framework
around it: nn.Module blocks (pre-LN, tanh-GELU MLP, causal attention written
out as matmul + mask + softmax + matmul, since Debian's torch 1.13 has no
scaled_dot_product_attention and no torch.compile), the LM head tied to the
token embedding, cross-entropy over every position, torch.optim.AdamW.
Initialised as GPT-2 (normal(0.02), LayerNorm ones/zeros, biases zero).
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(dim, eps=1e-5)
        self.c_attn = nn.Linear(dim, 3 * dim)
        self.c_proj = nn.Linear(dim, dim)
        self.ln_2 = nn.LayerNorm(dim, eps=1e-5)
        self.c_fc = nn.Linear(dim, 4 * dim)
        self.c_proj2 = nn.Linear(4 * dim, dim)

    def forward(self, x, mask):
        B, T, C = x.shape
        h, hd = self.heads, C // self.heads
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = (z.view(B, T, h, hd).transpose(1, 2) for z in (q, k, v))
        att = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        att = att.masked_fill(mask[:T, :T], float("-inf")).softmax(dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(B, T, C)
        x = x + self.c_proj(y)
        return x + self.c_proj2(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT2(nn.Module):
    def __init__(self, vocab, ctx, dim, layers, heads):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(ctx, dim)
        self.h = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim, eps=1e-5)
        self.register_buffer("mask", torch.ones(ctx, ctx, dtype=torch.bool).triu(1))
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)

    def forward(self, tokens, targets):
        T = tokens.shape[1]
        x = self.wte(tokens) + self.wpe(torch.arange(T))
        for b in self.h:
            x = b(x, self.mask)
        logits = F.linear(self.ln_f(x), self.wte.weight)
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.reshape(-1))


def make(vocab, ctx, dim, layers, heads, lr):
    model = GPT2(vocab, ctx, dim, layers, heads)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=0.0)
    return model, opt


def step(model, opt, tokens, targets):
    loss = model(tokens, targets)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return float(loss)


def peak_rss_mib():
    """This process's peak resident set (VmHWM), MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def main():
    """python3 gpt2_train_torch.py VOCAB CTX DIM LAYERS HEADS B T STEPS THREADS
    Prints one JSON line: the wall time of every step and the peak RSS."""
    import json
    import sys
    import time
    vocab, ctx, dim, layers, heads, B, T, steps, threads = map(int, sys.argv[1:10])
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model, opt = make(vocab, ctx, dim, layers, heads, lr=1e-4)
    g = torch.Generator().manual_seed(1)
    data = torch.randint(0, vocab, (steps, B, T + 1), generator=g)
    times, losses = [], []
    for s in range(steps):
        t = time.perf_counter()
        losses.append(step(model, opt, data[s, :, :T], data[s, :, 1:]))
        times.append(time.perf_counter() - t)
    print(json.dumps({"step_s": times, "loss": losses, "peak_rss_mib": peak_rss_mib(),
                      "params": sum(p.numel() for p in model.parameters())}))


if __name__ == "__main__":
    main()
