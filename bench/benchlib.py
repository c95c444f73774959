"""Helpers for bmb's side-by-side benchmarks (Python 3 standard library only).

The machine is shared and small (2 cores), so every measurement here:
  1. waits until the machine is idle (both cores under 10 % busy over 3 s),
  2. times warm-up and timed repetitions, reporting min / median / max,
  3. records the CPU time other processes used meanwhile ("foreign CPU"):
     busy ticks from /proc/stat minus the benchmark's own user+sys time.
A result whose foreign CPU is large compared to its own CPU time is marked
noisy and should be re-run. Results go to one JSON line each (see `record`).
"""

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def _busy_ticks():
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields[:8]) - idle, sum(fields[:8])


def _own_cpu():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def wait_idle(threshold=0.10, window=3.0, max_wait=600.0):
    """Blocks until the machine's busy fraction over `window` s is below
    `threshold`; gives up after `max_wait` s. Returns the seconds waited."""
    start = time.monotonic()
    while True:
        b0, t0 = _busy_ticks()
        time.sleep(window)
        b1, t1 = _busy_ticks()
        busy = (b1 - b0) / max(1, t1 - t0)
        waited = time.monotonic() - start
        if busy < threshold or waited >= max_wait:
            if busy >= threshold:
                print("benchlib: machine still %.0f%% busy after %.0f s; measuring anyway"
                      % (100 * busy, waited), file=sys.stderr)
            return waited


def measure(fn, reps=5, warmup=1):
    """Runs fn() warmup + reps times; returns a dict with the timed samples
    (seconds), their min/median/max and the foreign CPU seconds."""
    for _ in range(warmup):
        fn()
    samples = []
    b0, _ = _busy_ticks()
    own0 = _own_cpu()
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    b1, _ = _busy_ticks()
    own = _own_cpu() - own0
    foreign = max(0.0, (b1 - b0) / TICK - own)
    return {"samples": samples, "min": min(samples), "median": statistics.median(samples),
            "max": max(samples), "own_cpu_s": own, "foreign_cpu_s": foreign,
            "noisy": foreign > 0.1 * max(own, 1e-9) and foreign > 1.0}


def run_command(cmd, **kw):
    """A measure()-able function that runs `cmd` and fails loudly."""
    def fn():
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, **kw)
    return fn


def record(out_path, bench, system, config, metric, unit, result, value=None, **extra):
    """Appends one JSON line to out_path and prints a readable line.
    `value` is the headline figure in `unit` (default: the median time)."""
    row = {"time": time.strftime("%Y-%m-%dT%H:%M:%S"), "host": platform.node(),
           "bench": bench, "system": system, "config": config, "metric": metric,
           "unit": unit, "value": result["median"] if value is None else value}
    row.update({k: result[k] for k in ("min", "median", "max", "own_cpu_s", "foreign_cpu_s", "noisy")})
    row.update(extra)
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "a") as f:
        f.write(json.dumps(row) + "\n")
    print("%-12s %-10s %-12s %-14s %12.4g %-8s (median of %d; foreign CPU %.1f s%s)"
          % (bench, system, config, metric, row["value"], unit, len(result["samples"]),
             result["foreign_cpu_s"], ", NOISY" if result["noisy"] else ""))
    return row


def ratio_table(rows, ours="bmb", higher_is_better=True):
    """Prints ours / reference for every (config, metric) both systems have."""
    by = {}
    for r in rows:
        by.setdefault((r["config"], r["metric"]), {})[r["system"]] = r["value"]
    for (config, metric), systems in sorted(by.items()):
        if ours not in systems:
            continue
        for other, v in sorted(systems.items()):
            if other != ours and v:
                ratio = systems[ours] / v if higher_is_better else v / systems[ours]
                print("%-12s %-14s %s vs %s: %.2fx" % (config, metric, ours, other, ratio))
