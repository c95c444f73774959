#!/usr/bin/env python3
"""fp16 training (dynamic loss scaling) of the --target=cuda executable
against the host executable (ctest label cuda-gpu;
test/runtime/cuda/CMakeLists.txt).

  check_cuda_fp16.py PROBE CUDA_EXE HOST_EXE WORKDIR

CUDA_EXE and HOST_EXE are test/e2e/mixed.bmb's mixed_fp16 (GPT-2 nano,
precision = fp16, loss_scale_window = 20) built for each target. Without a
GPU (PROBE, bmb-cuda-probe, fails) it prints why and exits 77 (Skipped).
With one, both train STEPS steps from check_train.py's gpt2-nano weights
on the same tokens, from --loss-scale 2^30, so the first steps overflow
(about 8 on the host, halving to ~2^22) and the 20-step window doubles the
scale once before the end:
 - the loss scaler decides alike: every step's `skipped` flag and loss
   scale are equal (the scaler's logic is app/loss_scale.cpp's on both; the
   device answers its overflow check with a CUB reduction over the
   gradients, zeroes and unscales them there). An overflow is inf in the
   fp16 rounding of a GEMM input, far from any rounding boundary, so the
   two backends' rounding-level differences cannot move a decision short of
   a gradient within ~1e-6 of fp16's largest value: a failure here is a bug;
 - the logged losses agree within 1e-3 relative. Not check_cuda_train's
   1e-4: both backends round the same fp32 values to fp16 (lowp.h's
   to_fp16, the same bits), so they differ by fp32 accumulation order
   (~1e-6, as the fp32 check), but a value that sits that close to an fp16
   rounding boundary rounds to the neighbour: one fp16 ulp (2^-11 = 4.9e-4
   relative) in that GEMM input. check_mixed.py measured the same effect
   for bf16 (ulp 2^-8) at <= 2.9e-3 in the gradients; fp16's ulp is 8x
   smaller, and the loss (a mean over batch x seq positions, a few AdamW
   steps on) moves less than the worst gradient element;
 - the final report line ("fp16 loss scaling: N updates skipped, loss scale
   S") is the same.
Not yet run on a GPU (the machine this was written on has none).
"""

import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_train  # noqa: E402
import harness  # noqa: E402

SKIPPED = 77
CONFIG = "gpt2-nano"  # mixed_fp16's model
STEPS = 30
TOL = 1e-3
DATA_SEED = 13  # apart from check_train's and check_cuda_train's data files


def train(fails, s, label, exe, name):
    save = os.path.join(s.dir, name)
    shutil.rmtree(save, ignore_errors=True)
    log = save + ".jsonl"
    if os.path.exists(log):
        os.remove(log)
    cmd = [exe, "--load", s.init, "--data", s.data, "--order", "sequential",
           "--val-fraction", "0", "--steps", str(STEPS), "--loss-scale", str(2**30),
           "--log", log]
    p = harness.run(cmd)
    if p.returncode != 0:
        fails.add("%s: exit %s\n%s" % (label, p.returncode, harness.tail(p.stderr)))
        return None, None
    summary = [l for l in harness.text(p.stdout).splitlines()
               if l.startswith("fp16 loss scaling:")]
    return check_train.logged(log), summary


def main(argv):
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    probe, cuda_exe, host_exe = (os.path.abspath(a) for a in argv[1:4])
    workdir = os.path.abspath(argv[4])
    p = harness.run([probe], quiet=True)
    if p.returncode != 0:
        print("skipped: no usable GPU: %s" % harness.tail(p.stderr + p.stdout, 3))
        return SKIPPED
    fails = harness.Failures("check_cuda_fp16")
    t = check_train.TRAIN[CONFIG]
    s = check_train.Setup(CONFIG, workdir, (STEPS + 2) * t["batch"] * t["seq"] + t["seq"] + 1,
                          seed=DATA_SEED)
    ours, our_summary = train(fails, s, "cuda fp16 training", cuda_exe, "cuda-fp16")
    ref, ref_summary = train(fails, s, "host fp16 training", host_exe, "host-fp16")
    if ours is None or ref is None:
        return fails.exit_code()
    if not fails.check(len(ours) == len(ref) == STEPS, "logged %d (cuda) and %d (host) steps, "
                       "expected %d" % (len(ours), len(ref), STEPS)):
        return fails.exit_code()
    decisions = [(r["skipped"], r["loss_scale"]) for r in ours]
    want = [(r["skipped"], r["loss_scale"]) for r in ref]
    skipped = sum(1 for d in want if d[0])
    print("host: %d of %d updates skipped; scales %s" % (skipped, STEPS,
                                                         [d[1] for d in want]))
    fails.check(skipped >= 3, "only %d skipped steps from loss scale 2^30: the test would not "
                "exercise the overflow path" % skipped)
    for i, (a, b) in enumerate(zip(decisions, want)):
        fails.check(a == b, "step %d: cuda (skipped, scale) = %s, host %s" % (i + 1, a, b))
    worst = max(abs(a["loss"] - b["loss"]) / max(abs(b["loss"]), 1e-30)
                for a, b in zip(ours, ref))
    print("max relative loss difference over %d steps: %.2e" % (STEPS, worst))
    fails.check(worst <= TOL, "the fp16 losses differ by %.2e > %.0e relative" % (worst, TOL))
    fails.check(our_summary == ref_summary and len(ref_summary) == 1,
                "final loss scaling lines: cuda %s, host %s" % (our_summary, ref_summary))
    return fails.exit_code()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
