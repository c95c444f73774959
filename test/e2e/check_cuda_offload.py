#!/usr/bin/env python3
"""offload = optimizer on the GPU (runtime/cuda/offload.cpp) against the
device run without it and the host's offloaded run (ctest label cuda-gpu).

  check_cuda_offload.py PROBE DEVICE_DIR HOST_DIR WORKDIR

DEVICE_DIR holds the --target=cuda executables of test/e2e/dist.bmb's
dist_z1, dist_z1_off, dist_z3 and dist_z3_off (cuda.program.<job>),
HOST_DIR the host ones
(e2e.dist's fixture). Without a GPU (PROBE fails) it prints why and exits
77 (Skipped). With one, each trains 5 steps from the same fresh parameters
on the same random tokens (sequential order) and:
 - the offloaded device run logs the losses of the device run without
   offload within 1e-4 relative at every step (not bit for bit: the host
   update is the host kernel's element math, the device kernel's is
   contracted into FMAs by nvcc);
 - and of the host's offloaded run, within 1e-4 (the device's kernels sum
   in other orders);
 - its banner says the GPU holds no optimizer state;
 - 3 offloaded steps saved and resumed without offload on the device give
   the losses of the straight offloaded run within 1e-4;
 - under zero = 3 (dist_z3, dist_z3_off: the params partitioned, gathered
   layer by layer into the staging; one process, so the partition is the
   whole group): the device runs with and without offload log the losses of
   the device's dist_z1 within 1e-4, and the host's dist_z3_off the
   device's within 1e-4.
Written without a GPU to run it on: it has never run.
"""

import json
import os
import random
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
import tokfile  # noqa: E402

SKIPPED = 77
STEPS = 5
TOL = 1e-4
VOCAB = 512


def main():
    if len(sys.argv) != 5:
        harness.die(__doc__.split("\n\n")[1])
    probe, device_dir, host_dir, work = sys.argv[1:]
    p = subprocess.run([probe], capture_output=True, text=True)
    if p.returncode != 0:
        print("skipped: no usable GPU (%s)" % (p.stdout + p.stderr).strip())
        return SKIPPED
    f = harness.Failures("check_cuda_offload.py")
    work = os.path.join(work, "cuda-offload")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    data = os.path.join(work, "data.tok")
    r = random.Random(13)
    tokfile.write(data, [r.randrange(VOCAB) for _ in range(30000)], VOCAB)

    def train(name, exe, steps=STEPS, extra=()):
        out = os.path.join(work, name)
        os.makedirs(out, exist_ok=True)
        log = os.path.join(out, "log.jsonl")
        cmd = [exe, "--data", data, "--seed", "5", "--order", "sequential", "--val-fraction",
               "0", "--steps", str(steps), "--save", os.path.join(work, name + "-ckpt"),
               "--log", log] + list(extra)
        print("$ " + " ".join(cmd), flush=True)
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            f.add("%s: exit %d\n%s" % (name, p.returncode, harness.tail(p.stderr, 20)))
            return None, p.stderr
        return [json.loads(l)["loss"] for l in open(log)], p.stderr

    def close(what, ref, got):
        if ref is None or got is None:
            return
        worst = max(abs(a - b) / abs(a) for a, b in zip(ref, got)) if ref else 1.0
        print("%s: worst relative loss difference %.2e" % (what, worst))
        f.check(len(ref) == len(got) == STEPS and worst <= TOL,
                "%s: losses differ by %.2e relative\n  ref %s\n  got %s" % (what, worst, ref, got))

    plain, _ = train("device-plain", os.path.join(device_dir, "dist_z1"))
    off, err = train("device-off", os.path.join(device_dir, "dist_z1_off"))
    host, _ = train("host-off", os.path.join(host_dir, "dist_z1_off"), extra=["--threads", "1"])
    close("device offloaded vs device without offload", plain, off)
    close("device offloaded vs host offloaded", host, off)
    f.check("the GPU holds no optimizer state" in err,
            "the offloaded device run's banner does not say where the state is:\n" +
            harness.tail(err))
    first, _ = train("device-resume", os.path.join(device_dir, "dist_z1_off"), steps=3)
    rest, _ = train("device-resume", os.path.join(device_dir, "dist_z1"),
                    extra=["--resume"])
    if first is not None and rest is not None:
        close("3 offloaded steps resumed without offload vs straight", off, rest)
    z3, _ = train("device-z3", os.path.join(device_dir, "dist_z3"))
    z3off, _ = train("device-z3-off", os.path.join(device_dir, "dist_z3_off"))
    hostz3off, _ = train("host-z3-off", os.path.join(host_dir, "dist_z3_off"),
                         extra=["--threads", "1"])
    close("device zero = 3 vs device zero = 1", plain, z3)
    close("device zero = 3 offloaded vs device zero = 1", plain, z3off)
    close("device zero = 3 offloaded vs host zero = 3 offloaded", hostz3off, z3off)
    return f.exit_code()


if __name__ == "__main__":
    sys.exit(main())
