"""Shared pieces of the end-to-end checks: running a command with a time
limit, the relative error we compare by, and a list of failures that is
reported at the end (so one run shows every problem, not the first)."""

import json
import subprocess
import sys

import numpy as np

TOL = 1e-4  # max |ours - ref| / max |ref|, per tensor and step


def rel_err(ours, ref):
    """max |ours - ref| / max |ref|; inf when ours has NaN/inf."""
    ours = np.asarray(ours, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if not np.all(np.isfinite(ours)):
        return float("inf")
    return float(np.abs(ours - ref).max() / max(np.abs(ref).max(), 1e-30))


def run(cmd, timeout=600, quiet=False):
    """Runs cmd; returns the CompletedProcess (text, both streams captured).
    A time-out comes back as returncode None with what was captured."""
    if not quiet:
        print("$ " + " ".join(cmd), flush=True)
    try:
        return subprocess.run(cmd, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, None, e.stdout or b"", e.stderr or b"")


def text(b):
    return b.decode("utf-8", errors="replace") if isinstance(b, bytes) else (b or "")


def tail(b, lines=15):
    return "\n".join(text(b).rstrip().splitlines()[-lines:])


class Failures:
    """Collects failure messages; `exit_code` prints them and returns 0/1."""

    def __init__(self, what):
        self.what = what
        self.items = []

    def add(self, msg):
        print("FAIL: " + msg, flush=True)
        self.items.append(msg)

    def check(self, ok, msg):
        if not ok:
            self.add(msg)
        return ok

    def exit_code(self):
        if self.items:
            print("\n%s: %d failure(s):" % (self.what, len(self.items)))
            for m in self.items:
                print("  - " + m.splitlines()[0])
            return 1
        print("%s: all checks passed" % self.what)
        return 0


def load_json(path):
    with open(path) as f:
        return json.load(f)


def die(msg):
    print("error: " + msg, file=sys.stderr)
    sys.exit(2)
