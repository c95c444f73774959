#!/usr/bin/env python3
"""Mixed precision (precision = bf16) against fp32 and torch.

usage: check_mixed.py MODE EXEDIR WORKDIR

EXEDIR holds the executables of test/e2e/mixed.bmb: GPT-2 nano in fp32
(mixed_fp32) and bf16 (mixed_bf16, and mixed_bf16_z1 with ZeRO-1). bf16
means: every GEMM (the linears, the tied LM head, attention's q k^T and
P v, and their backward GEMMs) rounds its two inputs to bf16 and
accumulates in fp32; everything else (softmax and the scaling inside
attention too), the params (master weights), gradients and optimizer state
are fp32.

  grads  one step from check_train.py's Hugging Face weights and batch:
         (1) against an exact torch model of those numerics (float64; each
         Conv1D and the head is an autograd Function rounding its inputs,
         and in backward the incoming gradient and the saved input, to
         bf16; so are attention's two matmuls, the probabilities P
         rounded before P v, softmax and scale unrounded): loss to 1e-4
         (measured 1.7e-6); each gradient to 5e-3 relative AND to at most
         half of the emulation's own distance from fp32 (so we compute
         these numerics, not others). Why not check_train's 1e-4: our
         activations differ from float64's in the last fp32 bits, and an
         element that sits within that of a bf16 rounding boundary rounds
         the other way, moving it by one bf16 ulp (2^-8 relative); the
         flips of the forward and of each backward GEMM add up towards the
         first layers (attention's matmuls add four rounding points per
         layer). Measured: <= 4.4e-3 (h.0.ln_1.weight), 0.39 of the
         emulation's distance from fp32 at worst (before attention was
         autocast: 2.9e-3 and 0.27; a program with fp32 attention is
         1.3e-2 from this reference and fails).
         (2) against torch fp32 autograd: each weight gradient differs by
         more than 1e-4 (the inputs were rounded: not an fp32 program) and,
         like torch.autocast(bfloat16) on CPU, by at most 5e-2.
         (3) against torch.autocast(bfloat16) on CPU: at most 3e-2. Not
         closer: autocast also rounds every GEMM's output (attention's
         scores and probabilities included) and the layernorms' inputs to
         bf16, so it is itself 0.3-1.7e-2 from fp32 and we are
         0.3-1.3e-2 from fp32, in independent directions (measured:
         <= 1.37e-2 apart; 1.65e-2 with attention's matmuls in fp32).
  loss   200 steps (lr 3e-3) of fp32, bf16 and fp16 on a learnable token
         stream (a Markov chain: 4 successors per token), evaluated on
         held-out data every 20 steps: every bf16 and fp16 eval loss is
         within 2% of fp32's (measured: bf16 6.7e-4 at worst), and the loss has fallen by at
         least a third (measured 5.8 -> 2.3: the test is not vacuous).
  fp16   mixed_fp16 (loss_scale_window = 20): (a) from --loss-scale 2^40 the
         first steps overflow: each is skipped (logged `skipped`, the
         weights kept), the scale halves every time, and once it fits
         training proceeds (the loss falls); after 20 good steps in a row the
         scale doubles. (b) 30 steps saved, then --resume to 60: the same
         losses, scales and final weights (bytes) as 60 straight steps (the
         scale, its good-step count and the skipped count are restored).
         (The `loss` mode runs fp16 at the default scale against fp32.)
  dist   bf16 under mpirun -np 2 (plain data parallelism and ZeRO-1), and
         fp16 from --loss-scale 2^30 (its first steps overflow: the ranks
         must agree to skip them), one micro-batch per rank,
         --deterministic, one thread per rank, 20 steps: the same losses
         (every step) and final weights (bytes) as one process with
         --accum 2. The same with offload = optimizer (mixed_bf16_z1_off,
         mixed_fp16_off: AdamW on the host's fp32 master, the 16-bit weight
         copy refreshed from the params it copied back; fp16's skipped
         steps skip the offloaded update too), and under ZeRO-2 (fp16:
         the ranks check their partitions of the summed gradients) and
         ZeRO-3 (bf16, fp16: the 16-bit weights rounded from each gathered
         unit). bf16 resumed across zero = 3 -> 1 -> 3 (at steps 7 and 14)
         equals the same reference, and --eval-only of its model under
         bf16 zero = 3 on 2 ranks prints one process's loss.
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
import harness  # noqa: E402
import tokfile  # noqa: E402

CONFIG = "gpt2-nano"
VOCAB = 512
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMP_NUM_THREADS": "1"}


def bf16(t):
    """t rounded to bf16 (via fp32, as our fp32 activations are), in t's dtype."""
    return t.to(torch.float32).to(torch.bfloat16).to(t.dtype)


class RoundedBmm(torch.autograd.Function):
    """a @ b (batched) with both inputs rounded to bf16; the backward rounds
    the incoming gradient and the other input: attention's Q K^T and P V,
    whose gradient op rounds dS and K (dQ), dS and Q (dK), dO and V (dP),
    P and dO (dV). Softmax and its backward stay unrounded."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return bf16(a) @ bf16(b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        g = bf16(g)
        return g @ bf16(b).transpose(-1, -2), bf16(a).transpose(-1, -2) @ g


def rounded_attention(attn):
    """GPT2Attention._attn (eager, causal, no mask) with its two matmuls
    rounding their inputs as RoundedBmm does; scaling and softmax unrounded."""
    assert attn.scale_attn_weights and not attn.scale_attn_by_inverse_layer_idx

    def _attn(query, key, value, attention_mask=None, head_mask=None):
        assert attention_mask is None and head_mask is None
        w = RoundedBmm.apply(query, key.transpose(-1, -2)) / value.size(-1) ** 0.5
        q_len, k_len = query.size(-2), key.size(-2)
        causal = attn.bias[:, :, k_len - q_len:k_len, :k_len]
        w = torch.where(causal, w, torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype))
        p = torch.nn.functional.softmax(w, dim=-1)
        return RoundedBmm.apply(attn.attn_dropout(p), value), p
    return _attn


class RoundedMatmul(torch.autograd.Function):
    """x @ w with both inputs rounded to bf16; the backward GEMMs round the
    incoming gradient and their other input too (our linear_grad_input /
    linear_grad_weight carry the forward GEMM's autocast mark)."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return bf16(x) @ bf16(w)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        g = bf16(g)
        dx = g @ bf16(w).T
        dw = bf16(x).reshape(-1, x.shape[-1]).T @ g.reshape(-1, g.shape[-1])
        return dx, dw


def emulated_model(s):
    """The Hugging Face model in float64 with every GEMM, attention's two
    matmuls included, rounding its inputs to bf16 (our bf16 program's
    numerics)."""
    from transformers.models.gpt2.modeling_gpt2 import GPT2Attention
    from transformers.pytorch_utils import Conv1D
    m = s.model().double()
    for mod in m.modules():
        if isinstance(mod, Conv1D):
            mod.forward = (lambda x, mod=mod: RoundedMatmul.apply(x, mod.weight) + mod.bias)
        if isinstance(mod, GPT2Attention):
            mod._attn = rounded_attention(mod)
    head = m.lm_head
    head.forward = lambda h: RoundedMatmul.apply(h, head.weight.T)
    return m


def grads(fails, s, exedir):
    dump = os.path.join(s.dir, "bf16-grads.safetensors")
    log = os.path.join(s.dir, "bf16-grads.jsonl")
    for f in (dump, log):
        if os.path.exists(f):
            os.remove(f)
    if not s.run(fails, "bf16: one step with --dump-grads", os.path.join(exedir, "mixed_bf16"),
                 "--steps", 1, "--dump-grads", dump, "--log", log):
        return
    tokens, targets = s.batch(0)
    ours = check_train.load_safetensors(dump)
    ours_loss = check_train.logged(log)[0]["loss"]

    emu = emulated_model(s)
    loss = check_train.torch_loss(emu, tokens, targets)
    loss.backward()
    err = abs(ours_loss - float(loss)) / abs(float(loss))
    print("loss: ours %.7f, emulated bf16 %.7f, rel %.2e" % (ours_loss, float(loss), err))
    fails.check(err <= 1e-4, "loss %.7f vs emulated bf16 %.7f (rel %.2e > 1e-4)"
                % (ours_loss, float(loss), err))
    ref = {n: p.grad.numpy() for n, p in emu.named_parameters()}

    fp32 = s.model()
    check_train.torch_loss(fp32, tokens, targets).backward()
    exact = {n: p.grad.double().numpy() for n, p in fp32.named_parameters()}

    ac = s.model()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ac_loss = check_train.torch_loss(ac, tokens, targets)
    ac_loss.backward()
    autocast = {n: p.grad.double().numpy() for n, p in ac.named_parameters()}

    largest = max(np.abs(g).max() for g in ref.values())
    print("%-34s %10s %10s %10s %10s %10s" % ("gradient", "ours-emul", "ours-fp32",
                                              "emul-fp32", "autoc-fp32", "ours-autoc"))
    for name, g in sorted(ref.items()):
        if name not in ours:
            fails.add("--dump-grads has no %s" % name)
            continue
        o = ours[name].astype(np.float64)
        if np.abs(g).max() < 1e-6 * largest:
            e = float(np.abs(o - g).max())
            print("%-34s abs %.2e (reference ~0)" % (name, e))
            fails.check(e <= 1e-5 * largest, "gradient of %s: abs %.2e" % (name, e))
            continue
        e_emu = harness.rel_err(o, g)
        e_fp32 = harness.rel_err(o, exact[name])
        d_emu = harness.rel_err(g, exact[name])
        e_ac = harness.rel_err(autocast[name], exact[name])
        o_ac = harness.rel_err(o, autocast[name])
        print("%-34s %10.2e %10.2e %10.2e %10.2e %10.2e" % (name, e_emu, e_fp32, d_emu, e_ac,
                                                           o_ac))
        fails.check(o_ac <= 3e-2, "gradient of %s vs torch.autocast(bfloat16): %.2e > 3e-2"
                    % (name, o_ac))
        fails.check(e_emu <= 5e-3, "gradient of %s vs emulated bf16: %.2e > 5e-3" % (name, e_emu))
        fails.check(e_emu <= 0.5 * d_emu, "gradient of %s: %.2e from emulated bf16, which is "
                    "only %.2e from fp32" % (name, e_emu, d_emu))
        fails.check(e_fp32 <= 5e-2, "gradient of %s vs fp32: %.2e > 5e-2" % (name, e_fp32))
        if name.endswith(".weight") and "ln" not in name and "wpe" not in name:
            fails.check(e_fp32 > 1e-4, "gradient of %s equals fp32's (%.2e): were the GEMM "
                        "inputs rounded?" % (name, e_fp32))


def markov_tokens(n, seed=3):
    """A learnable stream: each token has 4 equally likely successors."""
    rng = np.random.default_rng(seed)
    succ = rng.integers(0, VOCAB, size=(VOCAB, 4))
    out = np.empty(n, dtype=np.int64)
    out[0] = 0
    picks = rng.integers(0, 4, size=n)
    for i in range(1, n):
        out[i] = succ[out[i - 1], picks[i]]
    return out.tolist()


def loss_curves(fails, s, exedir):
    data = os.path.join(s.dir, "markov.tok")
    tokfile.write(data, markov_tokens(300_000), VOCAB)
    curves = {}
    for job in ("mixed_fp32", "mixed_bf16", "mixed_fp16"):
        log = os.path.join(s.dir, job + "-200.jsonl")
        if os.path.exists(log):
            os.remove(log)
        # fp16 from 2^10: with the job's window of 20 the scale reaches 2^20
        # at step 200, below where this model's gradients overflow (~2^21:
        # from the default 2^16 five updates are skipped, each one costing
        # ~0.3% of loss at this point of the curve).
        scale = ["--loss-scale", "1024"] if job == "mixed_fp16" else []
        cmd = [os.path.join(exedir, job), "--data", data, "--seed", "1", "--steps", "200",
               "--lr", "3e-3", "--eval-every", "20", "--eval-batches", "8",
               "--val-fraction", "0.1", "--log", log] + scale + check_train.THREADS
        p = harness.run(cmd, timeout=600)
        if p.returncode != 0:
            fails.add("%s: exit %s\n%s" % (job, p.returncode, harness.tail(p.stderr)))
            return
        if job == "mixed_bf16":
            fails.check("precision: bf16" in harness.text(p.stdout) + harness.text(p.stderr),
                        "the bf16 banner does not say `precision: bf16`")
        curves[job] = [(r["step"], r["val_loss"]) for r in check_train.logged(log, "val_loss")]
        if job == "mixed_fp16":
            skipped = sum(r["skipped"] for r in check_train.logged(log))
            print("fp16: %d of 200 updates skipped" % skipped)
    a = curves["mixed_fp32"]
    for job in ("mixed_bf16", "mixed_fp16"):
        b, name = curves[job], job[len("mixed_"):]
        fails.check(len(a) >= 10 and [x[0] for x in a] == [x[0] for x in b],
                    "eval steps differ or are too few: %s vs %s" % (a, b))
        worst = 0.0
        for (step, la), (_, lb) in zip(a, b):
            rel = abs(lb - la) / la
            worst = max(worst, rel)
            print("step %4d  val loss fp32 %.5f  %s %.5f  rel %.2e" % (step, la, name, lb, rel))
            fails.check(rel <= 0.02, "step %d: %s val loss %.5f vs fp32 %.5f (%.2e > 2%%)"
                        % (step, name, lb, la, rel))
        print("%s: worst relative difference %.2e" % (name, worst))
    fails.check(a and a[-1][1] < 0.67 * a[0][1],
                "fp32's val loss did not fall by a third (%s): the comparison is vacuous" % a)


def fp16(fails, s, exedir):
    exe = os.path.join(exedir, "mixed_fp16")
    data = os.path.join(s.dir, "markov.tok")
    tokfile.write(data, markov_tokens(300_000), VOCAB)

    def run(name, steps, *extra, keep_scale=False):
        """keep_scale: no --loss-scale (a resumed run continues its own)."""
        out = os.path.join(s.dir, "fp16-" + name)
        if "--resume" not in extra:
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
        log = os.path.join(out, "log.jsonl")
        scale = [] if keep_scale else ["--loss-scale", str(2**40)]
        p = harness.run([exe, "--data", data, "--seed", "2", "--steps", str(steps)] + scale +
                        ["--val-fraction", "0.1",
                         "--save", os.path.join(out, "ckpt"), "--log", log]
                        + check_train.THREADS + list(extra), timeout=300)
        if p.returncode != 0:
            fails.add("fp16 %s: exit %s\n%s" % (name, p.returncode, harness.tail(p.stderr)))
            return None, None
        recs = check_train.logged(log)
        with open(os.path.join(out, "ckpt", "step-%07d" % steps, "model.safetensors"), "rb") as f:
            return recs, f.read()

    recs, weights = run("straight", 60)
    if recs is None:
        return
    skipped = [r["skipped"] for r in recs]
    scales = [r["loss_scale"] for r in recs]
    first = skipped.index(False) if False in skipped else len(skipped)
    print("fp16 from 2^40: %d steps skipped first; scales %s" % (first, scales[:first + 2]))
    fails.check(first >= 5, "fp16: only %d skipped steps from loss scale 2^40" % first)
    fails.check(scales[:first] == [2.0**(39 - i) for i in range(first)],
                "fp16: the scale did not halve on every skipped step: %s" % scales[:first])
    fails.check(all(r["grad_norm"] == 0 for r in recs[:first]),
                "fp16: a skipped step reported a gradient norm")
    # After 20 good steps in a row the scale doubles (and may overflow again).
    good = 0
    for i in range(first, len(recs)):
        if skipped[i]:
            fails.check(scales[i] == scales[i - 1] / 2 or scales[i] == 1,
                        "fp16 step %d: skipped without halving" % (i + 1))
            good = 0
            continue
        good += 1
        want = scales[i - 1] * 2 if good == 20 else scales[i - 1]
        if good == 20:
            good = 0
        fails.check(scales[i] == want, "fp16 step %d: scale %g, want %g" % (i + 1, scales[i], want))
    fails.check(sum(skipped[first:]) <= 5, "fp16: too many skipped steps after the first "
                "good one: %s" % skipped)
    fails.check(recs[-1]["loss"] < recs[first]["loss"] - 0.1,
                "fp16: the loss did not fall after the skipped steps (%.4f -> %.4f)"
                % (recs[first]["loss"], recs[-1]["loss"]))

    half, _ = run("resumed", 30)
    more, resumed_weights = run("resumed", 60, "--resume", keep_scale=True)
    if half is not None and more is not None:
        # The resumed run appends to the first run's log.
        got = [(r["loss"], r["loss_scale"], r["skipped"]) for r in more]
        want = [(r["loss"], r["loss_scale"], r["skipped"]) for r in recs]
        fails.check(got == want, "fp16: 30 + --resume + 30 logged other losses/scales than 60 "
                    "straight steps")
        fails.check(resumed_weights == weights,
                    "fp16: 30 + --resume + 30 ended with other weights than 60 straight steps")
        if got == want and resumed_weights == weights:
            print("fp16: 30 + --resume + 30 = 60 straight steps (losses, scales, weights)")


def dist(fails, s, exedir):
    data = os.path.join(s.dir, "dist.tok")
    r = np.random.default_rng(11)
    tokfile.write(data, r.integers(0, VOCAB, 60000).tolist(), VOCAB)
    env = dict(os.environ, **MPI_ENV)

    def run(name, job, ranks, accum, *extra, steps=20, resume=False):
        out = os.path.join(s.dir, "dist-" + name)
        if not resume:
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
        log = os.path.join(out, "log.jsonl")
        cmd = [os.path.join(exedir, job), "--data", data, "--seed", "5", "--threads", "1",
               "--deterministic", "--val-fraction", "0", "--order", "random", "--steps",
               str(steps), "--accum", str(accum), "--save", os.path.join(out, "ckpt"), "--log",
               log] + (["--resume"] if resume else [])
        cmd += list(extra)
        if ranks:
            cmd = ["mpirun", "-np", str(ranks)] + cmd
        print("$ " + " ".join(cmd), flush=True)
        p = subprocess.run(cmd, capture_output=True, env=env, timeout=300, text=True)
        if p.returncode != 0:
            fails.add("%s: exit %s\n%s" % (name, p.returncode, harness.tail(p.stderr, 20)))
            return None, None
        losses = [json.loads(l)["loss"] for l in open(log)]
        with open(os.path.join(out, "ckpt", "step-%07d" % steps, "model.safetensors"),
                  "rb") as f:
            return losses, f.read()

    # fp16 from 2^30: the first steps overflow and every rank must skip them.
    fp16 = ["--loss-scale", str(2**30)]
    refs = {"bf16": run("ref-accum2", "mixed_bf16", 0, 2),
            "fp16": run("ref-fp16-accum2", "mixed_fp16", 0, 2, *fp16)}
    for job in ("mixed_bf16", "mixed_bf16_z1", "mixed_fp16", "mixed_bf16_z1_off",
                "mixed_fp16_off", "mixed_fp16_z2", "mixed_bf16_z3", "mixed_fp16_z3"):
        half = job.startswith("mixed_fp16")
        ref = refs["fp16" if half else "bf16"]
        got = run(job + "-np2", job, 2, 1, *(fp16 if half else []))
        if ref[0] is None or got[0] is None:
            continue
        fails.check(len(got[0]) == 20 and got[0] == ref[0],
                    "%s on 2 ranks: losses differ from one process --accum 2\n  ref %s\n  got %s"
                    % (job, ref[0][-3:], got[0][-3:]))
        fails.check(got[1] == ref[1], "%s on 2 ranks: final weights differ (bytes)" % job)
        if half:
            log = os.path.join(s.dir, "dist-%s-np2" % job, "log.jsonl")
            skipped = sum(r["skipped"] for r in check_train.logged(log))
            fails.check(skipped >= 3, "fp16 on 2 ranks: %d skipped steps from 2^30" % skipped)
        if got[0] == ref[0] and got[1] == ref[1]:
            print("%s on 2 ranks: 20 losses and the weights identical to --accum 2 (last %.17g)"
                  % (job, got[0][-1]))
    # bf16 checkpoints across zero = 3 and zero = 1 on 2 ranks, both ways:
    # steps 1-7 under zero = 3, 8-14 resumed under zero = 1, 15-20 resumed
    # under zero = 3 again; the same as 20 straight steps of one process.
    ref = refs["bf16"]
    chain = None
    for job, steps in (("mixed_bf16_z3", 7), ("mixed_bf16_z1", 14), ("mixed_bf16_z3", 20)):
        chain = run("z3-z1-z3", job, 2, 1, steps=steps, resume=steps != 7)
        if chain[0] is None:
            break
    if ref[0] is not None and chain[0] is not None:
        fails.check(chain[0] == ref[0] and chain[1] == ref[1],
                    "bf16 zero = 3 -> zero = 1 -> zero = 3 on 2 ranks (--resume at 7 and 14): "
                    "losses or weights differ from one process --accum 2\n  ref %s\n  got %s"
                    % (ref[0][-3:], chain[0][-3:]))
        if chain[0] == ref[0] and chain[1] == ref[1]:
            print("bf16 zero = 3 -> 1 -> 3 on 2 ranks, resumed at 7 and 14: identical to "
                  "--accum 2")
    # The evaluate entry gathers and rounds too: --eval-only of the reference
    # model under zero = 3 bf16 on 2 ranks prints one process's loss.
    model = os.path.join(s.dir, "dist-ref-accum2", "ckpt", "step-%07d" % 20)
    evals = []
    for job, ranks in (("mixed_bf16", 0), ("mixed_bf16_z3", 2)):
        cmd = [os.path.join(exedir, job), "--data", data, "--threads", "1", "--eval-only",
               "--load", model, "--eval-split", "all", "--comm-timeout", "30"]
        if ranks:
            cmd = ["mpirun", "-np", str(ranks)] + cmd
        print("$ " + " ".join(cmd), flush=True)
        p = subprocess.run(cmd, capture_output=True, env=env, timeout=120, text=True)
        fails.check(p.returncode == 0, "%s --eval-only: exit %s\n%s"
                    % (job, p.returncode, harness.tail(p.stderr, 20)))
        evals.append([l for l in p.stdout.splitlines() if l.startswith("loss ")])
    fails.check(len(evals[0]) == 1 and evals[0] == evals[1],
                "--eval-only under bf16 zero = 3 on 2 ranks: %s, one process: %s"
                % (evals[1], evals[0]))
    if len(evals[0]) == 1 and evals[0] == evals[1]:
        print("--eval-only, bf16 one process and zero = 3 on 2 ranks: %s" % evals[0][0])


def main(argv):
    if len(argv) != 3:
        harness.die(__doc__.strip().splitlines()[2])
    mode, exedir, workdir = argv
    torch.manual_seed(0)
    t = check_train.TRAIN[CONFIG]
    s = check_train.Setup(CONFIG, os.path.join(workdir, "mixed"),
                          tokens_needed=t["batch"] * t["seq"] * 4 + 1)
    fails = harness.Failures("check_mixed %s" % mode)
    if mode == "grads":
        grads(fails, s, exedir)
    elif mode == "loss":
        loss_curves(fails, s, exedir)
    elif mode == "fp16":
        fp16(fails, s, exedir)
    elif mode == "dist":
        dist(fails, s, exedir)
    else:
        harness.die("unknown mode %r" % mode)
    return fails.exit_code()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
