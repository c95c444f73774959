"""GPT-2 written in plain PyTorch: the PyTorch side of the inference benchmark.

What a careful PyTorch user would write for batch-1 fp32 generation, with no
framework around it: token + position embeddings, pre-LN blocks with
tanh-GELU, a KV cache held in preallocated tensors (no concatenation per
step), the LM head applied to the last row only. Weights come from a
Hugging Face GPT2LMHeadModel state dict; its Conv1D matrices ([in, out])
are stored transposed ([out, in], nn.Linear's layout) once at load, so that
a decode step's single row goes through torch.mv: in Debian's torch 1.13
(generic BLAS) mm/addmm/linear of a [1, k] row ran 1.5-3x slower on this
machine. Many rows (prefill) go through F.linear, as fast as addmm there.
"""

import math

import torch
import torch.nn.functional as F


class PlainGPT2:
    def __init__(self, state, layers, heads, ctx, eps=1e-5):
        g = lambda k: state["transformer." + k].float().contiguous()  # noqa: E731
        t = lambda k: g(k).t().contiguous() if k.endswith("weight") else g(k)  # noqa: E731
        self.wte, self.wpe = g("wte.weight"), g("wpe.weight")
        self.dim = self.wte.shape[1]
        self.heads, self.hd, self.eps = heads, self.dim // heads, eps
        self.blocks = [{k: (t if "c_" in k else g)("h.%d.%s" % (i, k)) for k in (
            "ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias",
            "attn.c_proj.weight", "attn.c_proj.bias", "ln_2.weight", "ln_2.bias",
            "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias")}
            for i in range(layers)]
        self.ln_f = (g("ln_f.weight"), g("ln_f.bias"))
        self.k = torch.zeros(layers, heads, ctx, self.hd)
        self.v = torch.zeros(layers, heads, ctx, self.hd)

    def params(self):
        """Every weight tensor, counted once (the head is tied to wte)."""
        return [self.wte, self.wpe, *self.ln_f] + [t for b in self.blocks for t in b.values()]

    def _ln(self, x, w, b):
        return F.layer_norm(x, (self.dim,), w, b, self.eps)

    @staticmethod
    def _linear(x, w, b):
        """x [T, in] @ w[out, in]^T + b; one row through torch.mv (see above)."""
        if x.shape[0] == 1:
            return (torch.mv(w, x[0]) + b).unsqueeze(0)
        return F.linear(x, w) + b

    def forward(self, ids, pos):
        """ids: LongTensor [T] at positions pos .. pos+T-1 (the cache holds the
        first pos). Returns the last row's logits [1, vocab]."""
        t, d, h, hd = ids.shape[0], self.dim, self.heads, self.hd
        end = pos + t
        x = self.wte[ids] + self.wpe[pos:end]
        mask = None
        if t > 1:  # query i (at pos+i) sees keys 0 .. pos+i
            mask = torch.ones(t, end, dtype=torch.bool).tril(diagonal=pos).logical_not()
        for i, b in enumerate(self.blocks):
            y = self._ln(x, b["ln_1.weight"], b["ln_1.bias"])
            qkv = self._linear(y, b["attn.c_attn.weight"], b["attn.c_attn.bias"])
            q, k, v = (z.view(t, h, hd).transpose(0, 1) for z in qkv.split(d, dim=1))
            self.k[i, :, pos:end] = k
            self.v[i, :, pos:end] = v
            att = torch.matmul(q, self.k[i, :, :end].transpose(1, 2)) * (1.0 / math.sqrt(hd))
            if mask is not None:
                att.masked_fill_(mask, float("-inf"))
            y = torch.matmul(att.softmax(dim=-1), self.v[i, :, :end])
            y = y.transpose(0, 1).reshape(t, d)
            x = x + self._linear(y, b["attn.c_proj.weight"], b["attn.c_proj.bias"])
            y = self._ln(x, b["ln_2.weight"], b["ln_2.bias"])
            y = F.gelu(self._linear(y, b["mlp.c_fc.weight"], b["mlp.c_fc.bias"]),
                       approximate="tanh")
            x = x + self._linear(y, b["mlp.c_proj.weight"], b["mlp.c_proj.bias"])
        last = self._ln(x[-1], *self.ln_f)
        return torch.mv(self.wte, last).unsqueeze(0)

    def generate(self, prompt, new_tokens):
        """Greedy: prefill, then new_tokens - 1 decode steps (the first token
        comes from the prefill's logits). Returns the tokens."""
        logits = self.forward(prompt, 0)
        out = [int(logits.argmax())]
        pos = prompt.shape[0]
        for _ in range(new_tokens - 1):
            logits = self.forward(torch.tensor([out[-1]]), pos)
            pos += 1
            out.append(int(logits.argmax()))
        return out
