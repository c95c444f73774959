"""The host runtime's training kernels at GPT-2 small's training shapes
(B=4 x T=256, dim 768, 12 layers, 12 heads of 64, vocab 50257, fp32),
2 threads: ms per call, GFLOP/s or GB/s, and the ms per training step they
add up to (calls per step x median). kernels_bench.cpp does the timing; this
builds it against $BMB_BUILD_DIR/lib/libbmrt.a and the OpenMP OpenBLAS, waits
for an idle machine, runs it and records one JSON line per kernel.

The step total is everything but the large GEMMs (OpenBLAS; ~788 GFLOP per
step, ~3.4 s at the machine's sgemm rate); PyTorch eager takes ~5.6 s per
step, so to beat it by 1.25x this total must stay near 1 s. The GEMM forms
of the linear layers' backward are listed apart, each next to a plain
cblas_sgemm NN of the same m, n, k.

  bench.py [RESULTS.jsonl] [NAME-SUBSTRING...]
Run alone it only prints; bench/run.sh passes the results file. Extra
arguments select kernels by name (e.g. attention).
Not a test: nothing fails on a slow figure.
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("BMB_ROOT", os.path.dirname(os.path.dirname(HERE)))
BUILD = os.environ.get("BMB_BUILD_DIR", os.path.join(ROOT, "build"))
sys.path.insert(0, os.path.dirname(HERE))
import benchlib  # noqa: E402

THREADS = 2
OPENBLAS = "/usr/lib/x86_64-linux-gnu/openblas-openmp"


def build():
    lib = os.path.join(BUILD, "lib", "libbmrt.a")
    if not os.path.exists(lib):
        sys.exit("bench/kernels: no %s (build bmb first: scripts/build.sh)" % lib)
    exe = os.path.join(BUILD, "bench", "kernels_bench")
    os.makedirs(os.path.dirname(exe), exist_ok=True)
    subprocess.run(["g++", "-std=c++17", "-O3", "-march=native", "-fopenmp",
                    "-I" + os.path.join(ROOT, "runtime", "include"),
                    "-I/usr/include/x86_64-linux-gnu/openblas-openmp",
                    os.path.join(HERE, "kernels_bench.cpp"), lib,
                    "-L" + OPENBLAS, "-Wl,-rpath," + OPENBLAS, "-lopenblas", "-o", exe],
                   check=True)
    return exe


def main():
    out = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1].endswith(".jsonl") else None
    names = [a for a in sys.argv[1:] if a != out]
    exe = build()
    benchlib.wait_idle()
    env = dict(os.environ, OMP_NUM_THREADS=str(THREADS), OMP_PROC_BIND="close")
    lines = []

    def run():
        lines[:] = subprocess.run([exe] + names, check=True, capture_output=True, text=True,
                                  env=env).stdout.splitlines()

    result = benchlib.measure(run, reps=1, warmup=0)
    table = [l for l in lines if not l.startswith("kernel|")]
    print("\n".join(table))
    if result["noisy"]:
        print("bench/kernels: other processes used %.1f s of CPU meanwhile: NOISY, re-run"
              % result["foreign_cpu_s"])
    if not out:
        return
    for l in lines:
        if not l.startswith("kernel|"):
            continue
        _, name, shape, calls, mn, med, rate, unit, step = l.split("|")
        r = dict(result, min=float(mn), median=float(med), max=float(med))
        benchlib.record(out, "kernels", "bmb", "gpt2-small-train", name, "ms", r,
                        shape=shape, calls_per_step=float(calls), rate=float(rate),
                        rate_unit=unit, ms_per_step=float(step))


if __name__ == "__main__":
    main()
