"""Bad input to a compiled infer executable (check_infer.py --bad-inputs):
each case must end with a non-zero exit status (not a crash by signal, not a
hang) and a message naming the problem. The messages are written by the
runtime's authors, so each case accepts any of a few key words; the actual
messages are printed for review.

A control run with good input comes first: if it fails, the refusals below
would prove nothing.
"""

import os
import shutil

import numpy as np

import configs
import harness
import hf_reference

TIMEOUT = 120


def make_truncated(src, dst, keep):
    """A copy of checkpoint dir src whose model.safetensors keeps `keep`
    bytes (an int) or is replaced by the bytes `keep`."""
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    shutil.copy(os.path.join(src, "config.json"), dst)
    with open(os.path.join(src, "model.safetensors"), "rb") as f:
        data = f.read()
    with open(os.path.join(dst, "model.safetensors"), "wb") as f:
        f.write(data[:keep] if isinstance(keep, int) else keep)
    return dst


def cases(c, d, bad):
    """(name, arguments replacing the good ones, key words) per case."""
    prompt = np.load(os.path.join(d, "prompt_ids.npy")).tolist()
    half = hf_reference.ensure(configs.smaller(c), bad, references=False)
    size = os.path.getsize(os.path.join(d, "model.safetensors"))
    ids = lambda p: ",".join(map(str, p))  # noqa: E731
    missing = os.path.join(bad, "no-such-checkpoint")
    not_found = ["no-such-checkpoint", "not found", "no such", "exist", "cannot open", "missing"]
    junk = b'{"wte.w": {"dtype": "F32", "shape": [1, 2'  # cut short: not JSON
    empty = os.path.join(bad, "empty-dir")
    os.makedirs(empty, exist_ok=True)
    truncated = ["truncat", "short", "corrupt", "end of file", "eof", "invalid", "bytes", "size"]
    return [
        ("missing checkpoint dir", {"--load": missing}, not_found),
        ("checkpoint of another size (dim %d, not %d)" % (c["dim"] // 2, c["dim"]),
         {"--load": half}, ["shape", "mismatch", "expected", "size"]),
        ("model.safetensors truncated in the data (60%% of %d bytes)" % size,
         {"--load": make_truncated(d, os.path.join(bad, "truncated-data"), size * 6 // 10)},
         truncated),
        ("model.safetensors truncated in the header (6 bytes)",
         {"--load": make_truncated(d, os.path.join(bad, "truncated-header"), 6)},
         truncated + ["header"]),
        ("model.safetensors whose header is not JSON",
         {"--load": make_truncated(d, os.path.join(bad, "corrupt-header"),
                                   len(junk).to_bytes(8, "little") + junk)},
         ["header", "json", "corrupt", "invalid", "parse", "expected"]),
        ("checkpoint dir without model.safetensors", {"--load": empty},
         not_found + ["model.safetensors"]),
        ("prompt longer than the context (%d > %d)" % (c["ctx"] + 1, c["ctx"]),
         {"--prompt-ids": ids((prompt * (c["ctx"] // len(prompt) + 2))[:c["ctx"] + 1])},
         ["context", "ctx", "too long", "exceed", "longer", "maximum", "limit"]),
        ("prompt id out of the vocabulary (%d >= %d)" % (c["vocab"], c["vocab"]),
         {"--prompt-ids": ids(prompt[:3] + [c["vocab"]])},
         ["vocab", "range", "invalid", str(c["vocab"])]),
        ("unknown flag", {"--no-such-flag": None}, ["no-such-flag", "unknown", "unrecognized"]),
    ]


def command(exe, c, d, prompt, override):
    args = {"--load": d, "--prompt-ids": ",".join(map(str, prompt))}
    if c["family"] != "bert":
        args.update({"--sampling": "greedy", "--ignore-eos": None, "--max-tokens": "4",
                     "--output": "ids"})
    args.update(override)
    cmd = [exe]
    for k, v in args.items():
        cmd += [k] if v is None else [k, v]
    return cmd


def main(exe, c, workdir):
    fails = harness.Failures("bad inputs %s" % c["name"])
    d = hf_reference.ensure(c, workdir)
    bad = os.path.join(workdir, c["name"] + "-bad")
    os.makedirs(bad, exist_ok=True)
    prompt = np.load(os.path.join(d, "prompt_ids.npy")).tolist()

    p = harness.run(command(exe, c, d, prompt, {}), timeout=TIMEOUT)
    if p.returncode != 0:
        fails.add("control run with good input exited with %s:\n%s"
                  % (p.returncode, harness.tail(p.stderr)))
        return fails.exit_code()
    print("control run: exit 0\n")

    for name, override, words in cases(c, d, bad):
        print("-- %s" % name)
        p = harness.run(command(exe, c, d, prompt, override), timeout=TIMEOUT)
        msg = (harness.text(p.stderr) + harness.text(p.stdout)).strip()
        print("   exit %s; message:\n   %s" % (p.returncode, "\n   ".join(msg.splitlines()[-6:])))
        if p.returncode is None:
            fails.add("%s: no exit within %d s" % (name, TIMEOUT))
        elif p.returncode < 0:
            fails.add("%s: killed by signal %d (a crash, not a refusal)" % (name, -p.returncode))
        elif p.returncode == 0:
            fails.add("%s: exit status 0; the input was accepted" % name)
        elif not any(w.lower() in msg.lower() for w in words):
            fails.add("%s: the message names none of %s: %r" % (name, words, msg[-300:]))
        elif "internal error" in msg.lower() or "assert" in msg.lower():
            fails.add("%s: an internal error, not a refusal: %r" % (name, msg[-300:]))
    return fails.exit_code()
