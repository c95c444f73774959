#!/usr/bin/env python3
"""Host kernels (attention, norms, softmax, rotary, embedding, copies) against
torch and transformers.

Our kernels run through kernels_shim (ctypes); the references are written in
torch from the definitions (attention as an explicit softmax(QK^T*scale +
mask)V in float64, layer_norm, softmax, indexing) or are Hugging Face's own
modules (LlamaRMSNorm, LlamaRotaryEmbedding + apply_rotary_pos_emb), so a
convention mistake in our code cannot be mirrored in the reference.

usage: kernels_reference_test.py <libkernels_shim.so> {attention|norms|rowops}
Tolerance: max |ours - ref| <= tol * max |ref|, tol = 1e-5 (float), 1e-12 (double).
"""
import ctypes
import sys

import numpy as np
import torch

import shimlib  # noqa: E402
from shimlib import P, I64, F32, INT, DTYPES, failures, bind, ptr, call, expect  # noqa: E402

TOL = {0: 1e-5, 1: 1e-12}


def check(name, ours, ref, dt):
    shimlib.check(f"{name} [{DTYPES[dt].__name__}]", ours, ref, TOL[dt])


def load(path):
    lib = ctypes.CDLL(path)
    sig = {
        "kernels_attention": [INT, P, F32, P, P, P, P, P, P, P, INT, P, INT],
        "kernels_layernorm": [INT, P, P, P, P, I64, I64, F32, INT, P, INT],
        "kernels_residual_layernorm": [INT, P, P, P, P, P, P, I64, I64, F32, INT, P, INT],
        "kernels_rmsnorm": [INT, P, P, P, I64, I64, F32, INT, P, INT],
        "kernels_residual_rmsnorm": [INT, P, P, P, P, P, I64, I64, F32, INT, P, INT],
        "kernels_softmax": [INT, P, P, I64, I64, INT, P, INT],
        "kernels_rotary": [INT, P, P, P, I64, I64, I64, I64, F32, INT, P, INT],
        "kernels_embedding": [INT, P, P, P, I64, I64, I64, INT, P, INT],
        "kernels_positions": [P, I64, I64, P, INT],
        "kernels_copy_strided": [INT, P, P, I64, I64, I64, I64, INT, P, INT],
    }
    return bind(lib, sig)


# ----------------------------------------------------------------- attention

def ref_attention(q, keys, vals, heads, kv_heads, hd, start, causal, scale, mask):
    """softmax(q k^T * scale + mask) v in float64; rows with no key give zeros.
    q [B, rows, heads*hd]; keys/vals [B, L, kv_heads*hd] with L = start + rows."""
    q, keys, vals = (torch.as_tensor(t).to(torch.float64) for t in (q, keys, vals))
    B, rows, L = q.shape[0], q.shape[1], keys.shape[1]
    group = heads // kv_heads
    qh = q.view(B, rows, heads, hd).transpose(1, 2)
    kh = keys.view(B, L, kv_heads, hd).transpose(1, 2).repeat_interleave(group, dim=1)
    vh = vals.view(B, L, kv_heads, hd).transpose(1, 2).repeat_interleave(group, dim=1)
    s = qh @ kh.transpose(-1, -2) * scale
    allowed = torch.ones(B, 1, rows, L, dtype=torch.bool)
    if causal:
        r = torch.arange(rows)[:, None] + start
        allowed = allowed & (torch.arange(L)[None, :] <= r)
    if mask is not None:
        allowed = allowed & (torch.as_tensor(mask[:, :L]) != 0)[:, None, None, :]
    p = torch.softmax(s.masked_fill(~allowed, float("-inf")), dim=-1)
    p = torch.nan_to_num(p, nan=0.0)  # a row with nothing to attend to
    return (p @ vh).transpose(1, 2).reshape(B, rows, heads * hd)


class Attn:
    """One attention_forward call on buffers laid out like an emitted program:
    q/k/v/out are [B, cap, width] buffers (possibly one fused qkv buffer), the
    caches [B, cap, kv_heads*hd] start as NaN so reading an unwritten row shows."""

    def __init__(self, dt, B, cap, heads, kv_heads, hd, causal=True, mask=None):
        self.dt, self.B, self.cap = dt, B, cap
        self.heads, self.kv_heads, self.hd, self.causal = heads, kv_heads, hd, causal
        self.kv = kv_heads * hd
        self.scale = float(np.float32(1.0 / np.sqrt(hd)))
        self.mask = None if mask is None else np.ascontiguousarray(mask, dtype=np.int32)
        self.kc = np.full((B, cap, self.kv), np.nan, DTYPES[dt])
        self.vc = np.full((B, cap, self.kv), np.nan, DTYPES[dt])

    def run(self, out, out_off, q, q_off, k, k_off, v, v_off, rows, start, threads=2):
        """out/q/k/v: [B, cap, width] arrays; *_off: element offset in a row."""
        width = lambda a: a.shape[2]
        iargs = (I64 * 14)(self.B, rows, self.heads, self.kv_heads, self.hd,
                           width(q), q.shape[1] * width(q), width(k), k.shape[1] * width(k),
                           width(out), out.shape[1] * width(out), self.cap, start,
                           int(self.causal))
        call(LIB.kernels_attention, self.dt, iargs, self.scale, ptr(self.mask),
             ptr(out, out_off), ptr(q, q_off), ptr(k, k_off), ptr(v, v_off),
             ptr(self.kc), ptr(self.vc), threads)

    def reference(self, q, rows, start):
        L = start + rows
        return ref_attention(q, self.kc[:, :L], self.vc[:, :L], self.heads, self.kv_heads,
                             self.hd, start, self.causal, self.scale, self.mask)


def rand(rng, dt, *shape):
    return rng.standard_normal(shape).astype(DTYPES[dt])


def padded_output(dt, B, cap, width):
    """An output buffer wider and longer than the result, NaN everywhere, so a
    write outside [rows, heads*hd] shows (see check_padding)."""
    return np.full((B, cap, width + 16), np.nan, DTYPES[dt])


def check_padding(name, out, rows, width, dt):
    expect(f"{name}: nothing written outside the output [{DTYPES[dt].__name__}]",
           np.isnan(out[:, :, width:]).all() and np.isnan(out[:, rows:]).all())


def attention_separate_buffers(dt, rng, name, B, T, heads, kv_heads, hd, causal=True,
                               mask=None, threads=2, q_gain=1.0):
    """Prefill from separate q, k, v buffers: checks the output and the cache copy.
    q_gain > 1 spreads the scores (peaked softmax, exp far into its range)."""
    cap = T + 5
    a = Attn(dt, B, cap, heads, kv_heads, hd, causal, mask)
    q = (rand(rng, dt, B, cap, heads * hd) * q_gain).astype(DTYPES[dt])
    k = rand(rng, dt, B, cap, a.kv)
    v = rand(rng, dt, B, cap, a.kv)
    out = padded_output(dt, B, cap, heads * hd)
    a.run(out, 0, q, 0, k, 0, v, 0, T, 0, threads)
    expect(f"{name}: k/v copied to cache rows [0, {T}) [{DTYPES[dt].__name__}]",
           np.array_equal(a.kc[:, :T], k[:, :T]) and np.array_equal(a.vc[:, :T], v[:, :T])
           and np.isnan(a.kc[:, T:]).all() and np.isnan(a.vc[:, T:]).all())
    check_padding(name, out, T, heads * hd, dt)
    check(name, out[:, :T, :heads * hd], a.reference(q[:, :T], T, 0), dt)
    return out[:, :T, :heads * hd]


def attention_prefill_then_decode(dt, rng, B, heads, kv_heads, hd, n0, steps, mask=None):
    """Prefill n0 rows then decode `steps` rows one at a time, with the k/v
    projections written straight into the cache (fused [q | k | v] buffer whose
    k/v parts are the cache: the kernel must skip the copy); then one full causal
    pass over all rows on a fresh cache must give the same outputs."""
    T = n0 + steps
    kv = kv_heads * hd
    q = rand(rng, dt, B, T, heads * hd)
    k = rand(rng, dt, B, T, kv)
    v = rand(rng, dt, B, T, kv)
    tag = f"prefill {n0} + {steps} decode, heads {heads}/{kv_heads}, hd {hd}"

    inc = Attn(dt, B, T, heads, kv_heads, hd, True, mask)
    inc.kc[:] = k  # projections already in the cache (in place)
    inc.vc[:] = v
    out_inc = np.zeros((B, T, heads * hd), DTYPES[dt])
    inc.run(out_inc, 0, q, 0, inc.kc, 0, inc.vc, 0, n0, 0)
    for t in range(n0, T):
        inc.run(out_inc, t * heads * hd, q, t * heads * hd, inc.kc, t * kv, inc.vc, t * kv,
                1, t)

    full = Attn(dt, B, T, heads, kv_heads, hd, True, mask)
    qkv = np.concatenate([q, k, v], axis=2)  # one fused projection buffer
    out_full = np.zeros((B, T, heads * hd), DTYPES[dt])
    w = heads * hd
    full.run(out_full, 0, qkv, 0, qkv, w, qkv, w + kv, T, 0, threads=1)

    ref = ref_attention(q, k, v, heads, kv_heads, hd, 0, True, full.scale, mask)
    check(f"{tag}: incremental vs torch", out_inc, ref, dt)
    check(f"{tag}: full pass (fused qkv) vs torch", out_full, ref, dt)
    check(f"{tag}: incremental vs full pass", out_inc, out_full, dt)
    expect(f"{tag}: in-place cache left intact [{DTYPES[dt].__name__}]",
           np.array_equal(inc.kc, k) and np.array_equal(inc.vc, v))


def attention_chunked(dt, rng, B, heads, kv_heads, hd, first, rows, causal=True):
    """start > 0: the cache holds `first` rows from earlier calls, `rows` new
    ones are appended and attend to everything before them."""
    cap = first + rows + 3
    a = Attn(dt, B, cap, heads, kv_heads, hd, causal)
    a.kc[:, :first] = rand(rng, dt, B, first, a.kv)
    a.vc[:, :first] = rand(rng, dt, B, first, a.kv)
    q = rand(rng, dt, B, rows, heads * hd)
    k = rand(rng, dt, B, rows, a.kv)
    v = rand(rng, dt, B, rows, a.kv)
    out = padded_output(dt, B, rows + 2, heads * hd)
    a.run(out, 0, q, 0, k, 0, v, 0, rows, first)
    name = (f"chunk of {rows} at start {first}, heads {heads}/{kv_heads}, hd {hd}, "
            f"{'causal' if causal else 'bidirectional'}")
    check_padding(name, out, rows, heads * hd, dt)
    check(name, out[:, :rows, :heads * hd], a.reference(q, rows, first), dt)


def attention_errors(dt):
    a = Attn(dt, 1, 4, 2, 2, 4)
    buf = np.zeros((1, 4, 8), DTYPES[dt])
    try:
        a.run(buf, 0, buf, 0, buf, 0, buf, 0, 3, 2)
        expect("attention past the cache capacity fails", False)
    except RuntimeError as e:
        expect(f"attention past the cache capacity fails: '{e}'",
               "capacity 4" in str(e) and "[2, 5)" in str(e))


def test_attention():
    for dt in (0, 1):
        rng = np.random.default_rng(1234 + dt)
        attention_separate_buffers(dt, rng, "causal prefill, MHA, hd 16", 2, 37, 4, 4, 16)
        attention_separate_buffers(dt, rng, "causal prefill, GQA 8/2, hd 64", 1, 70, 8, 2, 64)
        attention_separate_buffers(dt, rng, "causal prefill, MQA 3/1, hd 8, 1 thread", 2, 9,
                                   3, 1, 8, threads=1)
        attention_separate_buffers(dt, rng, "bidirectional, GQA 4/2, hd 80", 2, 23, 4, 2, 80,
                                   causal=False)
        attention_separate_buffers(dt, rng, "causal, peaked scores (q x 8), hd 64", 1, 45, 2,
                                   2, 64, q_gain=8.0)
        pad = np.ones((3, 24), np.int32)
        pad[1, 16:] = 0   # right padding
        pad[2, :] = 0     # nothing to attend to: zeros
        attention_separate_buffers(dt, rng, "bidirectional + padding mask", 3, 19, 4, 2, 16,
                                   causal=False, mask=pad)
        left = np.ones((2, 17), np.int32)
        left[1, :3] = 0   # left padding: rows 0..2 see no key under causality
        out = attention_separate_buffers(dt, rng, "causal + left padding mask", 2, 12, 2, 2,
                                         32, mask=left)
        expect(f"rows with no visible key are zero [{DTYPES[dt].__name__}]",
               not out[1, :3].any() and out[1, 3:].any())
        attention_prefill_then_decode(dt, rng, 2, 4, 4, 16, 13, 5)      # dot-product decode
        attention_prefill_then_decode(dt, rng, 1, 8, 2, 64, 21, 6)      # GQA: tiled decode
        dec_mask = np.ones((2, 12), np.int32)
        dec_mask[0, :2] = 0
        dec_mask[1, 7] = 0
        attention_prefill_then_decode(dt, rng, 2, 2, 1, 24, 7, 5, mask=dec_mask)
        attention_chunked(dt, rng, 2, 4, 2, 64, 15, 10)
        attention_chunked(dt, rng, 1, 6, 3, 72, 40, 33)
        attention_chunked(dt, rng, 1, 2, 2, 16, 8, 4, causal=False)
        attention_errors(dt)


# ---------------------------------------------------------------------- norms

def test_norms():
    from transformers.models.llama.modeling_llama import LlamaRMSNorm
    for dt in (0, 1):
        rng = np.random.default_rng(99 + dt)
        tdt = torch.float32 if dt == 0 else torch.float64
        for rows, C, threads in ((7, 48, 2), (1, 769, 1), (33, 256, 2)):
            eps = 1e-5
            eps_exact = float(np.float32(eps))  # the kernel takes eps as a float
            x = rand(rng, dt, rows, C) * 3 + 5  # |mean| >> std: needs two passes
            w = rand(rng, dt, C)
            b = rand(rng, dt, C)
            out = np.zeros_like(x)
            call(LIB.kernels_layernorm, dt, ptr(out), ptr(x), ptr(w), ptr(b), rows, C, eps,
                 threads)
            xt, wt, bt = (torch.from_numpy(t) for t in (x, w, b))
            xd, wd, bd = (t.double() for t in (xt, wt, bt))  # fp64 reference
            check(f"layernorm {rows}x{C}", out,
                  torch.nn.functional.layer_norm(xd, (C,), wd, bd, eps_exact), dt)
            call(LIB.kernels_layernorm, dt, ptr(out), ptr(x), ptr(w), None, rows, C, eps,
                 threads)
            check(f"layernorm {rows}x{C}, no bias", out,
                  torch.nn.functional.layer_norm(xd, (C,), wd, None, eps_exact), dt)

            r = rand(rng, dt, rows, C)
            a = x.copy()
            total = x + r
            call(LIB.kernels_residual_layernorm, dt, ptr(a), ptr(out), ptr(a), ptr(r),
                 ptr(w), ptr(b), rows, C, eps, threads)  # sum aliases a
            check(f"residual+layernorm {rows}x{C}: sum (in place)", a, total, dt)
            check(f"residual+layernorm {rows}x{C}: out", out,
                  torch.nn.functional.layer_norm(torch.from_numpy(total).double(), (C,), wd, bd,
                                                 eps_exact), dt)

            eps = 1e-6
            eps_exact = float(np.float32(eps))
            call(LIB.kernels_rmsnorm, dt, ptr(out), ptr(x), ptr(w), rows, C, eps, threads)
            if dt == 0:  # HF's module computes in fp32 whatever the input type
                hf = LlamaRMSNorm(C, eps=eps_exact)
                with torch.no_grad():
                    hf.weight.copy_(wt)
                    ref = hf(xt)
            else:
                ref = xt * torch.rsqrt(xt.pow(2).mean(-1, keepdim=True) + eps_exact) * wt
            check(f"rmsnorm {rows}x{C}{' (LlamaRMSNorm)' if dt == 0 else ''}", out, ref, dt)

            r2 = r.copy()
            call(LIB.kernels_residual_rmsnorm, dt, ptr(r2), ptr(out), ptr(x), ptr(r2),
                 ptr(w), rows, C, eps, threads)  # sum aliases r
            tt = torch.from_numpy(total)
            check(f"residual+rmsnorm {rows}x{C}: sum (in place)", r2, total, dt)
            check(f"residual+rmsnorm {rows}x{C}: out", out,
                  tt * torch.rsqrt(tt.pow(2).mean(-1, keepdim=True) + eps_exact) * wt, dt)
        try:
            call(LIB.kernels_layernorm, dt, None, None, None, None, 2, 0, 1e-5, 1)
            expect("layernorm with C = 0 fails", False)
        except RuntimeError as e:
            expect(f"layernorm with C = 0 fails: '{e}'", "layernorm_forward" in str(e))


# --------------------------------------------------------------------- rowops

def test_softmax(dt, rng):
    for rows, C in ((5, 11), (3, 1000), (1, 1)):
        x = rand(rng, dt, rows, C) * 4
        x[0, 0] = 80.0 if C > 1 else x[0, 0]  # exp(80) overflows fp32: needs the max shift
        out = np.zeros_like(x)
        call(LIB.kernels_softmax, dt, ptr(out), ptr(x), rows, C, 2)
        check(f"softmax {rows}x{C}", out, torch.softmax(torch.from_numpy(x).double(), dim=-1), dt)
        call(LIB.kernels_softmax, dt, ptr(x), ptr(x), rows, C, 2)  # in place
        check(f"softmax {rows}x{C} in place", x, out, dt)


def test_rotary(dt, rng):
    from transformers.models.llama.modeling_llama import (LlamaRotaryEmbedding,
                                                          apply_rotary_pos_emb)
    for heads, hd, base, pos in ((3, 16, 10000.0, list(range(9))),
                                 (2, 64, 10000.0, [0, 1, 17, 255, 1000, 4095, 8191]),
                                 (4, 128, 500000.0, [5, 4, 3, 70000, 2, 100000])):
        rows = len(pos)
        width = heads * hd + 24  # rotate the q part of a wider (fused) row
        x = rand(rng, dt, rows, width)
        posv = np.array(pos, np.int32)
        out = x.copy()
        call(LIB.kernels_rotary, dt, ptr(out), ptr(x), ptr(posv), rows, heads, hd, width,
             base, 2)
        xq = torch.from_numpy(x[:, :heads * hd]).view(1, rows, heads, hd).transpose(1, 2)
        pid = torch.tensor([pos], dtype=torch.int64)
        if dt == 0:
            # HF's own module: its fp32 angles are what checkpoints were trained with.
            cos, sin = LlamaRotaryEmbedding(hd, base=base)(xq, pid)
            label = "LlamaRotaryEmbedding"
        else:
            # HF computes angles in fp32 even for fp64; ours are exact in fp64, so
            # the reference angles come from the formula, the rotation from HF.
            i = torch.arange(0, hd, 2, dtype=torch.float64)
            freqs = pid[0, :, None].double() * base ** (-i / hd)[None, :]
            emb = torch.cat((freqs, freqs), dim=-1)[None]
            cos, sin = emb.cos(), emb.sin()
            label = "fp64 angles"
        ref, _ = apply_rotary_pos_emb(xq, xq, cos, sin)
        ref = ref.transpose(1, 2).reshape(rows, heads * hd)
        check(f"rotary heads {heads} hd {hd} base {base:g} vs apply_rotary_pos_emb "
              f"({label})", out[:, :heads * hd], ref, dt)
        expect(f"rotary leaves the rest of the row alone [{DTYPES[dt].__name__}]",
               np.array_equal(out[:, heads * hd:], x[:, heads * hd:]))
        call(LIB.kernels_rotary, dt, ptr(x), ptr(x), ptr(posv), rows, heads, hd, width,
             base, 1)  # in place
        check(f"rotary heads {heads} hd {hd} in place", x, out, dt)
    try:
        call(LIB.kernels_rotary, dt, ptr(x), ptr(x), ptr(posv), 1, 1, 7, 7, 10000.0, 1)
        expect("rotary with odd head dim fails", False)
    except RuntimeError as e:
        expect(f"rotary with odd head dim fails: '{e}'", "got 7" in str(e))


def test_embedding(dt, rng):
    vocab, C = 50, 40
    table = rand(rng, dt, vocab, C)
    for ids in ([3, 0, 49, 3, 17], list(rng.integers(0, vocab, 1200))):
        idv = np.array(ids, np.int32)
        out = np.zeros((len(ids), C), DTYPES[dt])
        call(LIB.kernels_embedding, dt, ptr(out), ptr(idv), ptr(table), len(ids), vocab, C,
             2)
        check(f"embedding of {len(ids)} ids",
              out, torch.from_numpy(table)[torch.from_numpy(idv).long()], dt)
    idv = np.array([1, 2, 50], np.int32)
    out = np.zeros((3, C), DTYPES[dt])
    try:
        call(LIB.kernels_embedding, dt, ptr(out), ptr(idv), ptr(table), 3, vocab, C, 2)
        expect("embedding of id 50 with vocab 50 fails", False)
    except RuntimeError as e:
        expect(f"embedding of id 50 with vocab 50 fails: '{e}'",
               "50" in str(e) and "row 2" in str(e) and not out.any())


def test_copies(dt, rng):
    pos = np.zeros(6, np.int32)
    call(LIB.kernels_positions, ptr(pos), 6, 11)
    expect("positions_forward", np.array_equal(pos, torch.arange(11, 17).numpy()))
    x = rand(rng, dt, 5, 7, 3)  # take index 4 along axis 1: outer 5, inner 3
    out = np.zeros((5, 3), DTYPES[dt])
    call(LIB.kernels_copy_strided, dt, ptr(out), ptr(x), 5, 3, 21, 12, 2)
    check("copy_strided (take along axis 1)", out, torch.from_numpy(x)[:, 4, :], dt)
    big = rand(rng, dt, 300, 2, 128)  # big enough for the parallel path
    out = np.zeros((300, 128), DTYPES[dt])
    call(LIB.kernels_copy_strided, dt, ptr(out), ptr(big), 300, 128, 256, 128, 2)
    check("copy_strided (parallel)", out, torch.from_numpy(big)[:, 1, :], dt)


def test_rowops():
    for dt in (0, 1):
        rng = np.random.default_rng(7 + dt)
        test_softmax(dt, rng)
        test_rotary(dt, rng)
        test_embedding(dt, rng)
        test_copies(dt, rng)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in ("attention", "norms", "rowops"):
        sys.exit(__doc__)
    torch.set_num_threads(1)
    LIB = load(sys.argv[1])
    {"attention": test_attention, "norms": test_norms, "rowops": test_rowops}[sys.argv[2]]()
    if failures:
        print(f"{len(failures)} check(s) failed:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("all checks passed")
