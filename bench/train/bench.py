"""fp32 training of GPT-2 small (124M) at batch 4 x 256 tokens, 2 threads:
bmb's train executable next to plain PyTorch eager and next to the machine's
GEMM bound, in one run.

  machine  sgemm 2048^3 through OpenBLAS (bench/infer/sgemm.cpp), 2 threads.
  pytorch  gpt2_train_torch.py in a child process (Debian's python3-torch):
           nn.Module GPT-2, torch.optim.AdamW(lr 1e-4, betas 0.9/0.999,
           eps 1e-8, weight decay 0), uniform random tokens; 2 warm-up and 5
           timed steps; its peak RSS (VmHWM).
  bmb      bmbc bench/train/gpt2.bmb --job bench_gpt2_small_train (the same
           model and AdamW settings), run as
             EXE --data <random tokens> --steps 7 --log <jsonl> --threads 2
           step times from the metrics log (the first 2 are warm-up); peak
           RSS from wait4 of the child.
Bound: a training step costs 6 FLOPs per weight of every matrix product per
token (forward 2, backward 4) plus attention's 12*L*T*d per token; divided by
the measured sgemm rate it is the time a step would take if everything ran
at OpenBLAS's large-GEMM speed.

PyTorch runs with OMP_WAIT_POLICY=PASSIVE unless set (see bench/infer);
ours with libgomp's default. Not a test: nothing fails on a slow figure.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
OURS_ENV = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("BMB_ROOT", os.path.dirname(os.path.dirname(HERE)))
BUILD = os.environ.get("BMB_BUILD_DIR", os.path.join(ROOT, "build"))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "e2e"))
import benchlib  # noqa: E402
import tokfile  # noqa: E402

THREADS = 2
CONFIG = "gpt2-small"
VOCAB, CTX, DIM, LAYERS, HEADS = 50257, 1024, 768, 12, 12
B, T = 4, 256
STEPS, WARMUP = 7, 2
GEMM_N = 2048
MIB = float(1 << 20)


def sgemm_rate(scratch):
    exe = os.path.join(scratch, "sgemm")
    subprocess.run(["g++", "-O3", "-march=native", "-fopenmp", "-o", exe,
                    os.path.join(ROOT, "bench", "infer", "sgemm.cpp"), "-lopenblas"], check=True)
    env = dict(os.environ, OMP_NUM_THREADS=str(THREADS), OPENBLAS_NUM_THREADS=str(THREADS))
    out = subprocess.run([exe, str(GEMM_N), "5"], check=True, capture_output=True, text=True,
                         env=env).stdout
    rates = [float(line.split()[1]) for line in out.splitlines() if line.startswith("sgemm")]
    return statistics.median(rates)


def run_child(cmd, env):
    """Runs cmd; returns (stdout, stderr, peak RSS MiB of that child)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        o, e = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if p.returncode != 0:
        lines = [l for l in e.splitlines() if "error" in l] or e.splitlines() or ["?"]
        raise RuntimeError("%s: exit %d: %s" % (os.path.basename(cmd[0]), p.returncode,
                                                lines[0].strip()))
    return o, e, usage.ru_maxrss / 1024.0


def pytorch_side():
    cmd = [sys.executable, os.path.join(HERE, "gpt2_train_torch.py")] + [
        str(v) for v in (VOCAB, CTX, DIM, LAYERS, HEADS, B, T, STEPS, THREADS)]
    out, _, _ = run_child(cmd, dict(os.environ))
    r = json.loads(out.strip().splitlines()[-1])
    return r["step_s"][WARMUP:], r["peak_rss_mib"], r["params"]


def compile_ours(scratch):
    bmbc = os.path.join(BUILD, "bin", "bmbc")
    exe = os.path.join(scratch, "gpt2_small_train")
    p = subprocess.run([bmbc, os.path.join(HERE, "gpt2.bmb"), "--job", "bench_gpt2_small_train",
                        "-I", ROOT, "-o", exe], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("bmbc exit %d: %s" % (p.returncode,
                                                 (p.stderr.strip() or "?").splitlines()[0]))
    stats = subprocess.run([bmbc, os.path.join(HERE, "gpt2.bmb"), "--job",
                            "bench_gpt2_small_train", "-I", ROOT, "--stats"],
                           capture_output=True, text=True).stdout
    return exe, stats


def step_times(log_path):
    """Per-step wall times from the metrics log: differences of `elapsed`
    between consecutive training lines."""
    elapsed = []
    with open(log_path) as f:
        for line in f:
            rec = json.loads(line)
            if "loss" in rec and "elapsed" in rec:
                elapsed.append(rec["elapsed"])
    return [b - a for a, b in zip([0.0] + elapsed, elapsed)]


def ours_side(exe, scratch):
    import random
    rng = random.Random(0)
    data = os.path.join(scratch, "random.tok")
    tokfile.write(data, [rng.randrange(VOCAB) for _ in range(B * (T + 1) * (STEPS + 2) * 2)],
                     VOCAB)
    log = os.path.join(scratch, "metrics.jsonl")
    cmd = [exe, "--data", data, "--steps", str(STEPS), "--log", log, "--threads", str(THREADS),
           "--seed", "1", "--val-fraction", "0"]
    _, err, rss = run_child(cmd, OURS_ENV)
    return step_times(log)[WARMUP:], rss, err


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.devnull
    try:
        import torch  # noqa: F401
    except ImportError as e:
        print("train: skipped: %s (needs Debian's python3-torch)" % e)
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="bmb-bench-train-") as scratch:
        try:
            exe, stats = compile_ours(scratch)
            why_not = None
        except RuntimeError as e:
            exe, stats, why_not = None, "", str(e)
        benchlib.wait_idle()
        gemm = sgemm_rate(scratch)
        m = {"samples": [gemm], "min": gemm, "median": gemm, "max": gemm, "own_cpu_s": 0,
             "foreign_cpu_s": 0, "noisy": False}
        rows.append(benchlib.record(out, "train", "machine", "n=%d" % GEMM_N, "sgemm", "GFLOP/s", m))
        tokens = B * T
        results = {}
        for system in ("pytorch", "bmb"):
            if system == "bmb" and not exe:
                continue
            # Foreign CPU: busy ticks of the machine minus our own and the child's.
            b0, own0 = benchlib._busy_ticks()[0], benchlib._own_cpu()
            try:
                if system == "pytorch":
                    times, rss, _ = pytorch_side()
                else:
                    times, rss, _ = ours_side(exe, scratch)
            except (RuntimeError, ValueError, OSError) as e:
                why_not = "%s: %s" % (system, e)
                continue
            own = benchlib._own_cpu() - own0
            foreign = max(0.0, (benchlib._busy_ticks()[0] - b0) / benchlib.TICK - own)
            r = {"samples": [tokens / s for s in times]}
            r.update(min=min(r["samples"]), median=statistics.median(r["samples"]),
                     max=max(r["samples"]), own_cpu_s=own, foreign_cpu_s=foreign,
                     noisy=foreign > 0.1 * max(own, 1e-9) and foreign > 1.0)
            rows.append(benchlib.record(out, "train", system, CONFIG, "train", "tok/s", r,
                                        threads=THREADS, peak_rss_mib=rss))
            results[system] = (r["median"], rss)
    matmul = 12 * LAYERS * DIM * DIM + VOCAB * DIM
    flops_per_token = 6 * matmul + 12 * LAYERS * T * DIM
    bound = gemm * 1e9 / flops_per_token
    n_params = matmul + CTX * DIM + LAYERS * 13 * DIM + 2 * DIM
    print("\n== GPT-2 small training, B=%d T=%d fp32 AdamW, %d threads" % (B, T, THREADS))
    print("GEMM bound: %.0f MFLOP per token / %.1f GFLOP/s = %.1f tokens/s"
          % (flops_per_token / 1e6, gemm, bound))
    for system, (tps, rss) in sorted(results.items()):
        print("%-8s %7.1f tokens/s (%3.0f%% of the bound), peak RSS %.0f MiB"
              % (system, tps, 100 * tps / bound, rss))
    if "bmb" in results and "pytorch" in results:
        print("bmb / PyTorch: %.2fx (PyTorch: %.1f tokens/s)"
              % (results["bmb"][0] / results["pytorch"][0], results["pytorch"][0]))
    else:
        print("bmb: not available (%s)" % why_not)
    print("analytic minimum: params + grads + AdamW m, v = 4 x %.1f MiB = %.1f MiB, plus the "
          "planned activations (bmbc --stats):" % (4 * n_params / MIB, 16 * n_params / MIB))
    plan = stats[stats.find("memory plan of"):] if "memory plan of" in stats else ""
    for line in plan.splitlines()[1:]:
        if line.strip():
            print("  " + line.strip())
    benchlib.ratio_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
