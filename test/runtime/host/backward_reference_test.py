#!/usr/bin/env python3
"""Host backward kernels (norms, activations, attention, softmax, rotary,
embedding, strided copies) against torch.autograd and finite differences.

Our kernels run through backward_shim (ctypes). References:
  - torch.autograd.grad of the forward written in torch from its definition,
    on the same inputs in float64;
  - central finite differences of our own forward kernels (float64), so a
    convention mistake shared by our backward and the torch formula shows;
  - accumulation: gradients are +=, so calling twice from zero gives 2x;
  - determinism: 1 and 2 threads give the same bits.

usage: backward_reference_test.py <libbackward_shim.so> {norms|act|attention|rowops}
Tolerance: max |ours - ref| <= tol * max |ref|: 1e-5 (float), 1e-10 (double)
against autograd, 1e-6 against finite differences.
"""
import ctypes
import sys

import numpy as np
import torch
import torch.nn.functional as F

from shimlib import P, I64, F32, INT, DTYPES, failures, bind, ptr, call, check, expect  # noqa: E402

TOL = {0: 1e-5, 1: 1e-10}
FD_TOL = 1e-6
FD_STEP = 1e-5


def load(path):
    lib = ctypes.CDLL(path)
    sig = {
        "bwd_layernorm_forward_save": [INT, P, P, P, P, P, P, I64, I64, F32, INT, P, INT],
        "bwd_layernorm_backward": [INT, P, P, P, P, P, P, P, P, I64, I64, F32, INT, P, INT],
        "bwd_rmsnorm_forward_save": [INT, P, P, P, P, I64, I64, F32, INT, P, INT],
        "bwd_rmsnorm_backward": [INT, P, P, P, P, P, P, I64, I64, F32, INT, P, INT],
        "bwd_act_backward": [INT, P, P, P, I64, INT, INT, P, INT],
        "bwd_set_attention_lowp": [INT],
        "bwd_attention_forward": [INT, P, F32, P, P, P, P, P, INT, P, INT],
        "bwd_attention_backward": [INT, P, F32, P, P, P, P, P, P, P, P, INT, P, INT],
        "bwd_attention_prefix_forward": [INT, P, F32, P, I64, P, P, P, P, P, P, P, INT, P,
                                         INT],
        "bwd_attention_prefix_backward": [INT, P, F32, P, I64, P, P, P, P, P, P, P, P, P, P,
                                          P, P, INT, P, INT],
        "bwd_softmax_backward": [INT, P, P, P, I64, I64, INT, P, INT],
        "bwd_rotary_backward": [INT, P, P, P, I64, I64, I64, I64, F32, INT, P, INT],
        "bwd_embedding_forward": [INT, P, P, P, I64, I64, I64, INT, P, INT],
        "bwd_embedding_backward": [INT, P, P, P, I64, I64, I64, INT, P, INT],
        "bwd_copy_strided_backward": [INT, P, P, I64, I64, I64, I64, INT, P, INT],
        "bwd_sum_rows": [INT, P, P, I64, I64, INT, P, INT],
    }
    return bind(lib, sig)


def check_dt(name, ours, ref, dt):
    check(f"{name} [{DTYPES[dt].__name__}]", ours, ref, TOL[dt])


def rand(rng, dt, *shape):
    return rng.standard_normal(shape).astype(DTYPES[dt])


def t64(a, grad=True):
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def autograd(out, inputs, dout):
    return [g.numpy() for g in torch.autograd.grad(out, inputs, torch.as_tensor(
        np.asarray(dout, dtype=np.float64)))]


def finite_diff(loss, arrays):
    """Central differences of loss() with respect to every element of arrays
    (float64 numpy arrays, perturbed in place)."""
    grads = []
    for a in arrays:
        g = np.zeros_like(a)
        flat, gflat = a.reshape(-1), g.reshape(-1)
        for i in range(flat.size):
            keep = flat[i]
            flat[i] = keep + FD_STEP
            up = loss()
            flat[i] = keep - FD_STEP
            down = loss()
            flat[i] = keep
            gflat[i] = (up - down) / (2 * FD_STEP)
        grads.append(g)
    return grads


def twice_and_threads(name, dt, run, ref_grads):
    """run(threads) -> list of gradients accumulated into fresh zero buffers
    twice; expects 2 * ref and the same bits with 1 and 2 threads."""
    two = run(2)
    for i, (g, r) in enumerate(zip(two, ref_grads)):
        check_dt(f"{name}: called twice = 2x (output {i})", g, 2 * np.asarray(r, np.float64),
                 dt)
    one = run(1)
    expect(f"{name}: 1 and 2 threads give the same bits [{DTYPES[dt].__name__}]",
           all(np.array_equal(a, b) for a, b in zip(one, two)))


# --------------------------------------------------------------------- norms

def ln_backward(dt, dout, x, w, mean, rstd, with_bias, eps, threads=2, times=1):
    rows, C = x.shape
    dx = np.zeros_like(x)
    dw = np.zeros_like(w)
    db = np.zeros_like(w) if with_bias else None
    for _ in range(times):
        call(LIB.bwd_layernorm_backward, dt, ptr(dx), ptr(dw), ptr(db), ptr(dout), ptr(x),
             ptr(w), ptr(mean), ptr(rstd), rows, C, eps, threads)
    return [dx, dw] + ([db] if with_bias else [])


def ln_forward(dt, x, w, b, eps):
    rows, C = x.shape
    out = np.zeros_like(x)
    mean = np.zeros(rows, DTYPES[dt])
    rstd = np.zeros(rows, DTYPES[dt])
    call(LIB.bwd_layernorm_forward_save, dt, ptr(out), ptr(mean), ptr(rstd), ptr(x), ptr(w),
         ptr(b), rows, C, eps, 2)
    return out, mean, rstd


def test_layernorm(dt, rng):
    eps = 1e-5
    for rows, C, with_bias in ((7, 70, True), (5, 33, False), (64, 200, True)):
        x = rand(rng, dt, rows, C) * 2 + 0.5
        x = x.astype(DTYPES[dt])
        w = rand(rng, dt, C)
        b = rand(rng, dt, C) if with_bias else None
        dout = rand(rng, dt, rows, C)
        tag = f"layernorm {rows}x{C}{' +bias' if with_bias else ''}"

        out, mean, rstd = ln_forward(dt, x, w, b, eps)
        xt, wt = t64(x), t64(w)
        bt = t64(b) if with_bias else None
        ref_out = F.layer_norm(xt, (C,), wt, bt, eps)
        check_dt(f"{tag}: forward_save out", out, ref_out, dt)
        x64 = torch.as_tensor(x.astype(np.float64))
        check_dt(f"{tag}: forward_save mean", mean, x64.mean(-1), dt)
        check_dt(f"{tag}: forward_save rstd", rstd,
                 1 / torch.sqrt(x64.var(-1, unbiased=False) + eps), dt)

        ref = autograd(ref_out, [xt, wt] + ([bt] if with_bias else []), dout)
        for stats in ("saved", "recomputed"):
            mm, rr = (mean, rstd) if stats == "saved" else (None, None)
            ours = ln_backward(dt, dout, x, w, mm, rr, with_bias, eps)
            for name, g, r in zip(("dx", "dw", "db"), ours, ref):
                check_dt(f"{tag}: {name} ({stats} stats) vs autograd", g, r, dt)
        twice_and_threads(tag, dt, lambda th: ln_backward(dt, dout, x, w, mean, rstd,
                                                          with_bias, eps, th, times=2), ref)

    if dt == 1:  # finite differences of our forward
        rows, C = 4, 16
        x, w, b = rand(rng, 1, rows, C), rand(rng, 1, C), rand(rng, 1, C)
        dout = rand(rng, 1, rows, C)
        loss = lambda: float((ln_forward(1, x, w, b, eps)[0] * dout).sum())
        fd = finite_diff(loss, [x, w, b])
        ours = ln_backward(1, dout, x, w, None, None, True, eps)
        for name, g, r in zip(("dx", "dw", "db"), ours, fd):
            check(f"layernorm {rows}x{C}: {name} vs finite differences", g, r, FD_TOL)

    x = rand(rng, dt, 2, 8)
    w = rand(rng, dt, 8)
    mean = np.zeros(2, DTYPES[dt])
    try:
        ln_backward(dt, x, x, w, mean, None, False, eps)
        expect("layernorm_backward with mean but no rstd fails", False)
    except RuntimeError as e:
        expect(f"layernorm_backward with mean but no rstd fails: '{e}'", "rstd" in str(e))


def rms_forward(dt, x, w, eps):
    rows, C = x.shape
    out = np.zeros_like(x)
    rstd = np.zeros(rows, DTYPES[dt])
    call(LIB.bwd_rmsnorm_forward_save, dt, ptr(out), ptr(rstd), ptr(x), ptr(w), rows, C, eps,
         2)
    return out, rstd


def rms_backward(dt, dout, x, w, rstd, eps, threads=2, times=1):
    rows, C = x.shape
    dx, dw = np.zeros_like(x), np.zeros_like(w)
    for _ in range(times):
        call(LIB.bwd_rmsnorm_backward, dt, ptr(dx), ptr(dw), ptr(dout), ptr(x), ptr(w),
             ptr(rstd), rows, C, eps, threads)
    return [dx, dw]


def test_rmsnorm(dt, rng):
    eps = 1e-6
    for rows, C in ((7, 70), (48, 130)):
        x, w, dout = rand(rng, dt, rows, C), rand(rng, dt, C), rand(rng, dt, rows, C)
        tag = f"rmsnorm {rows}x{C}"
        out, rstd = rms_forward(dt, x, w, eps)
        xt, wt = t64(x), t64(w)
        ref_out = xt * torch.rsqrt(xt.pow(2).mean(-1, keepdim=True) + eps) * wt
        check_dt(f"{tag}: forward_save out", out, ref_out, dt)
        ref = autograd(ref_out, [xt, wt], dout)
        for stats in ("saved", "recomputed"):
            ours = rms_backward(dt, dout, x, w, rstd if stats == "saved" else None, eps)
            for name, g, r in zip(("dx", "dw"), ours, ref):
                check_dt(f"{tag}: {name} ({stats} stats) vs autograd", g, r, dt)
        twice_and_threads(tag, dt, lambda th: rms_backward(dt, dout, x, w, rstd, eps, th, 2),
                          ref)
    if dt == 1:
        x, w, dout = rand(rng, 1, 3, 12), rand(rng, 1, 12), rand(rng, 1, 3, 12)
        fd = finite_diff(lambda: float((rms_forward(1, x, w, eps)[0] * dout).sum()), [x, w])
        for name, g, r in zip(("dx", "dw"), rms_backward(1, dout, x, w, None, eps), fd):
            check(f"rmsnorm 3x12: {name} vs finite differences", g, r, FD_TOL)


def test_norms():
    for dt in (0, 1):
        rng = np.random.default_rng(11 + dt)
        test_layernorm(dt, rng)
        test_rmsnorm(dt, rng)


# --------------------------------------------------------------- activations

ACTS = {  # Epilogue value: (name, torch function)
    0: ("none", lambda x: x),
    1: ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh")),
    2: ("gelu_erf", lambda x: F.gelu(x)),
    3: ("relu", F.relu),
    4: ("silu", F.silu),
    5: ("tanh", torch.tanh),
}


def test_act():
    for dt in (0, 1):
        rng = np.random.default_rng(21 + dt)
        for n in (1000, 40000):  # serial and parallel paths
            x = (rand(rng, dt, n) * 3).astype(DTYPES[dt])
            x[:5] = [0.0, -0.0, 12.0, -12.0, 1e-3]
            dout = rand(rng, dt, n)
            for act, (name, fn) in ACTS.items():
                xt = t64(x)
                ref = autograd(fn(xt), [xt], dout)

                def run(threads, times=1):
                    dx = np.zeros_like(x)
                    for _ in range(times):
                        call(LIB.bwd_act_backward, dt, ptr(dx), ptr(x), ptr(dout), n, act,
                             threads)
                    return [dx]
                check_dt(f"act_backward {name}, n {n} vs autograd", run(2)[0], ref[0], dt)
                if n == 40000:
                    twice_and_threads(f"act_backward {name}", dt, lambda th: run(th, 2), ref)
    try:
        call(LIB.bwd_act_backward, 0, None, None, None, 0, 17, 1)
        expect("act_backward with activation 17 fails", False)
    except RuntimeError as e:
        expect(f"act_backward with activation 17 fails: '{e}'", "17" in str(e))


# ----------------------------------------------------------------- attention

def ref_attention(q, k, v, heads, kv_heads, hd, causal, scale, mask):
    """softmax(q k^T * scale + mask) v (torch, differentiable); rows with no
    visible key give zeros. q [B, T, heads*hd]; k/v [B, T, kv_heads*hd]."""
    B, T = q.shape[0], q.shape[1]
    group = heads // kv_heads
    qh = q.reshape(B, T, heads, hd).transpose(1, 2)
    kh = k.reshape(B, T, kv_heads, hd).transpose(1, 2).repeat_interleave(group, dim=1)
    vh = v.reshape(B, T, kv_heads, hd).transpose(1, 2).repeat_interleave(group, dim=1)
    s = qh @ kh.transpose(-1, -2) * scale
    allowed = torch.ones(B, 1, T, T, dtype=torch.bool)
    if causal:
        allowed = allowed & (torch.arange(T)[None, :] <= torch.arange(T)[:, None])
    if mask is not None:
        allowed = allowed & (torch.as_tensor(mask[:, :T]) != 0)[:, None, None, :]
    any_key = allowed.any(-1, keepdim=True)
    s = torch.where(any_key, s.masked_fill(~allowed, float("-inf")), torch.zeros_like(s))
    p = torch.softmax(s, dim=-1) * any_key
    return (p @ vh).transpose(1, 2).reshape(B, T, heads * hd)


class Attn:
    """Training-shape attention on one fused [B, cap, (heads + 2 kv_heads) * hd]
    qkv buffer (fused=True) or separate [B, cap, width] q/k/v buffers; the
    output/dout buffer is [B, cap, heads*hd + 3] (padded rows and columns)."""

    def __init__(self, dt, rng, B, T, heads, kv_heads, hd, causal, mask, fused, cap_extra=3):
        self.dt, self.B, self.T, self.cap = dt, B, T, T + cap_extra
        self.heads, self.kv_heads, self.hd, self.causal = heads, kv_heads, hd, causal
        self.qw, self.kw = heads * hd, kv_heads * hd
        self.scale = float(np.float32(1.0 / np.sqrt(hd)))
        self.mask = None if mask is None else np.ascontiguousarray(
            np.pad(mask, ((0, 0), (0, self.cap - T)), constant_values=1), dtype=np.int32)
        self.fused = fused
        if fused:
            self.qkv = rand(rng, dt, B, self.cap, self.qw + 2 * self.kw)
        else:
            self.q = rand(rng, dt, B, self.cap, self.qw)
            self.k = rand(rng, dt, B, self.cap, self.kw)
            self.v = rand(rng, dt, B, self.cap, self.kw)
        self.ow = self.qw + 3
        self.dout = rand(rng, dt, B, self.cap, self.ow)

    def views(self):
        """(q, k, v) as [B, T, width] numpy views."""
        if self.fused:
            a = self.qkv[:, :self.T]
            return (a[..., :self.qw], a[..., self.qw:self.qw + self.kw],
                    a[..., self.qw + self.kw:])
        return self.q[:, :self.T], self.k[:, :self.T], self.v[:, :self.T]

    def iargs(self):
        if self.fused:
            w = self.qkv.shape[2]
            qs = ks = (w, self.cap * w)
        else:
            qs = (self.qw, self.cap * self.qw)
            ks = (self.kw, self.cap * self.kw)
        return (I64 * 14)(self.B, self.T, self.heads, self.kv_heads, self.hd, *qs, *ks,
                          self.ow, self.cap * self.ow, self.cap, 0, int(self.causal))

    def buffers(self, src):
        """(q, k, v) pointers into src (qkv) or the separate arrays."""
        if self.fused:
            return ptr(src), ptr(src, self.qw), ptr(src, self.qw + self.kw)
        return src

    def backward(self, threads=2, times=1, start=0):
        if self.fused:
            d = np.zeros_like(self.qkv)
            grads = self.buffers(d)
            ins = self.buffers(self.qkv)
        else:
            d = [np.zeros_like(self.q), np.zeros_like(self.k), np.zeros_like(self.v)]
            grads = [ptr(a) for a in d]
            ins = [ptr(self.q), ptr(self.k), ptr(self.v)]
        ia = self.iargs()
        ia[12] = start
        for _ in range(times):
            call(LIB.bwd_attention_backward, self.dt, ia, self.scale, ptr(self.mask), *grads,
                 ptr(self.dout), *ins, threads)
        if self.fused:
            return [d, ]
        return d

    def grads_of(self, d):
        """[dq, dk, dv] as [B, T, width] arrays from backward()'s result."""
        if self.fused:
            a = d[0][:, :self.T]
            return [a[..., :self.qw], a[..., self.qw:self.qw + self.kw],
                    a[..., self.qw + self.kw:]]
        return [g[:, :self.T] for g in d]

    def forward(self):
        out = np.zeros((self.B, self.cap, self.ow), DTYPES[self.dt])
        ins = self.buffers(self.qkv) if self.fused else [ptr(self.q), ptr(self.k),
                                                         ptr(self.v)]
        call(LIB.bwd_attention_forward, self.dt, self.iargs(), self.scale, ptr(self.mask),
             ptr(out), *ins, 2)
        return out[:, :self.T, :self.qw]

    def reference(self):
        q, k, v = (t64(a) for a in self.views())
        out = ref_attention(q, k, v, self.heads, self.kv_heads, self.hd, self.causal,
                            self.scale, self.mask)
        return autograd(out, [q, k, v], self.dout[:, :self.T, :self.qw])


def attention_case(dt, rng, name, B, T, heads, kv_heads, hd, causal, mask=None,
                   fused=False, fd=False):
    a = Attn(dt, rng, B, T, heads, kv_heads, hd, causal, mask, fused)
    ref = a.reference()
    d = a.backward()
    ours = a.grads_of(d)
    for n, g, r in zip(("dq", "dk", "dv"), ours, ref):
        check_dt(f"attention {name}: {n} vs autograd", g, r, dt)
    # nothing written outside [B, T, width] (padding rows of the buffers)
    expect(f"attention {name}: no gradient outside the rows [{DTYPES[dt].__name__}]",
           all(not g[:, T:].any() for g in d))
    twice_and_threads(f"attention {name}", dt,
                      lambda th: a.grads_of(a.backward(th, 2)), ref)
    if fd:
        dout = a.dout[:, :T, :a.qw].astype(np.float64)
        arrays = [a.qkv] if fused else [a.q, a.k, a.v]
        fdg = finite_diff(lambda: float((a.forward() * dout).sum()), arrays)
        fdg = a.grads_of(fdg) if fused else [g[:, :T] for g in fdg]
        for n, g, r in zip(("dq", "dk", "dv"), ours, fdg):
            check(f"attention {name}: {n} vs finite differences", g, r, FD_TOL)
    return a


def test_attention():
    for dt in (0, 1):
        rng = np.random.default_rng(31 + dt)
        attention_case(dt, rng, "causal MHA", 2, 9, 4, 4, 16, True)
        attention_case(dt, rng, "bidirectional MHA", 2, 9, 4, 4, 16, False)
        attention_case(dt, rng, "causal GQA 8/2 fused qkv", 2, 11, 8, 2, 8, True, fused=True)
        attention_case(dt, rng, "causal MQA 4/1, 70 rows", 1, 70, 4, 1, 32, True)
        mask = np.ones((2, 10), np.int32)
        mask[0, :3] = 0   # left padding: rows 0-2 of sequence 0 see no key (causal)
        mask[1, 7:] = 0   # right padding
        attention_case(dt, rng, "causal GQA 4/2 key-padding mask", 2, 10, 4, 2, 8, True, mask)
        attention_case(dt, rng, "bidirectional key-padding mask fused", 2, 10, 4, 2, 8, False,
                       mask, fused=True)
        if dt == 1:
            m = np.ones((2, 5), np.int32)
            m[0, 0] = 0
            m[1, 3] = 0
            attention_case(1, rng, "FD causal GQA 4/2 masked", 2, 5, 4, 2, 4, True, m, fd=True)
            attention_case(1, rng, "FD bidirectional GQA 4/2 fused", 1, 5, 4, 2, 4, False,
                           fd=True, fused=True)
            attention_case(1, rng, "FD causal MHA", 1, 6, 2, 2, 4, True, fd=True)
        a = Attn(dt, rng, 1, 4, 2, 2, 4, True, None, False)
        try:
            a.backward(start=-1)
            expect("attention_backward with start -1 fails", False)
        except RuntimeError as e:
            expect(f"attention_backward with start -1 fails: '{e}'", "start" in str(e))
        for on in (True, False):
            prefix_case(dt, rng, on, mask)
    test_attention_lowp()


def round_to(t, low):
    """t rounded to bf16 / fp16 through fp32 (as the kernels do), float64."""
    return t.to(torch.float32).to(low).to(torch.float64)


def rounded_bmm(low):
    """a @ b with a and b rounded to `low`; the backward rounds the incoming
    gradient and the other input (bmb-autocast's attention, bmrt/kernels.h)."""
    class RoundedBmm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return round_to(a, low) @ round_to(b, low)

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            g = round_to(g, low)
            return g @ round_to(b, low).transpose(-1, -2), round_to(a, low).transpose(-1, -2) @ g
    return RoundedBmm.apply


def ref_attention_lowp(q, k, v, heads, kv_heads, hd, causal, scale, mask, low):
    """ref_attention with its two matmuls on rounded inputs (q, k; P, v) and
    the scale and softmax in float64: torch.autocast's attention, minus the
    rounding of the matmuls' outputs."""
    B, T = q.shape[0], q.shape[1]
    group = heads // kv_heads
    mm = rounded_bmm(low)
    qh = q.reshape(B, T, heads, hd).transpose(1, 2)
    kh = k.reshape(B, T, kv_heads, hd).transpose(1, 2).repeat_interleave(group, dim=1)
    vh = v.reshape(B, T, kv_heads, hd).transpose(1, 2).repeat_interleave(group, dim=1)
    s = mm(qh, kh.transpose(-1, -2)) * scale
    allowed = torch.ones(B, 1, T, T, dtype=torch.bool)
    if causal:
        allowed = allowed & (torch.arange(T)[None, :] <= torch.arange(T)[:, None])
    if mask is not None:
        allowed = allowed & (torch.as_tensor(mask[:, :T]) != 0)[:, None, None, :]
    any_key = allowed.any(-1, keepdim=True)
    s = torch.where(any_key, s.masked_fill(~allowed, float("-inf")), torch.zeros_like(s))
    p = torch.softmax(s, dim=-1) * any_key
    return mm(p, vh).transpose(1, 2).reshape(B, T, heads * hd)


# Elements whose fp32 value sits within fp32's error of a bf16 / fp16
# rounding boundary round the other way than float64's (one ulp of 2^-8 /
# 2^-11 relative); 1e-4 of the largest value allows a few such flips, and
# is below the rounding itself: the results must be at least LOWP_FAR from
# fp32's (measured: bf16 1.8e-3, fp16 3.6e-4 at least).
LOWP_TOL = 1e-4
LOWP_FAR = {torch.bfloat16: 1e-3, torch.float16: 2e-4}


def test_attention_lowp():
    """attention_forward / attention_backward with AttentionArgs::lowp
    (float only) against torch float64 with the same roundings; and far from
    the fp32 result (the rounding happened)."""
    rng = np.random.default_rng(57)
    mask = np.ones((2, 10), np.int32)
    mask[0, :3] = 0
    mask[1, 7:] = 0
    cases = [("causal MHA", 2, 9, 4, 4, 16, True, None, False),
             ("bidirectional GQA 4/2 masked fused", 2, 10, 4, 2, 8, False, mask, True),
             ("causal MHA 5 rows (dot-product scores)", 1, 5, 2, 2, 16, True, None, False),
             ("causal MQA 4/1, 70 rows", 1, 70, 4, 1, 32, True, None, False)]
    for p, low in ((1, torch.bfloat16), (2, torch.float16)):
        for name, B, T, heads, kv_heads, hd, causal, m, fused in cases:
            name = f"lowp {low} attention {name}"
            a = Attn(0, rng, B, T, heads, kv_heads, hd, causal, m, fused)
            fp32_out = a.forward()
            fp32_grads = a.grads_of(a.backward())
            q, k, v = (t64(x) for x in a.views())
            out = ref_attention_lowp(q, k, v, heads, kv_heads, hd, causal, a.scale, a.mask,
                                     low)
            ref = autograd(out, [q, k, v], a.dout[:, :T, :a.qw])
            LIB.bwd_set_attention_lowp(p)
            try:
                ours_out = a.forward()
                ours = a.grads_of(a.backward())
                again = a.grads_of(a.backward(threads=1))
            finally:
                LIB.bwd_set_attention_lowp(0)
            check(f"{name}: forward vs torch", ours_out, out, LOWP_TOL)
            for n, g, r, g32 in zip(("dq", "dk", "dv"), ours, ref, fp32_grads):
                check(f"{name}: {n} vs autograd", g, r, LOWP_TOL)
                far = float(np.abs(g - g32).max() / np.abs(r).max())
                expect(f"{name}: {n} is {far:.1e} from fp32's (rounded, > {LOWP_FAR[low]:.0e})",
                       far > LOWP_FAR[low])
            expect(f"{name}: the same bits on 1 and 2 threads",
                   all(np.array_equal(x, y) for x, y in zip(ours, again)))
            far = float(np.abs(ours_out - fp32_out).max() / np.abs(out.detach()).max())
            expect(f"{name}: forward is {far:.1e} from fp32's (rounded, > {LOWP_FAR[low]:.0e})",
                   far > LOWP_FAR[low])
    # The mark is for float kernels.
    LIB.bwd_set_attention_lowp(1)
    try:
        Attn(1, rng, 1, 4, 2, 2, 4, True, None, False).forward()
        expect("lowp attention_forward on double fails", False)
    except RuntimeError as e:
        expect(f"lowp attention_forward on double fails: '{e}'", "need float" in str(e))
    finally:
        LIB.bwd_set_attention_lowp(0)


def prefix_case(dt, rng, on, mask):
    """attention_prefix_forward/_backward (prefix tuning: keys [pk; k] per
    sequence, the prefix seen by every query and never masked; gated off:
    masked out) against torch autograd over the concatenated keys; the
    backward runs attention_backward with start = P."""
    B, T, heads, kv_heads, hd, P = 2, 10, 4, 2, 8, 3
    qw, kw = heads * hd, kv_heads * hd
    scale = float(np.float32(1.0 / np.sqrt(hd)))
    q, k, v = rand(rng, dt, B, T, qw), rand(rng, dt, B, T, kw), rand(rng, dt, B, T, kw)
    pk, pv = rand(rng, dt, P, kw), rand(rng, dt, P, kw)
    dout = rand(rng, dt, B, T, qw)
    gate = np.array([1.0 if on else 0.0], DTYPES[dt])
    m = np.ascontiguousarray(mask, dtype=np.int32)
    ia = (I64 * 14)(B, T, heads, kv_heads, hd, qw, T * qw, kw, T * kw, qw, T * qw, T, 0, 1)
    out = np.zeros_like(dout)
    call(LIB.bwd_attention_prefix_forward, dt, ia, scale, ptr(m), P, ptr(pk), ptr(pv),
         ptr(gate), ptr(out), ptr(q), ptr(k), ptr(v), 2)
    grads = [np.zeros_like(a) for a in (pk, pv, q, k, v)]
    call(LIB.bwd_attention_prefix_backward, dt, ia, scale, ptr(m), P, ptr(pk), ptr(pv),
         ptr(gate), *(ptr(g) for g in grads), ptr(dout), ptr(q), ptr(k), ptr(v), 2)
    tq, tk, tv, tpk, tpv = (t64(a) for a in (q, k, v, pk, pv))
    group = heads // kv_heads
    K = torch.cat([tpk.expand(B, P, kw), tk], 1)
    V = torch.cat([tpv.expand(B, P, kw), tv], 1)
    qh = tq.reshape(B, T, heads, hd).transpose(1, 2)
    kh = K.reshape(B, P + T, kv_heads, hd).transpose(1, 2).repeat_interleave(group, dim=1)
    vh = V.reshape(B, P + T, kv_heads, hd).transpose(1, 2).repeat_interleave(group, dim=1)
    s = qh @ kh.transpose(-1, -2) * scale
    tok = (torch.arange(T)[None, :] <= torch.arange(T)[:, None])[None, None] & \
        (torch.as_tensor(m) != 0)[:, None, None, :]
    allowed = torch.cat([torch.full((B, 1, T, P), on), tok], -1)
    any_key = allowed.any(-1, keepdim=True)
    s = torch.where(any_key, s.masked_fill(~allowed, float("-inf")), torch.zeros_like(s))
    ref_out = ((torch.softmax(s, -1) * any_key) @ vh).transpose(1, 2).reshape(B, T, qw)
    name = f"attention prefix ({'on' if on else 'gated off'}, masked)"
    check_dt(f"{name}: forward vs torch", out, ref_out.detach().numpy(), dt)
    ref = autograd(ref_out, [tpk, tpv, tq, tk, tv], dout)
    for n, g, r in zip(("dpk", "dpv", "dq", "dk", "dv"), grads, ref):
        check_dt(f"{name}: {n} vs autograd", g, r, dt)


# -------------------------------------------------------------------- rowops

def test_softmax(dt, rng):
    for rows, C in ((6, 33), (40, 257)):
        x = (rand(rng, dt, rows, C) * 3).astype(DTYPES[dt])
        dout = rand(rng, dt, rows, C)
        xt = t64(x)
        out_ref = torch.softmax(xt, -1)
        out = out_ref.detach().numpy().astype(DTYPES[dt])
        ref = autograd(out_ref, [xt], dout)

        def run(threads, times=1):
            dx = np.zeros_like(x)
            for _ in range(times):
                call(LIB.bwd_softmax_backward, dt, ptr(dx), ptr(out), ptr(dout), rows, C,
                     threads)
            return [dx]
        check_dt(f"softmax_backward {rows}x{C} vs autograd", run(2)[0], ref[0], dt)
        twice_and_threads(f"softmax_backward {rows}x{C}", dt, lambda th: run(th, 2), ref)


def test_rotary(dt, rng):
    rows, heads, hd, base = 7, 3, 16, 10000.0
    stride = heads * hd + 5
    pos = np.array(rng.integers(0, 3000, rows), np.int32)
    half = hd // 2
    if dt == 0:  # HF's fp32 angles, as the forward computes them for float
        inv = 1.0 / (base ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))
        ang = (torch.as_tensor(pos).float()[:, None] * inv[None, :]).double()
    else:
        inv = torch.tensor([base ** (-2.0 * i / hd) for i in range(half)], dtype=torch.float64)
        ang = torch.as_tensor(pos).double()[:, None] * inv[None, :]
    cos, sin = torch.cos(ang)[:, None, :], torch.sin(ang)[:, None, :]
    x = rand(rng, dt, rows, heads * hd)
    dout_full = np.full((rows, stride), np.nan, DTYPES[dt])
    dout_full[:, :heads * hd] = rand(rng, dt, rows, heads * hd)
    xt = t64(x)
    xh = xt.view(rows, heads, hd)
    x1, x2 = xh[..., :half], xh[..., half:]
    out = torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1).reshape(rows, -1)
    ref = autograd(out, [xt], dout_full[:, :heads * hd])

    def run(threads, times=1):
        dx = np.zeros((rows, stride), DTYPES[dt])
        dx[:, heads * hd:] = np.nan
        for _ in range(times):
            call(LIB.bwd_rotary_backward, dt, ptr(dx), ptr(dout_full), ptr(pos), rows, heads,
                 hd, stride, base, threads)
        return [dx]
    dx = run(2)[0]
    check_dt("rotary_backward vs autograd", dx[:, :heads * hd], ref[0], dt)
    expect(f"rotary_backward: row padding untouched [{DTYPES[dt].__name__}]",
           np.isnan(dx[:, heads * hd:]).all())
    twice_and_threads("rotary_backward", dt,
                      lambda th: [run(th, 2)[0][:, :heads * hd]], ref)


def emb_backward(dt, ids, dout, vocab, threads=2, times=1):
    C = dout.shape[1]
    dtable = np.zeros((vocab, C), DTYPES[dt])
    for _ in range(times):
        call(LIB.bwd_embedding_backward, dt, ptr(dtable), ptr(ids), ptr(dout), len(ids), vocab,
             C, threads)
    return [dtable]


def test_embedding(dt, rng):
    for vocab, C, rows in ((50, 40, 12), (50, 150, 300)):  # serial; column-parallel
        ids = np.array(rng.integers(0, vocab, rows), np.int32)
        ids[:4] = [3, 3, 0, vocab - 1]  # repeats and both ends
        table = rand(rng, dt, vocab, C)
        dout = rand(rng, dt, rows, C)
        tt = t64(table)
        ref = autograd(F.embedding(torch.as_tensor(ids).long(), tt), [tt], dout)
        tag = f"embedding_backward {rows} ids, C {C}"
        check_dt(f"{tag} vs autograd", emb_backward(dt, ids, dout, vocab)[0], ref[0], dt)
        twice_and_threads(tag, dt, lambda th: emb_backward(dt, ids, dout, vocab, th, 2), ref)
    if dt == 1:
        vocab, C = 6, 5
        ids = np.array([1, 4, 1, 0, 5, 1, 4, 2], np.int32)
        table, dout = rand(rng, 1, vocab, C), rand(rng, 1, len(ids), C)

        def loss():
            out = np.zeros((len(ids), C))
            call(LIB.bwd_embedding_forward, 1, ptr(out), ptr(ids), ptr(table), len(ids),
                 vocab, C, 1)
            return float((out * dout).sum())
        check("embedding_backward vs finite differences", emb_backward(1, ids, dout, vocab)[0],
              finite_diff(loss, [table])[0], FD_TOL)
    ids = np.array([1, 2, 50], np.int32)
    dout = rand(rng, dt, 3, 4)
    dtable = np.zeros((50, 4), DTYPES[dt])
    try:
        call(LIB.bwd_embedding_backward, dt, ptr(dtable), ptr(ids), ptr(dout), 3, 50, 4, 2)
        expect("embedding_backward of id 50 with vocab 50 fails", False)
    except RuntimeError as e:
        expect(f"embedding_backward of id 50 with vocab 50 fails: '{e}'",
               "50" in str(e) and "row 2" in str(e) and not dtable.any())


def test_copies(dt, rng):
    # take index 4 along axis 1 of [5, 7, 3]; then a big one (parallel path).
    for shape, idx in (((5, 7, 3), 4), ((300, 2, 128), 1)):
        x = rand(rng, dt, *shape)
        outer, inner = shape[0], shape[2]
        dout = rand(rng, dt, outer, inner)
        xt = t64(x)
        ref = autograd(xt[:, idx, :], [xt], dout)

        def run(threads, times=1):
            dx = np.zeros_like(x)
            for _ in range(times):
                call(LIB.bwd_copy_strided_backward, dt, ptr(dx), ptr(dout), outer, inner,
                     shape[1] * inner, idx * inner, threads)
            return [dx]
        tag = f"copy_strided_backward {shape} take {idx}"
        check_dt(f"{tag} vs autograd", run(2)[0], ref[0], dt)
        twice_and_threads(tag, dt, lambda th: run(th, 2), ref)
    # overlapping slices (stride 3 < inner 6): every add lands
    dout = rand(rng, dt, 4, 6)
    dx = np.zeros(3 * 3 + 6 + 1, DTYPES[dt])
    call(LIB.bwd_copy_strided_backward, dt, ptr(dx), ptr(dout), 4, 6, 3, 1, 2)
    ref = np.zeros(dx.shape)
    for o in range(4):
        ref[o * 3 + 1:o * 3 + 7] += dout[o]
    check_dt("copy_strided_backward overlapping slices", dx, ref, dt)


def test_sum_rows(dt, rng):
    # C = 0 is a no-op, not an error
    call(LIB.bwd_sum_rows, dt, None, None, 7, 0, 2)
    # small (serial); wide and tall (column blocks over threads)
    for rows, C in ((5, 3), (300, 200)):
        x = rand(rng, dt, rows, C)
        ref = [np.asarray(x, np.float64).sum(axis=0)]

        def run(threads, times=1):
            out = np.zeros(C, DTYPES[dt])
            for _ in range(times):
                call(LIB.bwd_sum_rows, dt, ptr(out), ptr(x), rows, C, threads)
            return [out]
        tag = f"sum_rows [{rows}, {C}]"
        check_dt(f"{tag} vs numpy", run(2)[0], ref[0], dt)
        twice_and_threads(tag, dt, lambda th: run(th, 2), ref)
    # the bias gradient of a linear layer: sum_rows(dy) = autograd of b
    x, w, b = rand(rng, dt, 9, 4), rand(rng, dt, 6, 4), rand(rng, dt, 6)
    dy = rand(rng, dt, 9, 6)
    bt = t64(b)
    ref = autograd(F.linear(t64(x, False), t64(w, False), bt), [bt], dy)
    db = np.zeros(6, DTYPES[dt])
    call(LIB.bwd_sum_rows, dt, ptr(db), ptr(dy), 9, 6, 2)
    check_dt("sum_rows = linear bias gradient vs autograd", db, ref[0], dt)


def test_rowops():
    for dt in (0, 1):
        rng = np.random.default_rng(41 + dt)
        test_softmax(dt, rng)
        test_rotary(dt, rng)
        test_embedding(dt, rng)
        test_copies(dt, rng)
        test_sum_rows(dt, rng)


if __name__ == "__main__":
    parts = {"norms": test_norms, "act": test_act, "attention": test_attention,
             "rowops": test_rowops}
    if len(sys.argv) != 3 or sys.argv[2] not in parts:
        sys.exit(__doc__)
    torch.set_num_threads(1)
    LIB = load(sys.argv[1])
    parts[sys.argv[2]]()
    if failures:
        print(f"{len(failures)} check(s) failed:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("all checks passed")
