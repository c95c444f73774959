#!/usr/bin/python3
"""The machine's ceilings in this run: fp32 GEMM (numpy -> OpenBLAS) and a
STREAM-style triad. Other benchmarks' figures are read against these, since
a shared 2-core VM varies from run to run. Needs Debian's python3-numpy (run
with /usr/bin/python3)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import benchlib  # noqa: E402

try:
    import numpy as np
except ImportError:
    print("machine: skipped: numpy not available for %s (use /usr/bin/python3)" % sys.executable)
    sys.exit(0)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "bench-results.jsonl"
    benchlib.wait_idle()
    rows = []

    n = 2048
    a = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    b = np.random.default_rng(1).standard_normal((n, n), dtype=np.float32)
    r = benchlib.measure(lambda: a @ b, reps=5, warmup=2)
    rows.append(benchlib.record(out, "machine", "numpy", "n=2048", "sgemm", "GFLOP/s", r,
                                value=2 * n ** 3 / r["median"] / 1e9))

    m = 64 << 20  # fp64 elements per array: 512 MiB each
    x, y, z = np.zeros(m), np.ones(m), np.ones(m)

    def triad():
        np.multiply(z, 3.0, out=x)
        np.add(x, y, out=x)
    r = benchlib.measure(triad, reps=5, warmup=1)
    # numpy does the triad in two passes: 5 arrays of traffic, not STREAM's 3
    rows.append(benchlib.record(out, "machine", "numpy", "512MiB", "triad", "GB/s", r,
                                value=5 * 8 * m / r["median"] / 1e9))
    return 0


if __name__ == "__main__":
    sys.exit(main())
