#!/usr/bin/env python3
"""Training on several ranks (mpirun) against one process.

usage: check_dist.py MODE EXEDIR WORKDIR

EXEDIR holds the executables of test/e2e/dist.bmb's jobs (JOBS below): GPT-2
nano with residual dropout (so the micro-batch keys of the masks matter),
plain data parallelism (dist_z0), ZeRO-1 (dist_z1), ZeRO-2 (dist_z2) and
ZeRO-3 (dist_z3), each
also with every Block checkpointed (_ckpt: recomputed in backward). Every run starts
from the same fresh parameters (--seed), reads a token file of uniform
random ids written here, runs with --deterministic and one thread per rank
(2 cores: 4 ranks must fit), and logs every step's loss with 17 digits.

  bitwise  for N in 1, 2, 4 and each job: `mpirun -np N` with one
           micro-batch per rank gives, for 20 steps, the same losses (every
           step, exactly) and the same final model.safetensors (bytes) as
           one process running dist_z0 with --accum N, which accumulates the
           same micro-batches in the same order. Also: N = 2 with two
           micro-batches per rank against one process with --accum 4 agrees
           to 1e-5 relative (the sums are grouped differently: per rank,
           then over ranks; only one micro-batch per rank is bitwise).
           zero = 0 on several ranks with one micro-batch each overlaps
           its gradient all-reduce with the backward (the banner says so;
           the bits above are that path's), and --no-overlap gives the
           same bits from the optimizer step's buckets; with two deterministic
           micro-batches per rank it reduces at the optimizer step, with
           the bits of ZeRO-1's run of the same. Every job, checkpointed
           or not, runs at N = 1, 2 and 4. ZeRO-2 adds each micro-batch's reduced
           unit into the partition: one process of dist_z2 with --accum 2
           is bitwise dist_z0's, and 2 ranks x 2 micro-batches agree with
           --accum 4 to 1e-5 relative (grouped per micro-batch over the
           ranks first). ZeRO-3 gathers params by copying, so dist_z3 is
           bitwise dist_z2 (both are the reference's bits, at N = 1, 2, 4,
           with dist_z3_ckpt, and over TCP at N = 2), with its
           look-ahead (the next layer gathered into the other slot) and
           without it (--no-overlap). ZeRO-2's reduce-scatters one layer
           ahead (the default) give the bits of --no-overlap (each waited
           for at once): dist_z2 at N = 2, and dist_z2_deep (4 layers, so
           the two gradient slots are reused inside the loop) at N = 2
           with one and with two micro-batches per rank; dist_z3_deep (the
           same under ZeRO-3, both look-aheads) at N = 2.
  resize   a ZeRO-1 run on 2 ranks saved at step 10 (one optimizer file per
           rank) resumed by one process (--accum 2 implied), the same for
           ZeRO-2 and ZeRO-3 (their files are ZeRO-1's; ZeRO-3's model
           file is gathered whole), ZeRO-3 on 2 ranks resumed under ZeRO-1
           on 2 ranks, and a
           one-process run saved at step 10 (one whole optimizer file)
           resumed on 2 ranks under ZeRO-1: both end with the losses and
           weights of 20 straight steps of one process with --accum 2.
           ZeRO-3 on 2 ranks with --resume and no checkpoint yet starts
           afresh, bit for bit (the fresh params go straight into the
           partitions). ZeRO-3 ranks read only their partitions of the
           model file: --load of a truncated one fails with its message,
           and a newest checkpoint whose tied lm_head.weight differs where
           only rank 0 reads it is skipped by both ranks (rank 1: "another
           rank could not load it"), resuming the previous one bit for bit.
           A half-written newest checkpoint (a partition file cut short) is
           skipped with a warning and the previous one is used. Partition
           files of the old param-major group are refused at --resume.
  offload  offload = optimizer (dist_z0_off, dist_z1_off, dist_z2_off,
           dist_z3_off: AdamW's
           state and update in host memory) bit for bit without it: one
           process with --accum 2 against dist_z0 (losses, model and
           optimizer.safetensors bytes), 2 ranks of each against one
           process of dist_z0 --accum 2; the banner says it saves no memory
           here. Resume across the two: 10 offloaded steps on 2 ranks
           (ZeRO-1, per-rank optimizer files) resumed by one process
           without offload, and 10 plain steps resumed offloaded on 2 ranks
           under ZeRO-2, both equal to 20 straight steps. A LoRA under
           ZeRO-1 on 2 ranks (rank 1's partition empty) equals one process.
  failure  a rank that stops (SIGSTOP) makes the others fail within
           --comm-timeout with a message naming the collective; a rank that
           is killed ends the job with a non-zero status; neither hangs.
           SIGTERM to mpirun stops every rank after the same step with a
           complete checkpoint, which resumes.
           --dump-grads under mpirun, and a resume whose global batch
           cannot be kept, are usage errors (exit 2).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
import tokfile  # noqa: E402

JOBS = ["dist_z0", "dist_z1", "dist_z0_ckpt", "dist_z1_ckpt", "dist_z2", "dist_z2_ckpt",
        "dist_z3", "dist_z3_ckpt"]
# Every job runs at N = 1, 2 and 4: the whole grid of world sizes,
# ZeRO stages and checkpointing on and off (about 1 s per nano run).
OVERLAP = "gradient all-reduce overlapped with the backward"
AHEAD = "each layer's gradient reduce-scatter overlapped with the next layer's backward"
VOCAB = 512
STEPS = 20
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMP_NUM_THREADS": "1"}
COMMON = ["--seed", "5", "--threads", "1", "--deterministic", "--val-fraction", "0",
          "--order", "random"]


class Dist:
    def __init__(self, exedir, workdir):
        self.exedir = exedir
        self.dir = os.path.join(workdir, "dist")
        os.makedirs(self.dir, exist_ok=True)
        self.data = os.path.join(self.dir, "data.tok")
        if not os.path.exists(self.data):
            import random
            r = random.Random(11)
            tokfile.write(self.data, [r.randrange(VOCAB) for _ in range(60000)], VOCAB)
        self.env = dict(os.environ, **MPI_ENV)
        self.f = None

    def exe(self, job):
        return os.path.join(self.exedir, job)

    def run(self, name, job, ranks, *args, timeout=300, expect=0):
        """Runs `job` (under mpirun when ranks > 0) with COMMON flags, --save
        and --log in a fresh directory `name`; returns (losses, dir)."""
        out = os.path.join(self.dir, name)
        if not any(a == "--resume" for a in args):
            shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out, exist_ok=True)
        log = os.path.join(out, "log.jsonl")
        cmd = [self.exe(job), "--data", self.data, "--save", os.path.join(out, "ckpt"),
               "--log", log] + COMMON + list(args)
        if ranks:
            cmd = ["mpirun", "-np", str(ranks)] + cmd
        print("$ " + " ".join(cmd), flush=True)
        p = subprocess.run(cmd, capture_output=True, env=self.env, timeout=timeout)
        if p.returncode != expect:
            self.f.add("%s: exit %s, expected %d\n%s" % (name, p.returncode, expect,
                                                          harness.tail(p.stderr, 20)))
            return None, out, p
        losses = [json.loads(l)["loss"] for l in open(log)] if os.path.exists(log) else []
        return losses, out, p

    def run_tcp(self, name, job, ranks, *args, timeout=300):
        """As run(), the ranks started by hand with torchrun-style variables
        (the TCP backend) instead of mpirun; returns (losses, dir)."""
        import socket
        with socket.socket() as s:  # a free port for rank 0 to listen on
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        out = os.path.join(self.dir, name)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        log = os.path.join(out, "log.jsonl")
        procs = []
        for r in range(ranks):
            env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(ranks), MASTER_ADDR="127.0.0.1",
                       MASTER_PORT=str(port), OMP_NUM_THREADS="1")
            cmd = [self.exe(job), "--data", self.data, "--save", os.path.join(out, "ckpt"),
                   "--log", log] + COMMON + list(args)
            print("$ RANK=%d WORLD_SIZE=%d MASTER_PORT=%d " % (r, ranks, port) + " ".join(cmd),
                  flush=True)
            procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE))
        failed = False
        for r, p in enumerate(procs):
            try:
                _, err = p.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                _, err = p.communicate()
            if p.returncode != 0:
                failed = True
                self.f.add("%s: rank %d exit %s\n%s" % (name, r, p.returncode,
                                                       harness.tail(err, 10)))
        if failed:
            return None, out
        return [json.loads(l)["loss"] for l in open(log)], out

    def model(self, out, step=STEPS):
        path = os.path.join(out, "ckpt", "step-%07d" % step, "model.safetensors")
        with open(path, "rb") as f:
            return f.read()

    def same(self, what, ref, got):
        """Losses and final weights bit for bit."""
        (rl, rout), (gl, gout) = ref, got
        if rl is None or gl is None:
            return
        self.f.check(len(gl) == len(rl) == STEPS and gl == rl,
                     "%s: losses differ from the reference\n  ref %s\n  got %s"
                     % (what, rl[-3:], gl[-3:]))
        self.f.check(self.model(gout) == self.model(rout),
                     "%s: final weights differ from the reference (bytes)" % what)
        if gl == rl:
            print("%s: %d losses and the weights identical (last loss %.17g)"
                  % (what, len(gl), gl[-1]))


def bitwise(d):
    for n in (1, 2, 4):
        losses, out, _ = d.run("ref-accum%d" % n, "dist_z0", 0, "--accum", str(n),
                               "--steps", str(STEPS))
        ref = (losses, out)
        for job in JOBS:
            l, o, p = d.run("%s-np%d" % (job, n), job, n, "--accum", "1", "--steps", str(STEPS))
            d.same("%s on %d rank(s) vs one process --accum %d" % (job, n, n), ref, (l, o))
            # zero = 0 on several ranks sends each layer's gradients from the
            # backward (docs/distributed.md, "Overlap"); the bits above are its.
            if p is not None and n > 1:
                overlapped = OVERLAP in harness.text(p.stderr)  # the banner (with --log)
                d.f.check(overlapped == job.startswith("dist_z0"),
                          "%s on %d ranks: the banner %s '%s'" %
                          (job, n, "lacks" if not overlapped else "has", OVERLAP))
                # ZeRO-2 and 3 keep each layer's reduce-scatter in flight.
                ahead = AHEAD in harness.text(p.stderr)
                d.f.check(ahead == job.startswith(("dist_z2", "dist_z3")),
                          "%s on %d ranks: the banner %s '%s'" %
                          (job, n, "lacks" if not ahead else "has", AHEAD))
            # ZeRO-3 on 2 ranks: the params are the partition (81920 of the
            # 136960 elements, 0.31 MiB) plus the staging (the embeddings and
            # two layer slots, 0.52 MiB), the gradients the partition and
            # their staging (the same layout: two slots, one for the layer
            # whose reduce-scatter is in flight).
            if p is not None and job == "dist_z3" and n == 2:
                banner = harness.text(p.stderr)
                want = ("memory: params 0.31 MiB (+ 0.52 MiB staging), "
                        "grads 0.31 MiB (+ 0.52 MiB staging)")
                d.f.check(want in banner and "zero = 3: this rank holds the params and "
                          "gradients of and updates [0, 81920)" in banner,
                          "dist_z3 on 2 ranks: the banner lacks '%s':\n%s"
                          % (want, harness.tail(banner)))
    # --info names ZeRO-3's staging (the embeddings, and two layer slots for
    # the params and for the gradients).
    p = subprocess.run([d.exe("dist_z3"), "--info"], capture_output=True, env=d.env, timeout=60)
    want = ("zero = 3: on N ranks each holds 1/N of the trainable params and grads, plus "
            "0.52 MiB of param staging and 0.52 MiB of gradient staging")
    d.f.check(p.returncode == 0 and want in harness.text(p.stdout),
              "dist_z3 --info lacks '%s':\n%s" % (want, harness.tail(p.stdout)))
    # A LoRA under ZeRO-1: the group fits in rank 0's partition (the other
    # ranks' are empty), the norm's all-reduce must still be collective.
    ref = d.run("lora-ref-accum2", "dist_lora_z0", 0, "--accum", "2", "--steps", str(STEPS))[:2]
    for job in ("dist_lora_z0", "dist_lora_z1"):
        l, o, _ = d.run("%s-np2" % job, job, 2, "--accum", "1", "--steps", str(STEPS),
                        "--comm-timeout", "30")
        d.same("%s on 2 ranks vs one process --accum 2" % job, ref, (l, o))
    # --no-overlap: the optimizer step's buckets instead, the same bits.
    ref2 = d.run("ref-accum2", "dist_z0", 0, "--accum", "2", "--steps", str(STEPS))[:2]
    l, o, p = d.run("dist_z0-np2-no-overlap", "dist_z0", 2, "--accum", "1", "--no-overlap",
                    "--steps", str(STEPS))
    d.same("dist_z0 --no-overlap on 2 ranks vs one process --accum 2", ref2, (l, o))
    if p is not None:
        d.f.check(OVERLAP not in harness.text(p.stderr), "--no-overlap still overlaps")
    # ZeRO-3 without the look-ahead: every layer gathered when it starts.
    l, o, _ = d.run("dist_z3-np2-no-overlap", "dist_z3", 2, "--accum", "1", "--no-overlap",
                    "--steps", str(STEPS))
    d.same("dist_z3 --no-overlap on 2 ranks vs one process --accum 2", ref2, (l, o))
    # ZeRO-2 waiting for each layer's reduce-scatter at once instead of
    # during the next layer's backward: the same bits.
    l, o, p = d.run("dist_z2-np2-no-overlap", "dist_z2", 2, "--accum", "1", "--no-overlap",
                    "--steps", str(STEPS))
    d.same("dist_z2 --no-overlap on 2 ranks vs one process --accum 2", ref2, (l, o))
    if p is not None:
        d.f.check(AHEAD not in harness.text(p.stderr), "dist_z2 --no-overlap still overlaps")
    # 4 layers: layers 1 and 0 write the slots whose reduce-scatters
    # (layers 3 and 2) are finished at the start of their iterations. One
    # process of ZeRO-2 without the look-ahead is the reference (the path
    # dist_z2 --accum 2 is dist_z0's bits on); 2 ranks with one micro-batch
    # each, and with two (several adds into the partition per step, the
    # look-ahead against --no-overlap), give the same bits.
    deep = d.run("deep-np1-accum2", "dist_z2_deep", 0, "--accum", "2", "--no-overlap",
                 "--steps", str(STEPS))[:2]
    l, o, _ = d.run("deep-np2", "dist_z2_deep", 2, "--accum", "1", "--steps", str(STEPS))
    d.same("dist_z2_deep on 2 ranks vs one process --accum 2 --no-overlap", deep, (l, o))
    l, o, _ = d.run("deep-z3-np2", "dist_z3_deep", 2, "--accum", "1", "--steps", str(STEPS))
    d.same("dist_z3_deep on 2 ranks vs dist_z2_deep, one process --accum 2 --no-overlap",
           deep, (l, o))
    deep4 = d.run("deep-np2-accum2-no-overlap", "dist_z2_deep", 2, "--accum", "2",
                  "--no-overlap", "--steps", str(STEPS))[:2]
    l, o, _ = d.run("deep-np2-accum2", "dist_z2_deep", 2, "--accum", "2", "--steps", str(STEPS))
    d.same("dist_z2_deep, 2 ranks x accum 2 vs the same with --no-overlap", deep4, (l, o))
    # torchrun-style launch (the TCP backend): one process per rank.
    ref = d.run("ref-accum2b", "dist_z0", 0, "--accum", "2", "--steps", str(STEPS))[:2]
    l, o = d.run_tcp("dist_z1-tcp2", "dist_z1", 2, "--accum", "1", "--steps", str(STEPS))
    d.same("dist_z1 on 2 ranks over TCP (RANK/WORLD_SIZE) vs one process --accum 2", ref, (l, o))
    l, o = d.run_tcp("dist_z2-tcp2", "dist_z2", 2, "--accum", "1", "--steps", str(STEPS))
    d.same("dist_z2 on 2 ranks over TCP (RANK/WORLD_SIZE) vs one process --accum 2", ref, (l, o))
    l, o = d.run_tcp("dist_z3-tcp2", "dist_z3", 2, "--accum", "1", "--steps", str(STEPS))
    d.same("dist_z3 on 2 ranks over TCP (RANK/WORLD_SIZE) vs one process --accum 2", ref, (l, o))
    # Two micro-batches per rank: the same sum grouped per rank first. With
    # --deterministic the app folds micro-batches after the backward, so
    # zero = 0 does not overlap: the optimizer step's buckets reduce (the
    # same bits as ZeRO-1's reduce-scatter of the same sums).
    ref, _, _ = d.run("ref-accum4", "dist_z0", 0, "--accum", "4", "--steps", str(STEPS))
    got, gout, _ = d.run("dist_z1-np2-accum2", "dist_z1", 2, "--accum", "2",
                         "--steps", str(STEPS))
    if ref and got:
        worst = max(abs(a - b) / abs(a) for a, b in zip(ref, got))
        print("2 ranks x 2 micro-batches vs --accum 4: worst loss difference %.2e relative" % worst)
        d.f.check(worst <= 1e-5, "2 ranks x accum 2 drifted from --accum 4: %.2e" % worst)
    z0, z0out, p = d.run("dist_z0-np2-accum2", "dist_z0", 2, "--accum", "2",
                         "--steps", str(STEPS))
    if p is not None:
        d.f.check(OVERLAP not in harness.text(p.stderr),
                  "dist_z0, 2 ranks x deterministic accum 2 claims to overlap")
    d.same("dist_z0 (buckets at the optimizer step) vs dist_z1, 2 ranks x accum 2",
           (got, gout), (z0, z0out))
    # ZeRO-2 with several micro-batches: each one's reduced units are added
    # into the partition, ((0 + S0) + S1) with S_m the rank-order sum of
    # micro-batch m: one process is bitwise the fold of dist_z0; 2 ranks
    # group per micro-batch first, equal to rounding.
    l, o, _ = d.run("dist_z2-np1-accum2", "dist_z2", 0, "--accum", "2", "--steps", str(STEPS))
    d.same("dist_z2, one process --accum 2 vs dist_z0 --accum 2", ref2, (l, o))
    z2, _, _ = d.run("dist_z2-np2-accum2", "dist_z2", 2, "--accum", "2", "--steps", str(STEPS))
    if ref and z2:
        worst = max(abs(a - b) / abs(a) for a, b in zip(ref, z2))
        print("ZeRO-2, 2 ranks x 2 micro-batches vs --accum 4: worst loss difference %.2e "
              "relative" % worst)
        d.f.check(worst <= 1e-5, "ZeRO-2 2 ranks x accum 2 drifted from --accum 4: %.2e" % worst)


def resize(d):
    ref = d.run("ref-accum2", "dist_z0", 0, "--accum", "2", "--steps", str(STEPS))[:2]
    # ZeRO-1 on 2 ranks -> one process.
    l1, o1, _ = d.run("z1-np2-to-1", "dist_z1", 2, "--accum", "1", "--steps", "10")
    files = sorted(os.listdir(os.path.join(o1, "ckpt", "step-0000010")))
    print("2-rank ZeRO-1 checkpoint: " + ", ".join(files))
    d.f.check("optimizer-00000-of-00002.safetensors" in files and
              "optimizer-00001-of-00002.safetensors" in files and
              "optimizer.safetensors" not in files,
              "a ZeRO-1 checkpoint on 2 ranks holds one optimizer file per rank: %s" % files)
    # A resumed run appends to its log: l2 holds all 20 steps.
    l2, _, p = d.run("z1-np2-to-1", "dist_z1", 0, "--resume", "--steps", str(STEPS))
    if l1 is not None and l2 is not None:
        d.same("ZeRO-1 2 ranks, resumed by one process", ref, (l2, o1))
    # ZeRO-2 writes ZeRO-1's per-rank files: 2 ranks -> one process.
    l1, o1, _ = d.run("z2-np2-to-1", "dist_z2", 2, "--accum", "1", "--steps", "10")
    l2, _, _ = d.run("z2-np2-to-1", "dist_z2", 0, "--resume", "--steps", str(STEPS))
    if l1 is not None and l2 is not None:
        d.same("ZeRO-2 2 ranks, resumed by one process", ref, (l2, o1))
    # ZeRO-3: 2 ranks -> one process, and -> ZeRO-1 on 2 ranks (the model
    # file is whole, gathered at the save; the optimizer files ZeRO-1's).
    l1, o1, _ = d.run("z3-np2-to-1", "dist_z3", 2, "--accum", "1", "--steps", "10")
    l2, _, _ = d.run("z3-np2-to-1", "dist_z3", 0, "--resume", "--steps", str(STEPS))
    if l1 is not None and l2 is not None:
        d.same("ZeRO-3 2 ranks, resumed by one process", ref, (l2, o1))
    # --resume with no checkpoint yet starts afresh: under ZeRO-3 the fresh
    # params go straight into the partitions (nothing whole is allocated).
    shutil.rmtree(os.path.join(d.dir, "z3-resume-afresh"), ignore_errors=True)
    l2, o2, _ = d.run("z3-resume-afresh", "dist_z3", 2, "--resume", "--steps", str(STEPS))
    d.same("ZeRO-3 2 ranks, --resume with no checkpoint yet", ref, (l2, o2))
    l1, o1, _ = d.run("z3-to-z1", "dist_z3", 2, "--accum", "1", "--steps", "10")
    l2, _, _ = d.run("z3-to-z1", "dist_z1", 2, "--resume", "--steps", str(STEPS))
    if l1 is not None and l2 is not None:
        d.same("ZeRO-3 2 ranks, resumed on 2 ranks under ZeRO-1", ref, (l2, o1))
    # One process -> ZeRO-3 on 2 ranks: each rank keeps its partition of
    # the whole model file.
    l1, o1, _ = d.run("z0-1-to-z3-np2", "dist_z0", 0, "--accum", "2", "--steps", "10")
    l2, _, _ = d.run("z0-1-to-z3-np2", "dist_z3", 2, "--resume", "--steps", str(STEPS))
    if l1 is not None and l2 is not None:
        d.same("one process, resumed on 2 ranks under ZeRO-3", ref, (l2, o1))
    z3_bad_files(d, ref)
    # The evaluate entry gathers too: --eval-only of one model on 2 ranks
    # under ZeRO-3 (an odd number of batches: one rank evaluates a spare)
    # prints one process's loss, bit for bit.
    model = os.path.join(ref[1], "ckpt", "step-%07d" % STEPS)
    evals = []
    for job, ranks in (("dist_z0", 0), ("dist_z3", 2)):
        cmd = [d.exe(job), "--data", d.data, "--threads", "1", "--eval-only", "--load", model,
               "--eval-split", "all", "--comm-timeout", "30"]
        if ranks:
            cmd = ["mpirun", "-np", str(ranks)] + cmd
        print("$ " + " ".join(cmd), flush=True)
        p = subprocess.run(cmd, capture_output=True, env=d.env, timeout=120)
        d.f.check(p.returncode == 0, "%s --eval-only: exit %s\n%s"
                  % (job, p.returncode, harness.tail(p.stderr)))
        evals.append([l for l in harness.text(p.stdout).splitlines() if l.startswith("loss ")])
    if len(evals) == 2:
        d.f.check(evals[0] == evals[1] and len(evals[0]) == 1,
                  "--eval-only under ZeRO-3 on 2 ranks: %s, one process: %s" % (evals[1], evals[0]))
        print("--eval-only, one process and ZeRO-3 on 2 ranks: %s" % evals[0])
    # One process -> ZeRO-1 on 2 ranks.
    l1, o1, _ = d.run("z0-1-to-np2", "dist_z0", 0, "--accum", "2", "--steps", "10")
    l2, _, _ = d.run("z0-1-to-np2", "dist_z1", 2, "--resume", "--steps", str(STEPS))
    if l1 is not None and l2 is not None:
        d.same("one process, resumed on 2 ranks under ZeRO-1", ref, (l2, o1))
    # A crash while step 20 was being saved: rank 1's partition is cut short
    # and trainer_state.json never came; the resume takes step 10.
    l1, o1, _ = d.run("torn", "dist_z1", 2, "--accum", "1", "--steps", "10")
    torn = os.path.join(o1, "ckpt", "step-0000020")
    os.makedirs(torn)
    src = os.path.join(o1, "ckpt", "step-0000010")
    for f in os.listdir(src):
        if f != "trainer_state.json":
            shutil.copy(os.path.join(src, f), torn)
    part = os.path.join(torn, "optimizer-00001-of-00002.safetensors")
    with open(part, "r+b") as f:
        f.truncate(os.path.getsize(part) // 2)
    with open(os.path.join(o1, "ckpt", "latest"), "w") as f:
        f.write("step-0000020\n")
    l2, _, p = d.run("torn", "dist_z1", 2, "--resume", "--steps", str(STEPS))
    if l2 is not None:
        err = harness.text(p.stderr)
        d.f.check("skipping checkpoint" in err and "step-0000010" in err,
                  "the torn checkpoint was not skipped with a warning:\n" + harness.tail(err))
        d.same("ZeRO-1 2 ranks, resumed past a torn checkpoint", ref, (l2, o1))
    # Per-rank optimizer files of the param-major group (before the group
    # became layer-major; trainer_state.json has no "group_layout") are
    # ranges of another order: refused, not misread and not skipped.
    old = os.path.join(d.dir, "param-major")
    shutil.rmtree(old, ignore_errors=True)
    shutil.copytree(os.path.join(d.dir, "torn", "ckpt", "step-0000010"),
                    os.path.join(old, "ckpt", "step-0000010"))
    state_file = os.path.join(old, "ckpt", "step-0000010", "trainer_state.json")
    state = json.load(open(state_file))
    del state["group_layout"]
    json.dump(state, open(state_file, "w"))
    _, _, p = d.run("param-major", "dist_z1", 2, "--resume", "--steps", str(STEPS), expect=1)
    if p is not None:
        err = harness.text(p.stderr)
        d.f.check("optimizer partitions follow the param-major order of the trainable group"
                  in err, "an old param-major checkpoint was not refused:\n" + harness.tail(err))


def z3_bad_files(d, ref):
    """ZeRO-3 ranks read only their partitions of model.safetensors: a bad
    file still fails on every rank, and a checkpoint that one rank alone
    cannot load is skipped by all."""
    l1, o1, _ = d.run("z3-untied", "dist_z3", 2, "--accum", "1", "--steps", str(STEPS),
                      "--save-every", "10")
    if l1 is None:
        return
    ckpt = os.path.join(o1, "ckpt")
    model = os.path.join(ckpt, "step-%07d" % STEPS, "model.safetensors")
    # --load of a truncated file: its error, on 2 ranks.
    truncated = os.path.join(d.dir, "z3-truncated.safetensors")
    with open(model, "rb") as f:
        data = f.read()
    with open(truncated, "wb") as f:
        f.write(data[:len(data) // 2])
    _, _, p = d.run("z3-truncated", "dist_z3", 2, "--load", truncated, "--steps", "1", expect=1)
    if p is not None:
        err = harness.text(p.stderr)
        d.f.check("is the file truncated?" in err and "z3-truncated.safetensors" in err,
                  "ZeRO-3 --load of a truncated file: no clear error:\n" + harness.tail(err))
    # The last step's lm_head.weight (tied to wte, all of which rank 0
    # holds) differs from wte in its last element: only rank 0 can see it.
    # Both ranks skip that checkpoint and resume from step 10.
    header = json.loads(data[8:8 + int.from_bytes(data[:8], "little")])
    end = 8 + int.from_bytes(data[:8], "little") + header["lm_head.weight"]["data_offsets"][1]
    with open(model, "r+b") as f:
        f.seek(end - 1)
        f.write(bytes([data[end - 1] ^ 0x40]))
    log = os.path.join(o1, "log.jsonl")
    with open(log) as f:
        kept = f.readlines()[:10]
    with open(log, "w") as f:
        f.writelines(kept)
    logs = os.path.join(o1, "rank-logs")
    l2, _, p = d.run("z3-untied", "dist_z3", 2, "--resume", "--steps", str(STEPS),
                     "--rank-logs", logs)
    if p is not None:
        err = harness.text(p.stderr)
        d.f.check("skipping checkpoint" in err and "is declared tied to wte.w" in err,
                  "ZeRO-3: rank 0 did not skip the checkpoint with the untied "
                  "lm_head.weight:\n" + harness.tail(err))
        rank1 = open(os.path.join(logs, "rank-1.log")).read()
        d.f.check("another rank could not load it" in rank1,
                  "ZeRO-3: rank 1 did not skip the checkpoint rank 0 could not load:\n" +
                  harness.tail(rank1))
        d.same("ZeRO-3 2 ranks, resumed past a checkpoint one rank could not load", ref, (l2, o1))


OFFLOAD_BANNER = "offload = optimizer: the optimizer state"


def offload(d):
    ref = d.run("off-ref-accum2", "dist_z0", 0, "--accum", "2", "--steps", str(STEPS))[:2]
    l, o, p = d.run("dist_z0_off-np1", "dist_z0_off", 0, "--accum", "2", "--steps", str(STEPS))
    d.same("dist_z0_off, one process --accum 2 vs dist_z0", ref, (l, o))
    if l is not None and ref[0] is not None:
        step = "step-%07d" % STEPS
        same = (open(os.path.join(o, "ckpt", step, "optimizer.safetensors"), "rb").read() ==
                open(os.path.join(ref[1], "ckpt", step, "optimizer.safetensors"), "rb").read())
        d.f.check(same, "dist_z0_off: optimizer.safetensors differs from dist_z0's (bytes)")
        err = harness.text(p.stderr)
        d.f.check(OFFLOAD_BANNER in err and "so it saves no memory" in err,
                  "dist_z0_off: the banner does not say where the state is and that it saves "
                  "nothing here:\n" + harness.tail(err))
    for job in ("dist_z0_off", "dist_z1_off", "dist_z2_off", "dist_z3_off"):
        l, o, _ = d.run("%s-np2" % job, job, 2, "--accum", "1", "--steps", str(STEPS))
        d.same("%s on 2 ranks vs dist_z0, one process --accum 2" % job, ref, (l, o))
    # A LoRA: rank 1's partition is empty (no chunks to copy or update).
    lref = d.run("off-lora-ref-accum2", "dist_lora_z0", 0, "--accum", "2",
                 "--steps", str(STEPS))[:2]
    l, o, _ = d.run("dist_lora_z1_off-np2", "dist_lora_z1_off", 2, "--accum", "1",
                    "--steps", str(STEPS), "--comm-timeout", "30")
    d.same("dist_lora_z1_off on 2 ranks vs dist_lora_z0, one process --accum 2", lref, (l, o))
    # Offloaded on 2 ranks (per-rank files) -> one process without offload.
    l1, o1, _ = d.run("off-np2-to-plain", "dist_z1_off", 2, "--accum", "1", "--steps", "10")
    l2, _, _ = d.run("off-np2-to-plain", "dist_z0", 0, "--resume", "--steps", str(STEPS))
    if l1 is not None and l2 is not None:
        d.same("dist_z1_off 2 ranks, resumed by one process of dist_z0", ref, (l2, o1))
    # Plain one process -> offloaded on 2 ranks under ZeRO-2.
    l1, o1, _ = d.run("plain-to-off-np2", "dist_z0", 0, "--accum", "2", "--steps", "10")
    l2, _, _ = d.run("plain-to-off-np2", "dist_z2_off", 2, "--resume", "--steps", str(STEPS))
    if l1 is not None and l2 is not None:
        d.same("dist_z0 one process, resumed offloaded on 2 ranks (zero = 2)", ref, (l2, o1))


def rank1_pid(logs):
    """Rank 1's pid from its --rank-logs banner, once it finished a step."""
    deadline = time.time() + 60
    while time.time() < deadline:
        time.sleep(0.2)
        try:
            text = open(os.path.join(logs, "rank-1.log")).read()
            if "step 1/" in text:
                return int(text.split("(pid ")[1].split(")")[0])
        except (OSError, ValueError, IndexError):
            pass
    return None


def failure(d):
    exe = d.exe("dist_z0")
    # A rank that stops: rank 1's pid is in its log's banner.
    out = os.path.join(d.dir, "hang")
    shutil.rmtree(out, ignore_errors=True)
    logs = os.path.join(out, "logs")
    cmd = ["mpirun", "-np", "2", exe, "--data", d.data, "--steps", "100000",
           "--comm-timeout", "3", "--rank-logs", logs] + COMMON
    print("$ " + " ".join(cmd), flush=True)
    p = subprocess.Popen(cmd, env=d.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pid = rank1_pid(logs)
    if not d.f.check(pid is not None, "rank 1 never logged its pid and first step"):
        p.kill()
        return
    os.kill(pid, signal.SIGSTOP)
    t0 = time.time()
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        os.kill(pid, signal.SIGKILL)
        d.f.add("a stopped rank made the job hang for 60 s (--comm-timeout 3)")
        return
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    err = harness.text(err)
    took = time.time() - t0
    print("stopped rank 1: the job ended after %.1f s, exit %d:\n%s"
          % (took, p.returncode, harness.tail(err, 6)))
    d.f.check(p.returncode != 0, "a stopped rank: the job exited 0")
    rank0 = os.path.join(logs, "rank-0.log")
    d.f.check(os.path.exists(rank0) and "step 1/" in open(rank0).read(),
              "--rank-logs: rank 0 wrote no progress to " + rank0)
    d.f.check("did not finish in 3 s" in err and "rank 0" in err,
              "a stopped rank: no message from rank 0 naming the timeout:\n" + harness.tail(err))
    # A rank that is killed.
    cmd = ["mpirun", "-np", "2", exe, "--data", d.data, "--steps", "100000",
           "--comm-timeout", "30", "--rank-logs", logs + "2"] + COMMON
    print("$ " + " ".join(cmd), flush=True)
    p = subprocess.Popen(cmd, env=d.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pid = rank1_pid(logs + "2")
    if d.f.check(pid is not None, "rank 1 never logged its pid and first step"):
        os.kill(pid, signal.SIGKILL)
        try:
            _, err = p.communicate(timeout=60)
            print("killed rank 1: exit %d:\n%s" % (p.returncode, harness.tail(err, 4)))
            d.f.check(p.returncode != 0, "a killed rank: the job exited 0")
        except subprocess.TimeoutExpired:
            p.kill()
            d.f.add("a killed rank made the job hang for 60 s")
    else:
        p.kill()
    # SIGTERM to mpirun, which forwards it: the ranks agree on the step to
    # stop after, save a complete ZeRO-1 checkpoint, and it resumes.
    out = os.path.join(d.dir, "sigterm")
    shutil.rmtree(out, ignore_errors=True)
    cmd = ["mpirun", "-np", "2", d.exe("dist_z1"), "--data", d.data, "--steps", "100000",
           "--save", os.path.join(out, "ckpt"), "--rank-logs", os.path.join(out, "logs")] + COMMON
    print("$ " + " ".join(cmd), flush=True)
    p = subprocess.Popen(cmd, env=d.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if d.f.check(rank1_pid(os.path.join(out, "logs")) is not None,
                 "SIGTERM: rank 1 never logged its first step"):
        p.send_signal(signal.SIGTERM)
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        d.f.add("SIGTERM: the job did not stop within 60 s")
        return
    err = harness.text(err)
    saved = [l for l in err.splitlines() if l.startswith("stopped by SIGTERM")]
    print("SIGTERM: exit %s; %s" % (p.returncode, saved[0] if saved else "no stop message"))
    if d.f.check(saved, "SIGTERM: no 'stopped by SIGTERM ... saved' line:\n" + harness.tail(err)):
        step = saved[0].split("after step ")[1].split(";")[0]
        ck = os.path.join(out, "ckpt", "step-%07d" % int(step))
        files = sorted(os.listdir(ck)) if os.path.isdir(ck) else []
        d.f.check("trainer_state.json" in files and
                  "optimizer-00001-of-00002.safetensors" in files,
                  "SIGTERM: the checkpoint of step %s is incomplete: %s" % (step, files))
        _, _, p = d.run("sigterm", "dist_z1", 2, "--resume", "--steps", str(int(step) + 2))
    # Usage errors.
    _, _, p = d.run("usage-dump", "dist_z0", 2, "--steps", "1", "--dump-grads", "g.safetensors",
                    expect=2)
    d.f.check("--dump-grads" in harness.text(p.stderr),
              "--dump-grads under mpirun: no message naming it")
    d.run("usage-resume", "dist_z0", 2, "--accum", "1", "--steps", "2")
    _, _, p = d.run("usage-resume", "dist_z0", 4, "--resume", "--steps", "4", expect=2)
    err = harness.text(p.stderr)
    d.f.check("2 micro-batches per step" in err and "use a world size dividing it" in err,
              "a resume on 4 ranks of a 2-micro-batch run: no clear message:\n" + harness.tail(err))


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("bitwise", "resize", "failure", "offload"):
        harness.die(__doc__.split("\n\n")[1])
    mode, exedir, workdir = sys.argv[1:]
    d = Dist(exedir, workdir)
    d.f = harness.Failures("check_dist.py " + mode)
    {"bitwise": bitwise, "resize": resize, "failure": failure, "offload": offload}[mode](d)
    return d.f.exit_code()


if __name__ == "__main__":
    sys.exit(main())
