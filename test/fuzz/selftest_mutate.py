#!/usr/bin/env python3
"""Self-test of mutate_bmbc.py: runs it against stand-in compilers whose
behaviour is known and checks that it passes a well-behaved one and catches
each kind of failure (signal, timeout, odd exit code, crash report, missing or
out-of-range location). Python 3 standard library only; takes a few seconds.
"""

import os
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS = os.path.join(HERE, "mutate_bmbc.py")

# Each stand-in reads the file it is given and behaves as the name says.
PRELUDE = "#!%s\nimport os, signal, sys, time\ndata = open(sys.argv[1], 'rb').read()\n" % sys.executable
GOOD = PRELUDE + """
if len(data) % 2:
    sys.stderr.write("%s:1:1: error: odd\\n  x\\n  ^\\n" % sys.argv[1])
    sys.exit(1)
print("module {}")
"""
FAKES = {
    "good": (GOOD, None),
    "segv": (PRELUDE + "os.kill(os.getpid(), signal.SIGSEGV)\n", "killed by signal SIGSEGV"),
    "hang": (PRELUDE + "time.sleep(60)\n", "timeout"),
    "exit2": (PRELUDE + "sys.exit(2)\n", "exit code 2"),
    "llvm-error": (PRELUDE + "sys.stderr.write('LLVM ERROR: boom\\n'); sys.exit(1)\n",
                   "crash report"),
    "file-level": (PRELUDE + "sys.stderr.write('error: %s declares no job\\n' % sys.argv[1]); sys.exit(1)\n",
                   None),
    "unlocated": (PRELUDE + "sys.stderr.write('error: no place\\n'); sys.exit(1)\n",
                  "without a located"),
    "bad-line": (PRELUDE + "sys.stderr.write('%s:100000:1: error: far\\n' % sys.argv[1]); sys.exit(1)\n",
                 "bad location"),
    "error-exit0": (PRELUDE + "sys.stderr.write('%s:1:1: error: but\\n' % sys.argv[1])\n",
                    "exit 0 but stderr reports an error"),
}


def main():
    failures = 0
    with tempfile.TemporaryDirectory(prefix="bmb-fuzz-selftest-") as tmp:
        for name, (text, want) in FAKES.items():
            exe = os.path.join(tmp, "bmbc-" + name)
            with open(exe, "w") as f:
                f.write(text)
            os.chmod(exe, os.stat(exe).st_mode | stat.S_IXUSR)
            count = 1 if name == "hang" else (30 if want is None else 8)
            proc = subprocess.run(
                [sys.executable, HARNESS, "--bmbc", exe, "--count", str(count),
                 "--timeout", "1", "--out", os.path.join(tmp, "out-" + name)],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
            ok = (proc.returncode == 0) if want is None else \
                (proc.returncode == 1 and want in proc.stdout)
            last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
            print("%-12s %s (exit %d, %s)" % (name, "ok" if ok else "WRONG", proc.returncode, last))
            if not ok:
                failures += 1
                print(proc.stdout[-3000:])
    print("%d passed, %d failed" % (len(FAKES) - failures, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
