"""Activation checkpointing (`checkpoint = h`, bmb-checkpoint-activations)
on GPT-2 small training, B=4 T=256 fp32 AdamW, 2 threads: bench/train's job
with and without checkpointing of the 12 blocks, side by side.

  plan     the planned activation bytes of forward_backward (bmbc --stats).
  rss      the train executable's peak RSS (wait4 of the child).
  step     seconds per step from the metrics log, after WARMUP steps
           (EXE --data <random tokens> --steps STEPS --threads 2).
Printed: each figure with and without, and the ratio (checkpointing trades
one more forward per step, ~1/3 more GEMM work, for activation memory).
BMB_BENCH_CKPT_STEPS (default 5; 2 are warm-up, at least 1 more is timed)
shortens a run. Not a test: nothing fails on a slow figure.
"""

import importlib.util
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("BMB_ROOT", os.path.dirname(os.path.dirname(HERE)))
BUILD = os.environ.get("BMB_BUILD_DIR", os.path.join(ROOT, "build"))
sys.path.insert(0, os.path.dirname(HERE))
import benchlib  # noqa: E402

# bench/train/bench.py's helpers (its job file, data, child runs).
_spec = importlib.util.spec_from_file_location(
    "train_bench", os.path.join(ROOT, "bench", "train", "bench.py"))
train = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(train)

JOBS = {"plain": "bench_gpt2_small_train", "checkpoint": "bench_gpt2_small_train_ckpt"}
STEPS = max(int(os.environ.get("BMB_BENCH_CKPT_STEPS", "5")), 2)
WARMUP = min(2, STEPS - 1)
MIB = float(1 << 20)


def compile_job(job, scratch):
    """(executable, planned forward_backward activation bytes)."""
    bmbc = os.path.join(BUILD, "bin", "bmbc")
    src = os.path.join(ROOT, "bench", "train", "gpt2.bmb")
    exe = os.path.join(scratch, job)
    p = subprocess.run([bmbc, src, "--job", job, "-I", ROOT, "-o", exe],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("bmbc --job %s: exit %d: %s" % (
            job, p.returncode, (p.stderr.strip() or "?").splitlines()[0]))
    stats = subprocess.run([bmbc, src, "--job", job, "-I", ROOT, "--stats"],
                           capture_output=True, text=True).stdout
    m = re.search(r"activations of forward_backward .*\(([0-9]+) bytes\)", stats)
    if not m:
        raise RuntimeError("bmbc --stats --job %s: no activation figure" % job)
    return exe, int(m.group(1))


def run(exe, scratch):
    """(step seconds after warm-up, peak RSS MiB)."""
    import random
    rng = random.Random(0)
    data = os.path.join(scratch, "random.tok")
    if not os.path.exists(data):
        train.tokfile.write(data, [rng.randrange(train.VOCAB)
                                   for _ in range(train.B * (train.T + 1) * (STEPS + 2) * 2)],
                            train.VOCAB)
    log = os.path.join(scratch, os.path.basename(exe) + ".jsonl")
    cmd = [exe, "--data", data, "--steps", str(STEPS), "--log", log,
           "--threads", str(train.THREADS), "--seed", "1", "--val-fraction", "0"]
    _, _, rss = train.run_child(cmd, train.OURS_ENV)
    return train.step_times(log)[WARMUP:], rss


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.devnull
    figures = {}
    with tempfile.TemporaryDirectory(prefix="bmb-bench-checkpoint-") as scratch:
        for label, job in JOBS.items():
            try:
                exe, plan = compile_job(job, scratch)
                benchlib.wait_idle()
                own0 = benchlib._own_cpu()
                b0 = benchlib._busy_ticks()[0]
                times, rss = run(exe, scratch)
            except (RuntimeError, ValueError, OSError) as e:
                print("checkpoint: %s: not available (%s)" % (label, e))
                return 1
            own = benchlib._own_cpu() - own0
            foreign = max(0.0, (benchlib._busy_ticks()[0] - b0) / benchlib.TICK - own)
            r = {"samples": times, "min": min(times), "median": statistics.median(times),
                 "max": max(times), "own_cpu_s": own, "foreign_cpu_s": foreign,
                 "noisy": foreign > 0.1 * max(own, 1e-9) and foreign > 1.0}
            system = "bmb" if label == "plain" else "bmb-checkpoint"
            benchlib.record(out, "checkpoint", system, "gpt2-small", "step", "s", r,
                            threads=train.THREADS, peak_rss_mib=rss,
                            planned_activation_bytes=plan)
            figures[label] = (plan, rss, r["median"], r["noisy"])
    p, c = figures["plain"], figures["checkpoint"]
    print("\n== activation checkpointing, GPT-2 small B=%d T=%d fp32 AdamW, %d threads, "
          "%d timed steps" % (train.B, train.T, train.THREADS, STEPS - WARMUP))
    print("%-28s %12s %12s %8s" % ("", "without", "checkpoint=h", "ratio"))
    print("%-28s %12.1f %12.1f %7.2fx" % ("planned activations (MiB)", p[0] / MIB, c[0] / MIB,
                                           p[0] / c[0]))
    print("%-28s %12.0f %12.0f %7.2fx" % ("peak RSS (MiB)", p[1], c[1], p[1] / c[1]))
    print("%-28s %12.2f %12.2f %7.2fx%s" % ("step (s, median)", p[2], c[2], c[2] / p[2],
                                             "  (noisy)" if p[3] or c[3] else ""))
    print("(activation and RSS ratios: without / with; step ratio: with / without)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
