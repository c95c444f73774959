"""No hidden state between passes: every IR dump re-emits the same source.

Runs `bmbc FILE --emit=cuda` for the reference source, then
`bmbc FILE --dump-ir=after-all`, splits the output into one module per pass,
and for each dump checks that (1) `bmb-opt` reads it and prints it back
unchanged and (2) `bmbc -x mlir DUMP --emit=cuda` (which runs the rest of the
pipeline; passes already done are no-ops) emits byte-identical source. A pass
that kept state outside the IR would break (2).

usage: check_dumps.py --bmbc BMBC --bmb-opt BMBOPT FILE [BMBC ARGS...]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.stderr.write(p.stderr.decode("utf-8", "replace"))
        raise SystemExit("FAIL: %s exited with %d" % (" ".join(cmd), p.returncode))
    return p.stdout.decode("utf-8")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bmbc", required=True)
    ap.add_argument("--bmb-opt", required=True)
    ap.add_argument("file")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    o = ap.parse_args()
    reference = run([o.bmbc, o.file, "--emit=cuda"] + o.args)
    dumps = run([o.bmbc, o.file, "--dump-ir=after-all"] + o.args)
    parts = re.split(r"^// -----// IR Dump After (.*?) //----- //\n", dumps, flags=re.M)
    names, bodies = parts[1::2], parts[2::2]
    if len(bodies) < 6:
        raise SystemExit("FAIL: expected a dump per pass, got %d" % len(bodies))
    with tempfile.TemporaryDirectory(prefix="bmb-dumps-") as tmp:
        for i, (name, body) in enumerate(zip(names, bodies)):
            path = os.path.join(tmp, "dump%02d.mlir" % i)
            with open(path, "w") as f:
                f.write(body)
            printed = run([o.bmb_opt, path])
            again = run([o.bmb_opt, path, "-o", "-"])
            if printed != again:
                raise SystemExit("FAIL: bmb-opt does not print the dump after %s stably" % name)
            emitted = run([o.bmbc, "-x", "mlir", path, "--emit=cuda"])
            if emitted != reference:
                raise SystemExit("FAIL: the dump after %s emits a different source" % name)
            print("ok %s" % name)
    print("dumps: %d, all emit the same source" % len(bodies))


if __name__ == "__main__":
    main()
