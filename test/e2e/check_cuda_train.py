#!/usr/bin/env python3
"""The --target=cuda train executable against the host executable (ctest
label cuda-gpu; test/runtime/cuda/CMakeLists.txt).

  check_cuda_train.py PROBE CUDA_EXE HOST_EXE CONFIG WORKDIR [CUDA_Z2_EXE [CUDA_Z3_EXE]]
                      [--infer CUDA_INFER_EXE HOST_INFER_EXE]

Without a GPU (PROBE, bmb-cuda-probe, fails) it prints why and exits 77,
which ctest reports as Skipped. With one, both executables train STEPS
AdamW steps from the same Hugging Face weights on the same token file in
sequential order (check_train.Setup, a data seed of its own), logging the
loss of every step and saving a checkpoint, then:
 - the logged losses agree: |cuda - host| <= 1e-4 * |host| at every step.
   The device's GEMMs are strict fp32 (no TF32) and only summation orders
   differ from the host's (~1e-6 relative on one forward, as the infer check
   and the kernel tests measure); AdamW's normalized updates can turn
   near-zero gradients' rounding into lr-sized weight differences (GPT-2's
   key bias), which move the loss of later steps by far less than 1e-4 over
   a few steps of a nano model;
 - the checkpoint the device saved (params copied back from the GPU) gives
   the host executable's --eval-only the loss the host's own checkpoint
   gives, within the same 1e-4;
 - the device run resumed: 3 steps saved, then --resume to STEPS (params and
   optimizer state copied in from the checkpoint) logs the straight device
   run's losses for the last steps, within 1e-4 (the device's kernels are
   deterministic, so they should be equal);
 - with two GPUs or more (nvidia-smi -L), `mpirun -np 2` of the device
   executable (NCCL, one GPU per rank by $OMPI_COMM_WORLD_LOCAL_RANK) logs
   the losses of the host executable with --accum 2 in one process (the
   same global batch; docs/distributed.md), within 1e-4: NCCL sums the two
   ranks' gradients in its own order, a rounding-level difference.
   With CUDA_Z2_EXE (the same job with zero = 2: each rank's gradients
   reduce-scattered layer by layer into its partition, NCCL's grouped
   ncclReduce), `mpirun -np 2` of it logs the same host losses within the
   same 1e-4 (the sums differ from the host's in order only). So does
   CUDA_Z3_EXE (zero = 3: the params partitioned too, each layer's gathered
   by NCCL's grouped ncclBroadcast into the staging when the forward and the
   backward reach it; a gather only copies, so it adds no rounding to
   zero = 2's), and its checkpoint (gathered whole for the save) evaluates on
   the host to the loss of the zero = 0 two-rank run's checkpoint within
   1e-4.
   With fewer GPUs this part says so and is left out.
 - with --infer (the infer job of the same delta: prefix tuning's, whose
   prefixes sit in the first rows of each layer's KV cache), both infer
   executables on the host's trained checkpoint, greedy, INFER_STEPS
   tokens: the same ids, and the prefill's and every decode step's dumped
   logits within 1e-4 (max|cuda - host| / max|host|, check_cuda_infer.py's
   tolerance: only summation orders differ; a greedy near-tie within that
   could flip an id, but prompt and weights are fixed, so a pass is
   reproducible); then the device's decode steps
   as a CUDA graph (the default: the position and the prefix's gate read on
   the device) against $BMB_CUDA_GRAPHS=0 (the same kernels launched one by
   one): ids and logits bitwise equal, and no note of a fallback.
"""

import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_train  # noqa: E402
import configs  # noqa: E402
import harness  # noqa: E402

SKIPPED = 77
STEPS = 5
TOL = 1e-4
DATA_SEED = 11  # apart from check_train's data files
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def train(fails, s, label, exe, save, log, steps=STEPS, resume=False, extra=(), ranks=0):
    start = ["--resume"] if resume else ["--load", s.init]
    cmd = [exe] + start + ["--data", s.data, "--order", "sequential", "--val-fraction", "0",
                           "--steps", str(steps), "--save", save, "--log", log] + list(extra)
    if ranks:
        cmd = ["mpirun", "-np", str(ranks)] + cmd
        print("$ " + " ".join(cmd), flush=True)
        p = subprocess.run(cmd, capture_output=True, timeout=600,
                           env=dict(os.environ, **MPI_ENV))
    else:
        p = harness.run(cmd)
    if p.returncode != 0:
        fails.add("%s: exit %s\n%s" % (label, p.returncode, harness.tail(p.stderr)))
        return None
    return [r["loss"] for r in check_train.logged(log)]


def eval_loss(fails, s, label, host_exe, checkpoint):
    p = harness.run([host_exe, "--eval-only", "--load", checkpoint, "--data", s.data,
                     "--eval-split", "all"])
    if p.returncode != 0:
        fails.add("%s: exit %s\n%s" % (label, p.returncode, harness.tail(p.stderr)))
        return None
    for line in harness.text(p.stdout).splitlines():
        if line.startswith("loss "):
            return float(line.split()[1])
    fails.add("%s: no loss line in %r" % (label, harness.text(p.stdout)))
    return None


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-30)


def main(argv):
    infer = None
    if "--infer" in argv:
        at = argv.index("--infer")
        if len(argv) < at + 3:
            print(__doc__, file=sys.stderr)
            return 2
        infer = tuple(os.path.abspath(a) for a in argv[at + 1:at + 3])
        argv = argv[:at] + argv[at + 3:]
    if len(argv) not in (6, 7, 8):
        print(__doc__, file=sys.stderr)
        return 2
    probe, cuda_exe, host_exe = (os.path.abspath(a) for a in argv[1:4])
    config, workdir = argv[4], os.path.abspath(argv[5])
    z2_exe = os.path.abspath(argv[6]) if len(argv) >= 7 else None
    z3_exe = os.path.abspath(argv[7]) if len(argv) == 8 else None
    p = harness.run([probe], quiet=True)
    if p.returncode != 0:
        print("skipped: no usable GPU: %s" % harness.tail(p.stderr + p.stdout, 3))
        return SKIPPED
    c = configs.get(config)
    fails = harness.Failures("check_cuda_train %s" % c["name"])
    t = check_train.TRAIN[config]
    s = check_train.Setup(config, workdir, (STEPS + 2) * t["batch"] * t["seq"] + t["seq"] + 1,
                          seed=DATA_SEED)
    runs = {}
    for label, exe in (("cuda", cuda_exe), ("host", host_exe)):
        save, log = fresh(s, "cuda-vs-host-" + label)
        runs[label] = (save, train(fails, s, label + " training", exe, save, log))
    (cuda_save, ours), (host_save, ref) = runs["cuda"], runs["host"]
    if ours is None or ref is None:
        return fails.exit_code()
    print("losses: cuda %s\n        host %s" % (ours, ref))
    if fails.check(len(ours) == len(ref) == STEPS, "logged %d (cuda) and %d (host) losses, "
                   "expected %d" % (len(ours), len(ref), STEPS)):
        worst = max(rel(a, b) for a, b in zip(ours, ref))
        print("max relative loss difference over %d steps: %.2e" % (STEPS, worst))
        fails.check(worst <= TOL, "the losses differ by %.2e > %.0e relative" % (worst, TOL))
    ours_eval = eval_loss(fails, s, "eval of the cuda checkpoint", host_exe,
                          check_train.latest(cuda_save))
    ref_eval = eval_loss(fails, s, "eval of the host checkpoint", host_exe,
                         check_train.latest(host_save))
    if ours_eval is not None and ref_eval is not None:
        print("eval loss of the saved weights: cuda %.9g, host %.9g" % (ours_eval, ref_eval))
        fails.check(rel(ours_eval, ref_eval) <= TOL, "the saved weights evaluate to %.9g "
                    "(cuda) and %.9g (host)" % (ours_eval, ref_eval))
    check_resume(fails, s, cuda_exe, ours)
    check_two_ranks(fails, s, cuda_exe, host_exe, z2_exe, z3_exe)
    if infer and ref is not None:
        check_infer_job(fails, s, infer, check_train.latest(host_save))
    return fails.exit_code()


INFER_STEPS = 6


def infer_run(fails, s, label, exe, checkpoint, graphs="1"):
    """Greedy ids and the concatenated dumped logits of prefill and decode
    steps, and stderr (or None)."""
    out = os.path.join(s.dir, "infer-dump-" + label.replace(" ", "-"))
    shutil.rmtree(out, ignore_errors=True)
    cmd = [exe, "--load", checkpoint, "--prompt-ids", "1,2,3,4,5", "--max-tokens",
           str(INFER_STEPS), "--sampling", "greedy", "--ignore-eos", "--output", "ids",
           "--dump", out]
    print("$ BMB_CUDA_GRAPHS=%s %s" % (graphs, " ".join(cmd)), flush=True)
    p = subprocess.run(cmd, capture_output=True, timeout=600,
                       env=dict(os.environ, BMB_CUDA_GRAPHS=graphs))
    if p.returncode != 0:
        fails.add("%s: exit %s\n%s" % (label, p.returncode, harness.tail(p.stderr)))
        return None
    logits = np.concatenate([np.load(os.path.join(out, "step%04d_logits.npy" % k)).reshape(-1)
                             for k in range(INFER_STEPS)])
    return harness.text(p.stdout).split(), logits, harness.text(p.stderr)


def check_infer_job(fails, s, infer, checkpoint):
    cuda_infer, host_infer = infer
    ours = infer_run(fails, s, "cuda infer", cuda_infer, checkpoint)
    ref = infer_run(fails, s, "host infer", host_infer, checkpoint)
    if ours is None or ref is None:
        return
    err = float(np.max(np.abs(ours[1] - ref[1])) / max(np.max(np.abs(ref[1])), 1e-30))
    print("infer (prefill and %d decode steps): ids cuda %s, host %s; logits rel %.2e"
          % (INFER_STEPS - 1, ours[0], ref[0], err))
    fails.check(ours[0] == ref[0], "infer ids: cuda %s, host %s" % (ours[0], ref[0]))
    fails.check(err <= TOL, "infer logits: cuda vs host rel %.2e > %.0e" % (err, TOL))
    steps = infer_run(fails, s, "cuda infer launch by launch", cuda_infer, checkpoint, "0")
    if steps is None:
        return
    fails.check(ours[0] == steps[0] and np.array_equal(ours[1], steps[1]),
                "infer: the decode graph's ids or logits differ from launch by launch")
    fails.check("launch by launch" not in ours[2] and "host positions" not in ours[2],
                "infer: the decode graph fell back: %s" % harness.tail(ours[2]))


def gpu_count():
    try:
        p = subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for l in harness.text(p.stdout).splitlines() if l.startswith("GPU "))


def fresh(s, name):
    save = os.path.join(s.dir, name)
    shutil.rmtree(save, ignore_errors=True)
    if os.path.exists(save + ".jsonl"):
        os.remove(save + ".jsonl")
    return save, save + ".jsonl"


def check_two_ranks(fails, s, cuda_exe, host_exe, z2_exe, z3_exe):
    n = gpu_count()
    if n < 2:
        print("two ranks: left out (nvidia-smi -L lists %d GPU%s)" % (n, "" if n == 1 else "s"))
        return
    save, log = fresh(s, "host-accum-2")
    ref = train(fails, s, "host, --accum 2", host_exe, save, log, extra=["--accum", "2"])
    runs = [("zero = 0", cuda_exe)] + ([("zero = 2", z2_exe)] if z2_exe else []) + \
        ([("zero = 3", z3_exe)] if z3_exe else [])
    saves = {}
    for label, exe in runs:
        save, log = fresh(s, "cuda-2-ranks-" + label.replace(" = ", ""))
        ours = train(fails, s, "cuda %s, mpirun -np 2" % label, exe, save, log, ranks=2)
        saves[label] = save if ours is not None else None
        if ours is None or ref is None:
            continue
        if not fails.check(len(ours) == len(ref) == STEPS, "two ranks (%s): %d and %d losses, "
                           "expected %d" % (label, len(ours), len(ref), STEPS)):
            continue
        worst = max(rel(a, b) for a, b in zip(ours, ref))
        print("two ranks (%s) vs --accum 2: max relative loss difference %.2e" % (label, worst))
        fails.check(worst <= TOL, "two ranks on NCCL (%s) differ from one host process with "
                    "--accum 2 by %.2e > %.0e" % (label, worst, TOL))
    if saves.get("zero = 3") and saves.get("zero = 0"):
        # The zero = 3 ranks gathered their partitions into whole params for
        # the save: the host evaluates the file as it does zero = 0's.
        z3 = eval_loss(fails, s, "eval of the zero = 3 checkpoint", host_exe,
                       check_train.latest(saves["zero = 3"]))
        z0 = eval_loss(fails, s, "eval of the zero = 0 two-rank checkpoint", host_exe,
                       check_train.latest(saves["zero = 0"]))
        if z3 is not None and z0 is not None:
            print("two ranks: eval loss of the saved weights: zero = 3 %.9g, zero = 0 %.9g"
                  % (z3, z0))
            fails.check(rel(z3, z0) <= TOL, "the zero = 3 checkpoint evaluates to %.9g, the "
                        "zero = 0 one to %.9g" % (z3, z0))


def check_resume(fails, s, cuda_exe, straight):
    save, log = fresh(s, "cuda-resumed")
    if train(fails, s, "cuda, 3 steps", cuda_exe, save, log, steps=3) is None:
        return
    resumed = train(fails, s, "cuda, resumed to %d" % STEPS, cuda_exe, save, log, resume=True)
    if resumed is None or not fails.check(len(resumed) == STEPS, "the resumed run logged %d "
                                          "losses, expected %d" % (len(resumed), STEPS)):
        return
    worst = max(rel(a, b) for a, b in zip(resumed[3:], straight[3:]))
    print("resumed vs straight (steps 4..%d): max relative difference %.2e" % (STEPS, worst))
    fails.check(worst <= TOL, "the resumed device run's losses differ from the straight "
                "run's by %.2e > %.0e" % (worst, TOL))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
