#!/usr/bin/env python3
"""Robustness test for bmbc: mutated .bmb files must fail cleanly.

Takes the .bmb files under stdlib/ and models/, derives a few hundred mutants
from them (byte flips, token deletions and duplications, truncations, splices
between files, deep nesting, huge numbers, random bytes, special imports such
as "/dev/zero", self and cyclic imports, unicode, ...), runs

    bmbc <file> --emit=mlir

(with `--job NAME`, a job of the original file, for most cases: the job's
whole pipeline runs) on each in its own temporary directory with a time
limit, and checks:

  * bmbc exits with 0 or 1: no signal (crash, abort), no other exit code, no
    timeout;
  * nothing on stderr looks like a crash report (LLVM ERROR, stack dump,
    sanitizer report, uncaught exception, assertion);
  * on exit 1, stderr has at least one *located* error: a line
        <path>:<line>:<col>: error: <message>
    whose line and column lie inside <path> (1-based, column in bytes; up to
    two past the end of the line, for errors at the end of a line or file). An error about the input file as a whole (it
    declares no job, has no job of that name) has no line; it may be printed
    as `<path>: error: <message>`, or as `error: <message>` when the message
    names the input file. An `error:` that names no file does not count:
    problems with imports (unreadable, non-regular, too large, missing,
    cyclic) are reported at the `import` line that caused them;
  * on exit 0, stderr has no `error:` line.

The mutants are a pure function of the seed and the input files. Failing cases
are copied to --out (one directory each, with a repro.sh); the run ends with
`N passed, N failed` and exits 1 if any case failed. Python 3 standard
library only.
"""

import argparse
import concurrent.futures
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# --- the corpus --------------------------------------------------------------

TOKEN_RE = re.compile(
    rb'//[^\n]*|"(?:[^"\\\n]|\\.)*"?|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?'
    rb'|[A-Za-z_][A-Za-z0-9_]*|->|\.\.\.|\S')
NUMBER_RE = re.compile(rb'(?<![A-Za-z_0-9.])\d+(?:\.\d*)?(?:[eE][-+]?\d+)?')

KEYWORDS = [b"import", b"layer", b"model", b"param", b"forward", b"return",
            b"repeat", b"train", b"infer", b"tune", b"compress", b"recipe",
            b"template", b"verbalizer", b"checkpoint", b"for", b"from", b"with",
            b"if", b"true", b"false", b"int", b"float", b"bool", b"i32", b"...",
            b"concat", b"transpose", b"tied", b'"{i}"']
WEIRD_TOKENS = [b"(", b")", b"{", b"}", b"[", b"]", b",", b"=", b":", b"->",
                b".", b"+", b"-", b"*", b"/", b"@", b"#", b"$", b"\\", b"'",
                b'"', b"`", b";", b"?", b"!", b"&&", b"||", b"<", b">",
                b"/*", b"*/", b"//", b"0", b"-0", b"1e", b"0x1F", b"..",
                b"_", b"__", b"B", b"T", b"x"]
HUGE_NUMBERS = [b"0", b"-1", b"1", b"2147483647", b"2147483648", b"4294967296",
                b"9223372036854775807", b"9223372036854775808",
                b"18446744073709551616", b"99999999999999999999999999999999",
                b"1" + b"0" * 400, b"1e308", b"1e309", b"1e-400", b"-1e999",
                b"0.0", b"00000000000000000001", b"1.", b"1e99999999999"]
# Most important first: an operator's variants are taken in turn.
SPECIAL_IMPORTS = [b"/dev/zero", b"/dev/stdin", b"/proc/self/mem", b"",
                   b"/dev/urandom", b"/", b"nonexistent.bmb", b"x" * 5000,
                   b"/proc/self/maps", b"a\x00b.bmb", b"stdlib",
                   b"a/" * 2000 + b"b.bmb", b"/dev/null", b"..",
                   b"../../../../../../../../etc/passwd", b"stdlib/nope.bmb",
                   b"%s%n%x", "\u00fc\u00f1\u00ee.bmb".encode(), b"stdlib/",
                   b".", b"\\", b"stdlib/nn.bmb\nimport"]
UNICODE_BITS = ["\u00e9", "\u4e2d\u6587", "\U0001F642", "\u202e", "\ufeff",
                "\u200b", "\u0000", "\u0301", "\uffff", "\U0010FFFF"]
BAD_UTF8 = [b"\xff", b"\xfe\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\x80",
            b"\xe2\x82", b"\xf8\x88\x80\x80\x80", b"\xf4\x90\x80\x80"]


def load_corpus(root):
    corpus = []
    for sub in ("stdlib", "models"):
        d = os.path.join(root, sub)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith(".bmb"):
                with open(os.path.join(d, name), "rb") as f:
                    corpus.append((sub + "/" + name, f.read()))
    return corpus


# --- mutations: each takes (rng, data, ctx) and returns new bytes ------------

def tokens(data):
    return [(m.start(), m.end()) for m in TOKEN_RE.finditer(data)]


def cycle(ctx, seq):
    """The operator's k-th use takes variant k: every variant gets its turn."""
    return seq[ctx["k"] % len(seq)]


def pick_span(rng, data):
    toks = tokens(data)
    if not toks:
        return len(data), len(data)
    return toks[rng.randrange(len(toks))]


def insert_at_token(rng, data, piece):
    start, _ = pick_span(rng, data)
    return data[:start] + piece + data[start:]


def m_byte_flip(rng, data, ctx):
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if b:
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
    return bytes(b)


def m_random_bytes(rng, data, ctx):
    piece = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    i = rng.randint(0, len(data))
    return data[:i] + piece + data[i:]


def m_truncate(rng, data, ctx):
    return data[:rng.randint(0, len(data))]


def m_token_delete(rng, data, ctx):
    for _ in range(rng.randint(1, 3)):
        s, e = pick_span(rng, data)
        data = data[:s] + data[e:]
    return data


def m_token_duplicate(rng, data, ctx):
    toks = tokens(data)
    if not toks:
        return data
    i = rng.randrange(len(toks))
    j = min(len(toks) - 1, i + rng.randint(0, 6))
    s, e = toks[i][0], toks[j][1]
    return data[:e] + b" " + data[s:e] + data[e:]


def m_token_replace(rng, data, ctx):
    pool = KEYWORDS + WEIRD_TOKENS + ctx["all_tokens"]
    for _ in range(rng.randint(1, 3)):
        s, e = pick_span(rng, data)
        data = data[:s] + rng.choice(pool) + data[e:]
    return data


def m_lines(rng, data, ctx):
    lines = data.split(b"\n")
    if len(lines) < 2:
        return data + b"\n" + data
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    op = rng.randrange(3)
    if op == 0:
        del lines[i]
    elif op == 1:
        lines.insert(j, lines[i])
    else:
        lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def m_splice(rng, data, ctx):
    _, other = rng.choice(ctx["corpus"])
    a = rng.randint(0, len(data))
    b = rng.randint(0, len(other))
    if rng.random() < 0.5:
        return data[:a] + other[b:]
    # a whole layer/model from the other file dropped into this one
    return data[:a] + b"\n" + other[b:b + rng.randint(1, 800)] + b"\n" + data[a:]


def m_deep_nesting(rng, data, ctx):
    n = cycle(ctx, [100000, 64, 10000, 500, 2000])
    shapes = [
        b"(" * n + b"x" + b")" * n,
        b"(" * n,
        b")" * n,
        b"{" * n + b"}" * n,
        b"[" * n + b"1" + b"]" * n,
        b"-" * n + b"1",
        b"x" + b" + x" * n,
        b"f(" * n + b"x" + b")" * n,
        b"a." * n + b"b",
        b"if c " * n,
        b"x = " * n + b"1",
        b"layer L(x: int) {\n" * min(n, 5000),
    ]
    return insert_at_token(rng, data, cycle(ctx, shapes))


def m_huge_number(rng, data, ctx):
    nums = list(NUMBER_RE.finditer(data))
    if not nums:
        return insert_at_token(rng, data, rng.choice(HUGE_NUMBERS))
    for _ in range(rng.randint(1, 3)):
        m = rng.choice(nums)
        data = data[:m.start()] + rng.choice(HUGE_NUMBERS) + data[m.end():]
        nums = list(NUMBER_RE.finditer(data))
        if not nums:
            break
    return data


def m_special_import(rng, data, ctx):
    line = b'import "' + cycle(ctx, SPECIAL_IMPORTS) + b'"\n'
    if rng.random() < 0.5:
        return line + data
    lines = data.split(b"\n")
    lines.insert(rng.randint(0, len(lines)), line.rstrip(b"\n"))
    return b"\n".join(lines)


def m_self_import(rng, data, ctx):
    name = ctx["main"].rsplit("/", 1)[-1].encode()
    kind = cycle(ctx, [0, 1, 2, 3])
    if kind == 0:
        return b'import "' + name + b'"\n' + data
    if kind == 1:
        return b'import "./x/../' + name + b'"\n' + data
    # a cycle through a second file: main -> other.bmb -> main
    ctx["extra"]["other.bmb"] = (b'import "' + name + b'"\n' +
                                 (b"" if kind == 2 else rng.choice(ctx["corpus"])[1]))
    return b'import "other.bmb"\n' + data


def m_unicode(rng, data, ctx):
    kind = cycle(ctx, [0, 1, 2, 3, 4, 5])
    if kind == 0:
        return insert_at_token(rng, data, rng.choice(UNICODE_BITS).encode("utf-8", "surrogatepass"))
    if kind == 1:
        return insert_at_token(rng, data, rng.choice(BAD_UTF8))
    if kind == 2:
        return "\ufeff".encode() + data
    if kind == 3:  # an identifier renamed to a non-ASCII one
        idents = [m for m in re.finditer(rb"[A-Za-z_][A-Za-z0-9_]*", data)]
        if idents:
            m = rng.choice(idents)
            data = data[:m.start()] + "\u00e9t\u00e9_\u03bb".encode() + data[m.end():]
        return data
    if kind == 4:  # other line endings
        return data.replace(b"\n", rng.choice([b"\r\n", b"\r", b"\x0b", b"\x0c", b"\x85"]))
    return insert_at_token(rng, data, b'"' + "\u2603\U0001F600".encode() + b'"')


def m_whole_file(rng, data, ctx):
    return cycle(ctx, [
        b"",
        b"   \n\t\n",
        b"// only a comment",
        b"/* unterminated",
        b'import "stdlib/nn.bmb',
        data + b"\n" + data,  # everything defined twice
        b"a" * 300000,
        b"\n" * 200000,
        b"\x00" * 4096,
        b"model M(" + b"a: int = 1, " * 20000 + b") {}",
        data.replace(b" ", b""),
        data.replace(b"\n", b" "),
        b"layer L(x: int) { forward(y) = y }\n" * 3000,
    ])


def m_keyword(rng, data, ctx):
    snippets = [rng.choice(KEYWORDS), b"repeat(0)", b"repeat(-1)",
                b"repeat(100000000000)", b"param p: [0] = zeros",
                b"param p: [-1, 99999999999999] = zeros", b"forward(x) = x",
                b"return", b"model M = M", b"layer", b"train t for", b"infer i for X {}",
                b"import", b"x: [..., ...]", b"[B, T, B, T]", b"= = =", b"-> ->"]
    return insert_at_token(rng, data, b" " + rng.choice(snippets) + b" ")


MUTATIONS = [
    ("byte_flip", m_byte_flip),
    ("random_bytes", m_random_bytes),
    ("truncate", m_truncate),
    ("token_delete", m_token_delete),
    ("token_duplicate", m_token_duplicate),
    ("token_replace", m_token_replace),
    ("lines", m_lines),
    ("splice", m_splice),
    ("deep_nesting", m_deep_nesting),
    ("huge_number", m_huge_number),
    ("special_import", m_special_import),
    ("self_import", m_self_import),
    ("unicode", m_unicode),
    ("whole_file", m_whole_file),
    ("keyword", m_keyword),
]
CHEAP = ["byte_flip", "token_delete", "token_duplicate", "token_replace", "lines", "huge_number"]


JOB_RE = re.compile(rb"^[ \t]*(?:train|infer|tune|compress)[ \t]+([A-Za-z_][A-Za-z0-9_]*)", re.M)


def job_names(data):
    return [m.group(1).decode() for m in JOB_RE.finditer(data)]


def make_cases(corpus, count, seed):
    """Returns [(index, op, files{relpath: bytes}, main_relpath, extra_args)]."""
    rng = random.Random(seed)
    all_tokens = sorted({data[s:e] for _, data in corpus for s, e in tokens(data)})
    by_name = dict(MUTATIONS)
    cases = []
    # The unmutated files first: they must pass the same checks.
    for path, data in corpus:
        jobs = job_names(data)
        cases.append((len(cases), "original", {path.rsplit("/", 1)[-1]: data},
                      path.rsplit("/", 1)[-1], ["--job", jobs[0]] if jobs else []))
    models = [c for c in corpus if c[0].startswith("models/")] or corpus
    uses = {}  # op -> how many cases used it so far
    for i in range(count):
        op = MUTATIONS[i % len(MUTATIONS)][0]
        ops = [op]
        if rng.random() < 0.2:
            ops.append(rng.choice(CHEAP))
        src_path, src = rng.choice(corpus)
        files, main = {}, src_path.rsplit("/", 1)[-1]
        main_text = src
        if src_path.startswith("stdlib/") and rng.random() < 0.75 and models:
            # Mutate the stdlib file in place under a model that imports it:
            # imports resolve against the importing file's directory first.
            files_key = src_path
            mpath, main_text = rng.choice(models)
            main = mpath.rsplit("/", 1)[-1]
            files[main] = main_text
        else:
            files_key = main
        # Most runs name a job of the original file, so that the job's
        # whole pipeline runs; some leave the choice to bmbc.
        jobs = job_names(main_text)
        args = ["--job", rng.choice(jobs)] if jobs and rng.random() < 0.85 else []
        ctx = {"corpus": corpus, "all_tokens": all_tokens,
               "main": files_key.rsplit("/", 1)[-1], "extra": {}}
        data = src
        for o in ops:
            ctx["k"] = uses.get(o, 0)
            uses[o] = ctx["k"] + 1
            data = by_name[o](rng, data, ctx)
        files[files_key] = data
        # extra files sit next to the mutated one (imports are relative to it)
        prefix = files_key.rsplit("/", 1)[0] + "/" if "/" in files_key else ""
        for rel, extra in ctx["extra"].items():
            files[prefix + rel] = extra
        cases.append((len(cases), "+".join(ops), files, main, args))
    return cases


# --- running and checking -----------------------------------------------------

LOCATED_RE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): error: ", re.M)
FILE_ERROR_RE = re.compile(r"^(?P<path>[^\s:][^:]*): error: ", re.M)
BARE_ERROR_RE = re.compile(r"^error: (?P<message>.*)$", re.M)
CRASH_MARKERS = ["LLVM ERROR", "Stack dump", "PLEASE submit a bug report",
                 "terminate called", "Assertion `", "AddressSanitizer",
                 "LeakSanitizer", "UndefinedBehaviorSanitizer", "runtime error:",
                 "std::bad_alloc",
                 # bmbc's own words when the IR it generated does not verify:
                 # Sema accepted what the dialect's verifiers reject.
                 "internal error"]
UNCHECKED_DIRS = ("/proc/", "/dev/", "/sys/")


def location_ok(cwd, path, line, col):
    """None if (line, col) lies inside the file, else what is wrong."""
    full = path if os.path.isabs(path) else os.path.join(cwd, path)
    if full.startswith(UNCHECKED_DIRS):
        return None
    if not os.path.isfile(full):
        return "the diagnostic names '%s', which is not a file" % path
    if line < 1 or col < 1:
        return "%s:%d:%d: line and column are 1-based" % (path, line, col)
    with open(full, "rb") as f:
        lines = f.read().split(b"\n")
    if line > len(lines):
        return "%s:%d:%d: the file has %d lines" % (path, line, col, len(lines))
    if col > len(lines[line - 1]) + 2:
        return "%s:%d:%d: line %d has %d bytes" % (path, line, col, line, len(lines[line - 1]))
    return None


def check(cwd, main, rc, out, err, timed_out, timeout):
    """Returns None if the run is acceptable, else the reason it is not."""
    if timed_out:
        return "timeout: still running after %g s" % timeout
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = str(-rc)
        return "killed by signal %s" % name
    if rc not in (0, 1):
        return "exit code %d (want 0 or 1)" % rc
    # Crash reports start at the beginning of a line; the source lines that
    # diagnostics quote are indented, so a mutant's text cannot match.
    for line in err.splitlines():
        if line[:1].isspace():
            continue
        for marker in CRASH_MARKERS:
            if marker in line:
                return "stderr contains a crash report (%r)" % marker
    if rc == 0:
        if re.search(r"(^|: )error: ", err, re.M):
            return "exit 0 but stderr reports an error"
        return None
    located = list(LOCATED_RE.finditer(err))
    for m in located:
        bad = location_ok(cwd, m["path"], int(m["line"]), int(m["col"]))
        if bad:
            return "bad location: " + bad
    if located:
        return None
    for m in FILE_ERROR_RE.finditer(err):
        p = m["path"]
        if os.path.isfile(p if os.path.isabs(p) else os.path.join(cwd, p)):
            return None
    for m in BARE_ERROR_RE.finditer(err):
        if main in m["message"]:
            return None  # about the input file as a whole, and names it
    return "exit 1 without a located 'path:line:col: error:' diagnostic"


def run_case(bmbc, extra_args, workdir, case, timeout):
    index, op, files, main, case_args = case
    cwd = os.path.join(workdir, "case-%04d" % index)
    for rel, data in files.items():
        p = os.path.join(cwd, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
    cmd = [bmbc, main, "--emit=mlir"] + case_args + extra_args
    start = time.monotonic()
    timed_out = False
    proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    secs = time.monotonic() - start
    err_s = err.decode("utf-8", "replace")
    reason = check(cwd, main, proc.returncode, out, err_s, timed_out, timeout)
    return {"index": index, "op": op, "cwd": cwd, "main": main, "rc": proc.returncode,
            "timed_out": timed_out, "secs": secs, "reason": reason,
            "stdout": out, "stderr": err, "cmd": cmd}


def save_failure(outdir, res):
    dst = os.path.join(outdir, "case-%04d-%s" % (res["index"], res["op"].replace("+", "-")))
    shutil.copytree(res["cwd"], dst, dirs_exist_ok=True)
    with open(os.path.join(dst, "stderr.txt"), "wb") as f:
        f.write(res["stderr"][:1 << 20])
    with open(os.path.join(dst, "stdout.txt"), "wb") as f:
        f.write(res["stdout"][:1 << 16])
    with open(os.path.join(dst, "reason.txt"), "w") as f:
        f.write("%s\nexit %s after %.2f s\n" % (res["reason"], res["rc"], res["secs"]))
    repro = os.path.join(dst, "repro.sh")
    args = " ".join("'%s'" % a for a in res["cmd"][1:])
    with open(repro, "w") as f:
        f.write("#!/bin/sh\n# %s\ncd \"$(dirname \"$0\")\" && exec \"${BMBC:-%s}\" %s\n"
                % (res["reason"], res["cmd"][0], args))
    os.chmod(repro, 0o755)
    return dst


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bmbc", required=True, help="path to the bmbc executable")
    ap.add_argument("--src-root", default=os.path.dirname(os.path.dirname(here)),
                    help="checkout whose stdlib/ and models/ are mutated")
    ap.add_argument("--count", type=int, default=400, help="mutants (default 400)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per run")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--mem-limit-mb", type=int, default=4096,
                    help="address-space limit per run (0: none; use 0 under ASan)")
    ap.add_argument("--out", default="fuzz-failures",
                    help="where failing cases are saved (emptied first)")
    ap.add_argument("--only", help="run only the case with this index")
    ap.add_argument("bmbc_args", nargs="*", help="extra bmbc arguments (after --)")
    args = ap.parse_args()

    bmbc = os.path.abspath(args.bmbc)
    if not os.access(bmbc, os.X_OK):
        print("mutate_bmbc: error: %s is not an executable" % bmbc, file=sys.stderr)
        return 2
    corpus = load_corpus(args.src_root)
    if not corpus:
        print("mutate_bmbc: error: no .bmb files under %s/{stdlib,models}" % args.src_root,
              file=sys.stderr)
        return 2
    # Limits are inherited by every bmbc run (set here: preexec_fn is unsafe
    # with threads). No core files.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if args.mem_limit_mb:
        lim = args.mem_limit_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))

    cases = make_cases(corpus, args.count, args.seed)
    if args.only is not None:
        cases = [c for c in cases if c[0] == int(args.only)]
    outdir = os.path.abspath(args.out)
    shutil.rmtree(outdir, ignore_errors=True)

    print("mutate_bmbc: %d cases (%d files, seed %d) through %s, %d jobs, %gs timeout"
          % (len(cases), len(corpus), args.seed, bmbc, args.jobs, args.timeout), flush=True)
    start = time.monotonic()
    results = []
    workdir = tempfile.mkdtemp(prefix="bmb-fuzz-")
    try:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futs = [pool.submit(run_case, bmbc, args.bmbc_args, workdir, c, args.timeout)
                    for c in cases]
            for n, fut in enumerate(concurrent.futures.as_completed(futs), 1):
                res = fut.result()
                if res["reason"]:
                    res["saved"] = save_failure(outdir, res)
                else:
                    res["stderr"] = b""
                res["stdout"] = b""  # only the saved copy is kept
                results.append(res)
                if n % 50 == 0:
                    print("  %d/%d done" % (n, len(cases)), flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    results.sort(key=lambda r: r["index"])
    failed = [r for r in results if r["reason"]]
    # per-operator table
    stats = {}
    for r in results:
        s = stats.setdefault(r["op"].split("+")[0], [0, 0, 0, 0])
        s[0] += 1
        s[1] += r["rc"] == 0 and not r["reason"]
        s[2] += r["rc"] == 1 and not r["reason"]
        s[3] += bool(r["reason"])
    print("%-16s %6s %6s %6s %6s" % ("mutation", "cases", "exit0", "exit1", "FAIL"))
    for op in ["original"] + [m[0] for m in MUTATIONS]:
        if op in stats:
            print("%-16s %6d %6d %6d %6d" % ((op,) + tuple(stats[op])))
    slowest = max(results, key=lambda r: r["secs"])
    print("time: %.1f s wall, slowest case %d (%s) %.2f s"
          % (time.monotonic() - start, slowest["index"], slowest["op"], slowest["secs"]))
    for r in failed:
        print("FAIL case %d (%s): %s\n  saved in %s (run repro.sh)"
              % (r["index"], r["op"], r["reason"], r["saved"]))
        tail = r["stderr"].decode("utf-8", "replace").strip().splitlines()[-6:]
        for line in tail:
            print("  | " + line[:200])
    print("%d passed, %d failed" % (len(results) - len(failed), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
