"""Training memory and throughput per ZeRO stage and world size: GPT-2 small
(124M), fp32 AdamW, batch 2 x 256 tokens per rank and step, one thread per
rank, `mpirun -np N` for N = 1, 2, 4 and zero = 0 (plain data parallel; its
gradient all-reduce overlapped with the backward, and with --no-overlap at
the optimizer step), zero = 1 (optimizer state partitioned), zero = 2
(gradients partitioned too; its grads figure includes the backward's
staging of one layer), zero = 3 (params partitioned too; its params
figure includes the staging each layer is gathered into), and zero = 1 with
offload = optimizer (AdamW on the host: here the same RAM, so its optimizer
state, with the fp32 master and the gradient staging, is twice ZeRO-1's and
saves nothing).

`bench.py --nano [OUT]`: the same runs on GPT-2 nano (vocab 512, dim 64, 2
layers, 2 x 64 tokens), to check the benchmark works on a loaded machine;
its figures say nothing about GPT-2 small.

Per run, rank 0's figures as the running program reports them:
  - params + grads + optimizer state it allocated (the banner's `memory:`
    line: the rank's real allocation sizes at this world size),
  - its peak RSS (VmHWM, the `done:` line of its --rank-logs file; rank 0
    writes to stderr),
  - tokens/s of the whole job (the metrics log; the first step is warm-up),
next to the ZeRO paper's analytic per-rank bytes for the precision used
(fp32 params 4, grads 4, AdamW m and v 8 bytes per parameter; ZeRO-1 divides
the 8 by N, ZeRO-2 the 4 + 8, ZeRO-3 all of it), and the throughput of ZeRO-1 relative to zero = 0 at the same
N. Activation memory and recomputation are bench/train's and the
checkpointing benchmark's business.

On this 2-core machine 4 ranks share 2 cores: throughput at N = 4 says what
the collectives cost on top of oversubscription, not what 4 cores would do.
Not a test: nothing fails on a slow figure.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("BMB_ROOT", os.path.dirname(os.path.dirname(HERE)))
BUILD = os.environ.get("BMB_BUILD_DIR", os.path.join(ROOT, "build"))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "e2e"))
import benchlib  # noqa: E402
import tokfile  # noqa: E402

NANO = "--nano" in sys.argv
VOCAB = 512 if NANO else 50257
B, T = (2, 64) if NANO else (2, 256)
STEPS = 3
RANKS = (1, 2, 4)
MIB = float(1 << 20)
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMP_NUM_THREADS="1")


def compile_job(job, scratch):
    exe = os.path.join(scratch, job)
    subprocess.run([os.path.join(BUILD, "bin", "bmbc"), os.path.join(HERE, "gpt2.bmb"), "--job",
                    job, "-I", ROOT, "-o", exe], check=True, capture_output=True, text=True)
    return exe


def run(exe, ranks, data, scratch, flags=()):
    out = os.path.join(scratch, "run")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    log = os.path.join(out, "metrics.jsonl")
    cmd = ["mpirun", "--bind-to", "none", "-np", str(ranks), exe, "--data", data, "--steps",
           str(STEPS), "--threads", "1", "--val-fraction", "0", "--log", log, "--rank-logs",
           os.path.join(out, "logs")] + list(flags)
    p = subprocess.run(cmd, capture_output=True, text=True, env=ENV)
    if p.returncode != 0:
        raise RuntimeError("exit %d: %s" % (p.returncode, p.stderr.strip().splitlines()[-1:]))
    # zero = 2 and 3: "grads X MiB (+ Y MiB staging)", both counted as
    # grads; zero = 3: "params X MiB (+ Y MiB staging)", both as params.
    mem = re.search(r"memory: params ([\d.]+) MiB(?: \(\+ ([\d.]+) MiB staging\))?, "
                    r"grads ([\d.]+) MiB(?: \(\+ ([\d.]+) MiB staging\))?, "
                    r"optimizer state ([\d.]+) MiB", p.stderr)
    rss = [float(re.search(r"peak RSS (\d+) MiB", p.stderr).group(1))]
    for r in range(1, ranks):
        text = open(os.path.join(out, "logs", "rank-%d.log" % r)).read()
        rss.append(float(re.search(r"peak RSS (\d+) MiB", text).group(1)))
    tps = [json.loads(l)["tokens_per_s"] for l in open(log)][1:]
    params, pstaging, grads, staging, opt = mem.groups()
    figures = [float(params) + float(pstaging or 0), float(grads) + float(staging or 0),
               float(opt)]
    return figures, rss, sorted(tps)[len(tps) // 2]


def main():
    args = [a for a in sys.argv[1:] if a != "--nano"]
    out = args[0] if args else os.devnull
    if not shutil.which("mpirun"):
        print("dist: skipped: no mpirun (apt install openmpi-bin)")
        return 0
    # GPT-2 small's trainable parameters (models/gpt2.bmb, tied head).
    dim, layers, ctx = (64, 2, 64) if NANO else (768, 12, 1024)
    psi = VOCAB * dim + ctx * dim + layers * (12 * dim * dim + 13 * dim) + 2 * dim
    rows, table = [], []
    with tempfile.TemporaryDirectory(prefix="bmb-bench-dist-") as scratch:
        size = "nano" if NANO else "small"
        exes = {z: compile_job("bench_gpt2_%s_zero%d" % (size, z), scratch) for z in (0, 1, 2, 3)}
        exes["1off"] = compile_job("bench_gpt2_%s_zero1_offload" % size, scratch)
        import random
        rng = random.Random(0)
        data = os.path.join(scratch, "random.tok")
        tokfile.write(data, [rng.randrange(VOCAB) for _ in range(B * (T + 1) * 4 * (STEPS + 2))],
                      VOCAB)
        # zero = 0 sends each layer's gradients from the backward (overlap);
        # --no-overlap reduces them at the optimizer step instead.
        variants = [(0, "zero0", []), (0, "zero0-no-overlap", ["--no-overlap"]),
                    (1, "zero1", []), (2, "zero2", []), (3, "zero3", []),
                    ("1off", "zero1-offload", [])]
        for n in RANKS:
            base = None
            for z, name, flags in variants:
                if n == 1 and flags:
                    continue  # one rank has nothing to overlap
                benchlib.wait_idle(max_wait=1 if NANO else 60)  # nano: a smoke run
                (p, g, o), rss, tps = run(exes[z], n, data, scratch, flags)
                # offload: ZeRO-1's, plus the host's fp32 master and gradient
                # staging (8 bytes per parameter / N; the same RAM here).
                stage = 1 if z == "1off" else z
                analytic = (4 * psi / (n if stage == 3 else 1) +
                            4 * psi / (n if stage >= 2 else 1) + 8 * psi / (n if stage else 1) +
                            (8 * psi / n if z == "1off" else 0)) / MIB
                r = {"samples": [tps], "min": tps, "median": tps, "max": tps, "own_cpu_s": 0,
                     "foreign_cpu_s": 0, "noisy": False}
                rows.append(benchlib.record(out, "dist", "bmb", "gpt2-%s np%d" % (size, n),
                                            name, "tok/s", r, ranks=n,
                                            state_mib=p + g + o, analytic_mib=analytic,
                                            peak_rss_mib=max(rss)))
                base = tps if name == "zero0" else base
                table.append((n, name, p, g, o, analytic, max(rss), tps,
                              tps / base if base else float("nan")))
    print("\n== GPT-2 %s (%.2fM params), fp32 AdamW, B=%d T=%d per rank, 1 thread per rank"
          % ("nano" if NANO else "small", psi / 1e6, B, T))
    print("%5s %16s %9s %9s %9s %11s %11s %9s %9s %8s" % (
        "ranks", "plan", "params", "grads", "opt", "p+g+o", "ZeRO paper", "peak RSS",
        "tok/s", "vs z0"))
    for n, name, p, g, o, a, rss, tps, rel in table:
        d = 2 if NANO else 0  # nano's figures are fractions of a MiB
        print(("%5d %16s %8.{0}fM %8.{0}fM %8.{0}fM %10.{0}fM %10.{0}fM %8.0fM %9.1f %7.2fx"
               .format(d))
              % (n, name, p, g, o, p + g + o, a, rss, tps, rel))
    print("(MiB per rank; 'ZeRO paper': 4+4+8 bytes per parameter, the 8 divided by the "
          "ranks under ZeRO-1, the 4+8 under ZeRO-2, all under ZeRO-3; zero2's and zero3's "
          "grads include their staging, zero3's params too; zero1-offload adds the host's "
          "master and staging, 8 / N)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
