#!/usr/bin/env python3
"""Training kernels (bmrt/training.h) against torch and transformers.

Our kernels run through training_shim (ctypes); the references are torch's
own implementations, never a transcription of ours:
  classifier  fused_classifier_forward_backward, cross_entropy, mse vs
              F.cross_entropy / F.mse_loss + autograd (ignore_index rows,
              in-place dlogits, loss-only, error paths)
  optimizers  adamw_update vs torch.optim.AdamW (10 steps on fixed random
              gradients, with and without weight decay), sgd_update vs
              torch.optim.SGD (momentum, 5 steps)
  clipping    grad_norm_squared + clip_coefficient + scale_inplace vs
              torch.nn.utils.clip_grad_norm_
  schedules   lr_constant / lr_linear / lr_cosine vs transformers'
              get_*_schedule_with_warmup at every step
  offload     the offloaded step (bmrt/offload.h: gradients copied out in
              chunks, clipped, AdamW on the host's master copy, copied back)
              vs torch.optim.AdamW with param groups over a rank's
              partition, and bit for bit vs the non-offloaded adamw_update

usage: training_reference_test.py <libtraining_shim.so> {classifier|optimizers|clipping|schedules|offload}
Tolerance: max |ours - ref| <= tol * max |ref|, tol = 1e-6 (float), 1e-12 (double).
"""
import ctypes
import sys

import numpy as np
import torch
import torch.nn.functional as F

from shimlib import P, I64, F64, INT, DTYPES, failures, bind, ptr, call, check, expect  # noqa: E402

TORCH = {0: torch.float32, 1: torch.float64}
TOL = {0: 1e-6, 1: 1e-12}


def load(path):
    lib = ctypes.CDLL(path)
    sig = {
        "training_fused_classifier": [INT, P, P, P, P, I64, I64, I64, F64, INT, P, INT],
        "training_cross_entropy": [INT, P, P, P, P, I64, I64, I64, F64, INT, P, INT],
        "training_mse": [INT, P, P, P, P, I64, F64, INT, P, INT],
        "training_adamw": [INT, P, P, P, P, I64, F64, F64, F64, F64, F64, I64, INT, P, INT],
        "training_sgd": [INT, P, P, P, I64, F64, F64, F64, I64, INT, P, INT],
        "training_grad_norm_squared": [INT, P, I64, P, INT, P, INT],
        "training_scale_inplace": [INT, P, I64, F64, INT, P, INT],
        "training_lr_multiplier": [INT, I64, I64, I64, F64, F64, P, P, INT],
        "training_offload_adamw": [INT, P, P, P, I64, I64, I64, P, P, P, INT, I64, F64, F64,
                                   F64, F64, I64, F64, INT, INT, P, INT],
    }
    for name, args in sig.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = INT
    lib.training_count_targets.argtypes = [P, I64, I64]
    lib.training_count_targets.restype = I64
    lib.training_clip_coefficient.argtypes = [F64, F64]
    lib.training_clip_coefficient.restype = F64
    return lib


def expect_error(name, fragment, fn, *args):
    try:
        call(fn, *args)
    except RuntimeError as e:
        expect(f"{name} fails ({e})", fragment in str(e))
        return
    expect(f"{name} fails", False)


# --- classifier ------------------------------------------------------------

def torch_ce(logits, targets, ignore, dt, reduction):
    """Per-row losses, the reduced loss and its gradient, from torch."""
    x = torch.from_numpy(logits).to(TORCH[dt]).requires_grad_(True)
    t = torch.from_numpy(targets).long()
    per_row = F.cross_entropy(x.detach(), t, ignore_index=ignore, reduction="none")
    loss = F.cross_entropy(x, t, ignore_index=ignore, reduction=reduction)
    loss.backward()
    return per_row, loss.detach(), x.grad


def classifier_case(dt, rng, name, rows, V, ignore, n_ignored, spread, threads=2,
                    inplace=False, reduction="mean", fn="training_fused_classifier"):
    tag = f"{name} [{DTYPES[dt].__name__}, rows {rows}, V {V}, threads {threads}" \
          f"{', in place' if inplace else ''}, {reduction}]"
    logits = (rng.standard_normal((rows, V)) * spread).astype(DTYPES[dt])
    targets = rng.integers(0, V, rows).astype(np.int32)
    targets[rng.choice(rows, n_ignored, replace=False)] = ignore
    count = LIB.training_count_targets(ptr(targets), rows, ignore)
    expect(f"{tag} count_targets", count == rows - n_ignored if ignore < 0 or ignore >= V
           else count == int((targets != ignore).sum()))
    scale = 1.0 / count if reduction == "mean" else 1.0
    per_row, loss, grad = torch_ce(logits, targets, ignore, dt, reduction)
    losses = np.full(rows, 7.0, DTYPES[dt])
    src = logits.copy()
    d = src if inplace else np.full((rows, V), np.nan, DTYPES[dt])
    call(getattr(LIB, fn), dt, ptr(losses), ptr(d), ptr(src), ptr(targets), rows, V,
         ignore, scale, threads)
    tol = TOL[dt]
    # torch's float32 softmax sums a 50k-vocabulary row in float: its dlogits
    # are ~3e-6 off the float64 answer, ours ~4e-8 (checked below at 1e-6),
    # so against torch's float32 itself a wide row gets 1e-5.
    torch_tol = 1e-5 if dt == 0 and V > 4096 else tol
    check(f"{tag} losses", losses, per_row, torch_tol)
    check(f"{tag} loss", losses.astype(np.float64).sum() * scale, loss, torch_tol)
    check(f"{tag} dlogits", d, grad, torch_tol)
    ignored = targets == ignore
    expect(f"{tag} ignored rows are zero",
           bool((losses[ignored] == 0).all() and (d[ignored] == 0).all()))
    if dt == 0:  # float against the exact (float64) answer for the same inputs
        per64, loss64, grad64 = torch_ce(logits.astype(np.float64), targets, ignore, 1,
                                         reduction)
        check(f"{tag} losses vs float64", losses, per64, tol)
        check(f"{tag} dlogits vs float64", d, grad64, tol)
        check(f"{tag} (torch float32's own dlogits vs float64)", grad, grad64, torch_tol)
    # Loss only (dlogits null) gives the same losses.
    only = np.zeros(rows, DTYPES[dt])
    call(getattr(LIB, fn), dt, ptr(only), None, ptr(logits), ptr(targets), rows, V, ignore,
         scale, threads)
    expect(f"{tag} loss-only matches", np.array_equal(only, losses))


def test_classifier():
    for dt in (0, 1):
        rng = np.random.default_rng(11 + dt)
        classifier_case(dt, rng, "fused_classifier", 37, 1001, -100, 6, 4.0)
        classifier_case(dt, rng, "fused_classifier", 37, 1001, -100, 6, 4.0, threads=1,
                        inplace=True)
        classifier_case(dt, rng, "fused_classifier", 8, 50257, -100, 2, 3.0, inplace=True)
        classifier_case(dt, rng, "fused_classifier", 16, 300, -100, 3, 30.0)  # peaked rows
        classifier_case(dt, rng, "fused_classifier", 20, 64, 5, 4, 2.0, reduction="sum")
        classifier_case(dt, rng, "cross_entropy", 16, 5, -100, 0, 2.0,
                        fn="training_cross_entropy")
        classifier_case(dt, rng, "cross_entropy", 16, 5, -100, 4, 2.0, inplace=True,
                        fn="training_cross_entropy")
        # All rows ignored: zeros (the caller's mean would divide by zero).
        logits = rng.standard_normal((4, 10)).astype(DTYPES[dt])
        targets = np.full(4, -100, np.int32)
        losses = np.ones(4, DTYPES[dt])
        call(LIB.training_fused_classifier, dt, ptr(losses), ptr(logits), ptr(logits),
             ptr(targets), 4, 10, -100, 1.0, 2)
        expect(f"all rows ignored -> zeros [{DTYPES[dt].__name__}]",
               bool((losses == 0).all() and (logits == 0).all()))
        # A bad target fails before anything is written.
        logits = rng.standard_normal((3, 10)).astype(DTYPES[dt])
        keep = logits.copy()
        losses = np.full(3, 7.0, DTYPES[dt])
        for bad in (10, -1):
            targets = np.array([1, bad, 2], np.int32)
            expect_error(f"target {bad} [{DTYPES[dt].__name__}]", "row 1",
                         LIB.training_fused_classifier, dt, ptr(losses), ptr(logits),
                         ptr(logits), ptr(targets), 3, 10, -100, 1.0, 2)
            expect(f"target {bad}: nothing written",
                   np.array_equal(logits, keep) and bool((losses == 7.0).all()))
        expect_error("V = 0", "V >= 1", LIB.training_fused_classifier, dt, ptr(losses),
                     None, ptr(logits), ptr(targets), 3, 0, -100, 1.0, 2)
        # MSE, serial and parallel sizes, and a gradient scale.
        for n, s in ((1000, 1.0), (100003, 1.0), (777, 0.25)):
            pred = rng.standard_normal(n).astype(DTYPES[dt])
            target = rng.standard_normal(n).astype(DTYPES[dt])
            x = torch.from_numpy(pred).requires_grad_(True)
            ref = F.mse_loss(x, torch.from_numpy(target))
            (ref * s).backward()
            loss = np.zeros(1, DTYPES[dt])
            dpred = np.zeros(n, DTYPES[dt])
            call(LIB.training_mse, dt, ptr(loss), ptr(dpred), ptr(pred), ptr(target), n, s, 2)
            tag = f"mse [{DTYPES[dt].__name__}, n {n}, scale {s}]"
            check(f"{tag} loss", loss[0], ref.detach(), TOL[dt])
            check(f"{tag} dpred", dpred, x.grad, TOL[dt])
            call(LIB.training_mse, dt, ptr(loss), ptr(pred), ptr(pred), ptr(target), n, s, 2)
            check(f"{tag} dpred in place", pred, x.grad, TOL[dt])


# --- optimizers --------------------------------------------------------------

def test_adamw(dt, rng, n, wd, steps=10, lr=1e-2, betas=(0.9, 0.999), eps=1e-8, threads=2):
    tag = f"adamw [{DTYPES[dt].__name__}, n {n}, wd {wd}, {steps} steps]"
    p0 = rng.standard_normal(n).astype(DTYPES[dt])
    grads = [(rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 0)).astype(DTYPES[dt])
             for _ in range(steps)]
    ref = torch.nn.Parameter(torch.from_numpy(p0.copy()))
    opt = torch.optim.AdamW([ref], lr=lr, betas=betas, eps=eps, weight_decay=wd)
    p, m, v = p0.copy(), np.zeros(n, DTYPES[dt]), np.zeros(n, DTYPES[dt])
    worst = 0.0
    for step in range(1, steps + 1):
        ref.grad = torch.from_numpy(grads[step - 1])
        opt.step()
        call(LIB.training_adamw, dt, ptr(p), ptr(grads[step - 1]), ptr(m), ptr(v), n, lr,
             betas[0], betas[1], eps, wd, step, threads)
        r = ref.detach().to(torch.float64)
        worst = max(worst, (torch.from_numpy(p.astype(np.float64)) - r).abs().max().item()
                    / r.abs().max().item())
    st = opt.state[ref]
    expect(f"{tag} params every step (worst rel err {worst:.2e})", worst <= TOL[dt])
    check(f"{tag} params", p, ref, TOL[dt])
    check(f"{tag} update p - p0", p.astype(np.float64) - p0, ref.detach().double() -
          torch.from_numpy(p0).double(), 10 * TOL[dt])
    check(f"{tag} exp_avg", m, st["exp_avg"], TOL[dt])
    check(f"{tag} exp_avg_sq", v, st["exp_avg_sq"], TOL[dt])


def test_sgd(dt, rng, n, momentum, wd, steps=5, lr=0.1, threads=2):
    tag = f"sgd [{DTYPES[dt].__name__}, n {n}, momentum {momentum}, wd {wd}, {steps} steps]"
    p0 = rng.standard_normal(n).astype(DTYPES[dt])
    grads = [rng.standard_normal(n).astype(DTYPES[dt]) for _ in range(steps)]
    ref = torch.nn.Parameter(torch.from_numpy(p0.copy()))
    opt = torch.optim.SGD([ref], lr=lr, momentum=momentum, weight_decay=wd)
    p = p0.copy()
    buf = np.full(n, np.nan, DTYPES[dt]) if momentum else None  # ignored at step 1
    for step in range(1, steps + 1):
        ref.grad = torch.from_numpy(grads[step - 1])
        opt.step()
        call(LIB.training_sgd, dt, ptr(p), ptr(grads[step - 1]), ptr(buf), n, lr, momentum,
             wd, step, threads)
    check(f"{tag} params", p, ref, TOL[dt])
    check(f"{tag} update p - p0", p.astype(np.float64) - p0, ref.detach().double() -
          torch.from_numpy(p0).double(), 10 * TOL[dt])
    if momentum:
        check(f"{tag} momentum_buffer", buf, opt.state[ref]["momentum_buffer"], TOL[dt])


def test_optimizers():
    for dt in (0, 1):
        rng = np.random.default_rng(21 + dt)
        for n in (1000, 70001):
            for wd in (0.0, 0.1):
                test_adamw(dt, rng, n, wd)
        test_adamw(dt, rng, 513, 0.01, lr=3e-4, betas=(0.8, 0.95), eps=1e-6, threads=1)
        for n in (1000, 70001):
            for momentum, wd in ((0.9, 0.0), (0.9, 1e-2), (0.0, 0.0), (0.0, 1e-2)):
                test_sgd(dt, rng, n, momentum, wd)
        x = np.zeros(4, DTYPES[dt])
        expect_error("adamw step 0", "1-based", LIB.training_adamw, dt, ptr(x), ptr(x),
                     ptr(x), ptr(x), 4, 1e-3, 0.9, 0.999, 1e-8, 0.0, 0, 2)
        expect_error("sgd momentum without buffer", "null", LIB.training_sgd, dt, ptr(x),
                     ptr(x), None, 4, 0.1, 0.9, 0.0, 1, 2)


# --- clipping ----------------------------------------------------------------

def test_clipping():
    for dt in (0, 1):
        rng = np.random.default_rng(31 + dt)
        sizes = (1000, 70001, 17, 4096)
        for max_norm in (1.0, 0.05, 1e4):
            grads = [(rng.standard_normal(s) * 0.1).astype(DTYPES[dt]) for s in sizes]
            params = [torch.nn.Parameter(torch.zeros(s, dtype=TORCH[dt])) for s in sizes]
            for prm, g in zip(params, grads):
                prm.grad = torch.from_numpy(g.copy())
            total_ref = torch.nn.utils.clip_grad_norm_(params, max_norm)
            tag = f"clip_grad_norm [{DTYPES[dt].__name__}, max_norm {max_norm}]"
            sq = 0.0
            for g in grads:
                out = F64()
                call(LIB.training_grad_norm_squared, dt, ptr(g), g.size, ctypes.byref(out), 2)
                sq += out.value
            total = sq ** 0.5
            check(f"{tag} total norm", total, total_ref, TOL[dt])
            coef = LIB.training_clip_coefficient(total, max_norm)
            before = [g.copy() for g in grads]
            if coef < 1.0:
                for g in grads:
                    call(LIB.training_scale_inplace, dt, ptr(g), g.size, coef, 2)
            else:
                expect(f"{tag} no clipping -> coefficient 1", coef == 1.0)
            for i, (g, prm) in enumerate(zip(grads, params)):
                check(f"{tag} grad {i}", g, prm.grad, TOL[dt])
            if coef >= 1.0:
                expect(f"{tag} unclipped grads unchanged",
                       all(np.array_equal(a, b) for a, b in zip(grads, before)))


# --- schedules ---------------------------------------------------------------

def test_schedules():
    import transformers
    from transformers.optimization import get_cosine_with_min_lr_schedule_with_warmup

    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    cases = [(0, 100), (10, 100), (7, 50), (1, 1), (0, 1), (5, 5), (20, 10), (3, 1000)]

    def ours(kind, s, w, t, cycles, min_rate=0.0):
        out = F64()
        call(LIB.training_lr_multiplier, kind, s, w, t, cycles, min_rate, ctypes.byref(out))
        return out.value

    for w, t in cases:
        steps = range(0, t + 25)
        refs = {
            "constant": (0, 0.5, transformers.get_constant_schedule_with_warmup(opt, w)),
            "linear": (1, 0.5, transformers.get_linear_schedule_with_warmup(opt, w, t)),
            "cosine": (2, 0.5, transformers.get_cosine_schedule_with_warmup(opt, w, t)),
            "cosine 1.5 cycles": (2, 1.5, transformers.get_cosine_schedule_with_warmup(
                opt, w, t, num_cycles=1.5)),
        }
        for name, (kind, cycles, sched) in refs.items():
            lam = sched.lr_lambdas[0]
            worst = max(abs(ours(kind, s, w, t, cycles) - lam(s)) for s in steps)
            expect(f"{name} warmup {w} total {t}: {len(steps)} steps, max err {worst:.1e}",
                   worst <= 1e-12)
    # A floor (a job's min_lr as a share of the lr): linear decays to it like
    # get_polynomial_decay_schedule_with_warmup with power 1 (lr_end = the
    # floor; the base lr is 1), cosine ends at it like
    # get_cosine_with_min_lr_schedule_with_warmup. (Total > warmup: the
    # polynomial one divides by total - warmup.)
    for w, t in [(0, 100), (10, 100), (7, 50), (1, 2), (3, 1000)]:
        steps = range(0, t + 25)
        for rate in (0.1, 0.25):
            refs = {
                "linear": (1, 0.5, transformers.get_polynomial_decay_schedule_with_warmup(
                    opt, w, t, lr_end=rate, power=1.0)),
                "cosine": (2, 0.5, get_cosine_with_min_lr_schedule_with_warmup(
                    opt, w, t, min_lr_rate=rate)),
                "cosine 1.5 cycles": (2, 1.5, get_cosine_with_min_lr_schedule_with_warmup(
                    opt, w, t, num_cycles=1.5, min_lr_rate=rate)),
            }
            for name, (kind, cycles, sched) in refs.items():
                lam = sched.lr_lambdas[0]
                worst = max(abs(ours(kind, s, w, t, cycles, rate) - lam(s)) for s in steps)
                expect(f"{name} min_lr {rate} warmup {w} total {t}: max err {worst:.1e}",
                       worst <= 1e-12)
    # The constant schedule has no floor to apply.
    expect("constant ignores min_lr", ours(0, 5, 2, 10, 0.5, 0.3) == 1.0)
    # get_constant_schedule (no warmup) is our lr_constant with warmup 0.
    lam = transformers.get_constant_schedule(opt).lr_lambdas[0]
    expect("constant (no warmup)", all(ours(0, s, 0, 0, 0.5) == lam(s) for s in range(50)))
    # Driven through the scheduler itself: the lr the optimizer sees at each step.
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=3e-4)
    sched = transformers.get_cosine_schedule_with_warmup(opt, 10, 60)
    seen = []
    for _ in range(70):
        seen.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    worst = max(abs(3e-4 * ours(2, s, 10, 60, 0.5) - lr) for s, lr in enumerate(seen))
    expect(f"cosine through LambdaLR (lr at each update), max err {worst:.1e}",
           worst <= 1e-16)
    expect_error("negative step", "negative", LIB.training_lr_multiplier, 1, -1, 0, 10, 0.5,
                 0.0, ctypes.byref(F64()))
    expect_error("min_lr above the lr", "between 0 and the learning rate",
                 LIB.training_lr_multiplier, 1, 5, 0, 10, 0.5, 1.5, ctypes.byref(F64()))


# --- offload -----------------------------------------------------------------

def offload_case(dt, rng, sizes, wds, begin, end, chunk, coefs, lr=1e-2, betas=(0.9, 0.95),
                 eps=1e-8, threads=2):
    """One rank's offloaded AdamW over [begin, end) of a group of segments
    (64-byte aligned, as bmb-plan-memory lays them out), len(coefs) steps,
    each step's gradients scaled by its clip coefficient."""
    align = 64 // np.dtype(DTYPES[dt]).itemsize
    at, pos = [], 0
    for n in sizes:
        at.append(pos)
        pos = (pos + n + align - 1) // align * align
    total = pos
    end = min(end, total)
    tag = (f"offload [{DTYPES[dt].__name__}, segments {sizes}, part [{begin}, {end}) of "
           f"{total}, chunk {chunk}, {len(coefs)} steps]")
    p0 = rng.standard_normal(total).astype(DTYPES[dt])
    p = p0.copy()
    state = np.zeros(4 * (end - begin), DTYPES[dt])
    # The non-offloaded path on a copy: scale_inplace + adamw_update per segment.
    q = p0.copy()
    qm, qv = np.zeros(total, DTYPES[dt]), np.zeros(total, DTYPES[dt])
    # torch: one param per segment's part of the partition, its own group.
    refs, groups = [], []
    for a, n, wd in zip(at, sizes, wds):
        lo, hi = max(a, begin), min(a + n, end)
        if lo < hi:
            refs.append((lo, hi, torch.nn.Parameter(torch.from_numpy(p0[lo:hi].copy()))))
            groups.append({"params": [refs[-1][2]], "weight_decay": wd})
    opt = torch.optim.AdamW(groups, lr=lr, betas=betas, eps=eps)
    a_arr, n_arr = np.array(at, np.int64), np.array(sizes, np.int64)
    wd_arr = np.array(wds, np.float64)
    for step, coef in enumerate(coefs, start=1):
        g = (rng.standard_normal(total) * 10.0 ** rng.uniform(-3, 0)).astype(DTYPES[dt])
        g_device = g.copy()  # the "device" gradients (the call reads them, never scales them)
        call(LIB.training_offload_adamw, dt, ptr(p), ptr(g_device), ptr(state), total, begin,
             end, ptr(a_arr), ptr(n_arr), ptr(wd_arr), len(sizes), chunk, lr, betas[0],
             betas[1], eps, step, coef, 1, threads)
        expect(f"{tag} step {step}: the device gradients are left as they were",
               np.array_equal(g_device, g))
        gq = g.copy()
        if coef < 1.0:
            call(LIB.training_scale_inplace, dt, ptr(gq), total, coef, threads)
        for a, n, wd in zip(at, sizes, wds):
            lo, hi = max(a, begin), min(a + n, end)
            if lo < hi:
                call(LIB.training_adamw, dt, ptr(q[lo:]), ptr(gq[lo:]), ptr(qm[lo:]),
                     ptr(qv[lo:]), hi - lo, lr, betas[0], betas[1], eps, wd, step, threads)
        for lo, hi, ref in refs:
            # clip_grad_norm_ multiplies the gradients by the coefficient.
            ref.grad = torch.from_numpy(g[lo:hi].copy()) * min(coef, 1.0)
        opt.step()
    for lo, hi, ref in refs:
        check(f"{tag} params [{lo}, {hi})", p[lo:hi], ref, TOL[dt])
        st = opt.state[ref]
        check(f"{tag} exp_avg [{lo}, {hi})", state[lo - begin:hi - begin], st["exp_avg"],
              TOL[dt])
        n = end - begin
        check(f"{tag} exp_avg_sq [{lo}, {hi})", state[n + lo - begin:n + hi - begin],
              st["exp_avg_sq"], TOL[dt])
    outside = np.concatenate([np.arange(0, begin), np.arange(end, total)]).astype(np.int64)
    expect(f"{tag} params outside the partition untouched",
           np.array_equal(p[outside], p0[outside]))
    expect(f"{tag} bit for bit the non-offloaded adamw_update", np.array_equal(p, q))
    n = end - begin
    expect(f"{tag} m, v bit for bit the non-offloaded ones",
           np.array_equal(state[:n], qm[begin:end]) and
           np.array_equal(state[n:2 * n], qv[begin:end]))


def test_offload():
    for dt in (0, 1):
        rng = np.random.default_rng(41 + dt)
        sizes, wds = [1000, 7, 70001, 4096], [0.1, 0.0, 0.1, 0.0]
        # One rank (the whole group); two ranks' partitions; chunks smaller
        # than a segment, crossing segment ends, and larger than the group.
        for begin, end in ((0, 1 << 40), (0, 40000), (40000, 1 << 40)):
            for chunk in (4096, 999, 1 << 20):
                offload_case(dt, rng, sizes, wds, begin, end, chunk, [1.0, 0.37, 1.0])
        offload_case(dt, rng, [513], [0.01], 0, 1 << 40, 100, [0.5] * 4, threads=1)
        x = np.zeros(16, DTYPES[dt])  # 4 slots of a 4-element partition
        one = np.array([0], np.int64), np.array([4], np.int64), np.array([0.0])
        expect_error("offload without the offloaded state", "did not allocate",
                     LIB.training_offload_adamw, dt, ptr(x), ptr(x), ptr(x), 4, 0, 4,
                     ptr(one[0]), ptr(one[1]), ptr(one[2]), 1, 4, 1e-3, 0.9, 0.999, 1e-8, 1,
                     1.0, 0, 2)
        expect_error("offload chunk 0", "chunk of 0", LIB.training_offload_adamw, dt, ptr(x),
                     ptr(x), ptr(x), 4, 0, 4, ptr(one[0]), ptr(one[1]), ptr(one[2]), 1, 0,
                     1e-3, 0.9, 0.999, 1e-8, 1, 1.0, 1, 2)


if __name__ == "__main__":
    parts = {"classifier": test_classifier, "optimizers": test_optimizers,
             "clipping": test_clipping, "schedules": test_schedules, "offload": test_offload}
    if len(sys.argv) != 3 or sys.argv[2] not in parts:
        sys.exit(__doc__)
    torch.set_num_threads(1)
    LIB = load(sys.argv[1])
    parts[sys.argv[2]]()
    if failures:
        print(f"{len(failures)} check(s) failed:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("all checks passed")
