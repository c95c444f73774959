#!/usr/bin/env python3
"""Compiles every example of a Markdown document with bmbc.

A fenced block tagged ```bmb is a complete program and must compile (exit 0).
A block tagged ```bmb-error must be rejected: its first line is
`// error: TEXT`, and bmbc must exit with 1 and print TEXT on stderr (and no
"internal error").
Either kind may carry a line `// bmbc: ARGS` among its leading comment lines;
ARGS (for example `--model M` or `--job pretrain`) are passed to bmbc.
Blocks with any other tag (```text, ```sh, ...) are not compiled.

Each block is written to its own file in a fresh temporary directory, so a
block sees only what it imports (the standard library is found by bmbc
itself; --stdlib-root adds its root as an import directory as well).

Prints one line per block and a summary; exits non-zero if any block failed
or the document has fewer than --min-examples compiling blocks.
Python 3 standard library only.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([A-Za-z0-9_+-]*)\s*$")


def extract_blocks(text):
    """Yields (tag, first line number of the body, body) for fenced blocks."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, tag = m.group(1), m.group(2)
        start = i + 1
        j = start
        while j < len(lines) and not (
            lines[j].strip().startswith(fence[0] * len(fence))
            and lines[j].strip().strip(fence[0]) == ""
        ):
            j += 1
        if j == len(lines):
            raise ValueError("line %d: unterminated ``` block" % (i + 1))
        yield tag, start + 1, "\n".join(lines[start:j]) + "\n"
        i = j + 1


def leading_directives(body):
    """The `// key: value` lines before the first line that is not a comment."""
    found = {}
    for line in body.split("\n"):
        s = line.strip()
        if not s.startswith("//"):
            break
        m = re.match(r"//\s*(bmbc|error):\s*(.*?)\s*$", s)
        if m and m.group(1) not in found:
            found[m.group(1)] = m.group(2)
    return found


def run(bmbc, args, path, timeout):
    try:
        p = subprocess.run([bmbc, path] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %d s" % timeout
    except OSError as e:
        return None, "", "cannot run %s: %s" % (bmbc, e)
    return (p.returncode, p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"))


def indent(text):
    return "".join("    | " + l + "\n" for l in text.rstrip("\n").split("\n"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("doc", help="the Markdown file")
    ap.add_argument("--bmbc", default="bmbc", help="the compiler to run")
    ap.add_argument("--stdlib-root", help="passed to bmbc as -I")
    ap.add_argument("--min-examples", type=int, default=30,
                    help="fail if there are fewer ```bmb blocks than this")
    ap.add_argument("--timeout", type=int, default=60,
                    help="seconds per compilation")
    opts = ap.parse_args()

    with open(opts.doc, encoding="utf-8") as f:
        text = f.read()
    name = os.path.basename(opts.doc)
    try:
        blocks = [b for b in extract_blocks(text) if b[0] in ("bmb", "bmb-error")]
    except ValueError as e:
        print("FAIL %s: %s" % (name, e))
        return 1

    # The language reference checks the language: the front end, its
    # diagnostics and the model graph (--emit=bmb), not what the backends
    # implement so far.
    base = ["--emit=bmb"] + (["-I", opts.stdlib_root] if opts.stdlib_root else [])
    passed = failed = good = bad = 0
    with tempfile.TemporaryDirectory(prefix="bmb-doc-") as tmp:
        for n, (tag, line, body) in enumerate(blocks, 1):
            where = "%s:%d" % (name, line)
            d = leading_directives(body)
            args = base + shlex.split(d.get("bmbc", ""))
            problem = None
            first = body.split("\n", 1)[0].strip()
            if tag == "bmb-error" and not (
                    re.match(r"//\s*error:", first) and d.get("error")):
                problem = "a bmb-error block must start with '// error: TEXT'"
            else:
                bdir = os.path.join(tmp, "ex%03d" % n)
                os.mkdir(bdir)
                path = os.path.join(bdir, "example.bmb")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(body)
                code, out, err = run(opts.bmbc, args, path, opts.timeout)
                if code is None:
                    problem = err
                elif tag == "bmb":
                    if code != 0:
                        problem = "expected exit 0, got %d\n%s" % (code, indent(err))
                else:
                    want = d["error"]
                    if code != 1:
                        problem = "expected exit 1, got %d\n%s" % (code, indent(err))
                    elif want not in err:
                        problem = ("stderr does not contain %r\n%s" % (want, indent(err)))
                    elif "internal error" in err:
                        problem = "an internal error\n%s" % indent(err)
            if tag == "bmb":
                good += 1
            else:
                bad += 1
            flags = (" [%s]" % d["bmbc"]) if d.get("bmbc") else ""
            if problem:
                failed += 1
                print("FAIL %s %s%s: %s" % (where, tag, flags, problem))
            else:
                passed += 1
                print("ok   %s %s%s" % (where, tag, flags))

    print("%d blocks (%d bmb, %d bmb-error): %d passed, %d failed"
          % (len(blocks), good, bad, passed, failed))
    if good < opts.min_examples:
        print("FAIL %s: only %d ```bmb blocks; expected at least %d"
              % (name, good, opts.min_examples))
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
