#!/usr/bin/env python3
"""The --target=cuda tune executables against the host's (ctest label
cuda-gpu; test/runtime/cuda/CMakeLists.txt).

  check_cuda_tune.py PROBE CUDA_DIR HOST_DIR WORKDIR

CUDA_DIR and HOST_DIR hold the executables of test/e2e/tune.bmb's tune jobs
built with --target=cuda (cuda.program.<job>) and --target=host (the e2e
tune suite's fixture). Without a GPU (PROBE, bmb-cuda-probe, fails) it
prints why and exits 77, which ctest reports as Skipped. With one, per job
(GPT-2 nano: two masks, reduce first and mean, calibration, a soft token;
BERT-tiny: reduce max, calibration, WordPiece words; the two soft
verbalizers; prefix tuning with a soft verbalizer, its prefixes drawn by
check_tune.Setup in place of the LoRA tensors) both executables start from check_tune.Setup's backbone and
LoRA tensors and run the same command (data, seed, held-out split):
 - one step's --dump-grads: every gradient within 1e-4 of the largest
   host value (check_tune's tolerance against torch);
 - STEPS AdamW steps: every logged loss within 1e-4 relative, the final
   held-out loss within 1e-4 relative, the same accuracy and examples.
   The device GEMMs are strict fp32 (no TF32) and only summation orders
   differ from the host's (~1e-6 relative on one forward, as the infer and
   train checks measure); the tuning kernels add in the host's order and the
   verbalizer is the host's double arithmetic (cuda_tuning_gpu_test: 1e-6).
   AdamW's normalised updates can turn a rounding-level gradient difference
   into lr-sized steps of near-zero gradients, which moves a nano model's
   loss by far less than 1e-4 over a few steps (check_cuda_train.py's
   argument);
 - the device run resumed: STEPS/2 steps saved, then --resume to STEPS
   logs the straight device run's last losses within 1e-4 (the device
   kernels are deterministic, so they should be equal).
"""

import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_train  # noqa: E402
import check_tune  # noqa: E402
import harness  # noqa: E402

SKIPPED = 77
STEPS = 6
TOL = 1e-4


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-30)


def run(fails, s, label, exe, args):
    cmd = [exe, "--tokenizer", s.tokenizer, "--seed", str(check_tune.SEED)]
    if "host" in label:
        cmd += check_tune.THREADS  # the cuda executable refuses --threads
    p = harness.run(cmd + args)
    if p.returncode != 0:
        fails.add("%s: exit %s\n%s" % (label, p.returncode, harness.tail(p.stderr)))
        return None
    return p


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    if os.path.exists(path + ".jsonl"):
        os.remove(path + ".jsonl")
    return path, path + ".jsonl"


def check_job(fails, name, cuda_dir, host_dir, workdir):
    s = check_tune.Setup(name, host_dir, workdir)
    exes = {"cuda": os.path.join(cuda_dir, s.job["exe"]), "host": s.exe}
    label_first = s.job.get("label_first", False)
    data, val = os.path.join(s.dir, "train.tsv"), os.path.join(s.dir, "val.tsv")
    check_tune.write_tsv(data, check_tune.learnable(32, 1), label_first)
    check_tune.write_tsv(val, check_tune.learnable(12, 2), label_first)

    # One step's gradients.
    grads = {}
    for label, exe in exes.items():
        out, log = fresh(os.path.join(s.dir, "grads-" + label))
        if run(fails, s, "%s %s one step" % (name, label), exe,
               ["--load", s.start, "--data", data, "--val-fraction", "0", "--steps", "1",
                "--lr", "0", "--dump-grads", out + ".safetensors", "--log", log]):
            grads[label] = check_train.load_safetensors(out + ".safetensors")
    if len(grads) == 2:
        for tensor, ref in sorted(grads["host"].items()):
            if tensor not in grads["cuda"]:
                fails.add("%s: the cuda --dump-grads has no %s" % (name, tensor))
                continue
            e = harness.rel_err(grads["cuda"][tensor], ref)
            print("  %s grad %-24s rel err %.2e" % (name, tensor, e))
            fails.check(e <= TOL, "%s: gradient of %s: cuda vs host rel err %.2e" %
                        (name, tensor, e))

    # STEPS steps and the held-out metrics.
    losses, metrics = {}, {}
    for label, exe in exes.items():
        save, log = fresh(os.path.join(s.dir, "run-" + label))
        p = run(fails, s, "%s %s %d steps" % (name, label, STEPS), exe,
                ["--load", s.start, "--data", data, "--val", val, "--steps", str(STEPS),
                 "--save", save, "--log", log])
        if p:
            losses[label] = [r["loss"] for r in check_train.logged(log) if "loss" in r]
            metrics[label] = check_tune.metrics(p.stdout)
    if len(losses) != 2:
        return
    ours, ref = losses["cuda"], losses["host"]
    print("%s losses: cuda %s\n%s        host %s" % (name, ours, " " * len(name), ref))
    if fails.check(len(ours) == len(ref) == STEPS, "%s: logged %d (cuda) and %d (host) losses, "
                   "expected %d" % (name, len(ours), len(ref), STEPS)):
        worst = max(rel(a, b) for a, b in zip(ours, ref))
        print("%s: max relative loss difference %.2e" % (name, worst))
        fails.check(worst <= TOL, "%s: the losses differ by %.2e > %.0e" % (name, worst, TOL))
    mc, mh = metrics["cuda"], metrics["host"]
    print("%s held-out: cuda %s\n           host %s" % (name, mc, mh))
    fails.check("loss" in mc and "loss" in mh and rel(mc["loss"], mh["loss"]) <= TOL,
                "%s: held-out loss cuda %s, host %s" % (name, mc.get("loss"), mh.get("loss")))
    for key in ("accuracy", "examples", "majority_accuracy"):
        fails.check(mc.get(key) == mh.get(key), "%s: held-out %s cuda %s, host %s" %
                    (name, key, mc.get(key), mh.get(key)))

    # A resumed device run.
    save, log = fresh(os.path.join(s.dir, "resumed-cuda"))
    half = STEPS // 2
    if not run(fails, s, name + " cuda, %d steps" % half, exes["cuda"],
               ["--load", s.start, "--data", data, "--val", val, "--steps", str(half),
                "--save", save, "--log", log]):
        return
    if not run(fails, s, name + " cuda, resumed", exes["cuda"],
               ["--load", s.start, "--data", data, "--val", val, "--steps", str(STEPS),
                "--save", save, "--log", log, "--resume"]):
        return
    resumed = [r["loss"] for r in check_train.logged(log) if "loss" in r]
    if fails.check(len(resumed) == STEPS, "%s: the resumed run logged %d losses, expected %d" %
                   (name, len(resumed), STEPS)):
        worst = max(rel(a, b) for a, b in zip(resumed[half:], ours[half:]))
        print("%s: resumed vs straight: max relative difference %.2e" % (name, worst))
        fails.check(worst <= TOL, "%s: the resumed device run differs by %.2e" % (name, worst))


def main(argv):
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    probe, cuda_dir, host_dir, workdir = (os.path.abspath(a) for a in argv[1:5])
    p = harness.run([probe], quiet=True)
    if p.returncode != 0:
        print("skipped: no usable GPU: %s" % harness.tail(p.stderr + p.stdout, 3))
        return SKIPPED
    fails = harness.Failures("check_cuda_tune")
    for name in ("gpt2", "bert", "gpt2-soft", "bert-soft", "gpt2-prefix"):
        check_job(fails, name, cuda_dir, host_dir, os.path.join(workdir, "cuda-tune"))
    return fails.exit_code()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
