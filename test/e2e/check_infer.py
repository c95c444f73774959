#!/usr/bin/env python3
"""End-to-end check of a compiled bmb infer executable against Hugging Face.

  check_infer.py EXE CONFIG WORKDIR               numerics and greedy tokens
  check_infer.py --self-test CONFIG WORKDIR       the reference side alone
  check_infer.py --bad-inputs EXE CONFIG WORKDIR  refusals of bad input

CONFIG is a name from configs.py; the Hugging Face checkpoint and its
reference outputs are built once per config under WORKDIR (hf_reference.py)
and reused while the sources that made them are unchanged.

The numerics check runs
  EXE --load DIR --prompt-ids P --sampling greedy --ignore-eos --max-tokens 32
      --output ids --dump OUT
and requires, for the prefill's last row (step 0) and every decode step,
max|ours - ref| / max|ref| <= 1e-4 on the logits and the same 32 greedy
tokens as HF's cached decode. Encoders (BERT): last_hidden_state and
pooler_output to 1e-4. Small configs are run again with --threads 1, and
configs with a tokenizer once more from a text prompt (--tokenizer DIR
--prompt TEXT), which also checks our tokenizer's ids (and the streamed
text) against HF's.
"""

import glob
import os
import re
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import configs  # noqa: E402
import harness  # noqa: E402
import hf_reference  # noqa: E402

THREADS_CHECK_MAX_PARAMS = 20_000_000  # a second run with --threads 1 below this


def parse_ids(stdout, prompt, n):
    """The generated ids printed by --output ids (the prompt, if echoed, is
    dropped)."""
    ids = [int(x) for x in re.findall(r"-?\d+", harness.text(stdout))]
    if len(ids) == len(prompt) + n and ids[:len(prompt)] == list(prompt):
        return ids[len(prompt):]
    return ids


def run_ours(fails, label, cmd):
    p = harness.run(cmd)
    if p.returncode != 0:
        how = "timed out" if p.returncode is None else "exited with %s" % p.returncode
        fails.add("%s: the executable %s\nstderr:\n%s" % (label, how, harness.tail(p.stderr)))
        return None
    return p


def check_logit_dumps(fails, label, out, ref_logits, steps, hint=""):
    """step0000_logits.npy .. against ref rows; needs >= steps files (one per
    token chosen), allows one more (the logits after the last token)."""
    files = sorted(glob.glob(os.path.join(out, "step*_logits.npy")))
    names = [os.path.basename(f) for f in files]
    want = ["step%04d_logits.npy" % k for k in range(len(files))]
    if not fails.check(names == want, "%s: dump files are not step0000.. in order: %s"
                       % (label, names[:5])):
        return
    if not fails.check(steps <= len(files) <= steps + 1, "%s: %d logits dumps, expected %d "
                       "(prefill + one per decode step) or %d" % (label, len(files), steps,
                                                                steps + 1)):
        if not files:
            return
    errs, bad = [], []
    vocab = ref_logits.shape[1]
    for k, f in enumerate(files[:len(ref_logits)]):
        a = np.load(f)
        # [1, vocab] is the documented shape; extra leading 1s hold the same
        # numbers and are only noted.
        if not fails.check(a.shape[-1:] == (vocab,) and a.size == vocab, "%s: %s has shape "
                           "%s, expected (1, %d)" % (label, names[k], a.shape, vocab)):
            return
        if k == 0 and a.shape != (1, vocab):
            print("%s: note: dumps have shape %s, not (1, %d)" % (label, a.shape, vocab))
        a = a.reshape(1, vocab)
        e = harness.rel_err(a[0], ref_logits[k])
        errs.append(e)
        if e > harness.TOL:
            bad.append((k, e, int(a[0].argmax()), int(ref_logits[k].argmax()),
                        float(np.abs(ref_logits[k]).max())))
    kind = lambda k: "prefill" if k == 0 else "decode step %d" % k  # noqa: E731
    print("%s: logits of %d steps, max rel err %.2e (%s)"
          % (label, len(errs), max(errs), kind(int(np.argmax(errs)))))
    if bad:
        k, e, ao, ar, m = bad[0]
        fails.add("%s: logits of step %d (%s) differ: max|ours-ref|/max|ref| = %.2e > %.0e "
                  "(max|ref| %.3g; argmax ours %d, ref %d); %d of %d steps fail: %s%s"
                  % (label, k, kind(k), e, harness.TOL, m, ao, ar, len(bad), len(errs),
                     ", ".join("%d:%.1e" % (b[0], b[1]) for b in bad[:8]),
                     hint if k == 0 else ""))


def check_tokens(fails, label, stdout, prompt, ref_tokens):
    got = parse_ids(stdout, prompt, len(ref_tokens))
    want = ref_tokens.tolist()
    if got == want:
        print("%s: %d greedy tokens identical" % (label, len(want)))
        return
    first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    fails.add("%s: greedy tokens differ from token %d on (got %d tokens, want %d)\n ours %s\n "
              "ref  %s" % (label, first, len(got), len(want), got, want))


def check_encoder_dumps(fails, label, out, hidden, pooled):
    for name, ref in (("hidden", hidden), ("pooled", pooled)):
        path = os.path.join(out, "step0000_%s.npy" % name)
        if not fails.check(os.path.exists(path), "%s: no %s" % (label, path)):
            continue
        a = np.load(path)
        rows = ref.shape[0]
        # As for logits: leading 1s (a batch axis) beyond the documented
        # [rows, dim] are only noted.
        if a.ndim > 2 and all(n == 1 for n in a.shape[:-2]):
            print("%s: note: %s has shape %s, not (rows, %d)" % (label, name, a.shape,
                                                                  ref.shape[1]))
            a = a.reshape(a.shape[-2:])
        # Rows past the prompt (padding up to a fixed length) are not compared.
        if not fails.check(a.ndim == 2 and a.shape[1] == ref.shape[1] and a.shape[0] >= rows,
                           "%s: %s has shape %s, expected (%d.., %d)"
                           % (label, name, a.shape, rows, ref.shape[1])):
            continue
        e = harness.rel_err(a[:rows], ref)
        print("%s: %s %s, max rel err %.2e" % (label, name, a.shape, e))
        if e > harness.TOL:
            worst = np.unravel_index(np.argmax(np.abs(a[:rows] - ref)), ref.shape)
            fails.add("%s: %s differs: max|ours-ref|/max|ref| = %.2e > %.0e (worst at %s)"
                      % (label, name, e, harness.TOL, tuple(int(i) for i in worst)))


def expected_text(d, tokens):
    """(raw bytes, HF's decoded str) of generated GPT-2 BPE tokens."""
    from transformers.models.gpt2.tokenization_gpt2 import bytes_to_unicode
    import hf_tokenizers
    tok = hf_tokenizers.load(d)
    dec = {u: b for b, u in bytes_to_unicode().items()}
    raw = bytes(dec[ch] for t in tok.convert_ids_to_tokens(tokens) for ch in t)
    return raw, tok.decode(tokens, skip_special_tokens=True)


def check_text_output(fails, exe, d, tokens):
    """--output text: the streamed bytes (or HF's decode of them)."""
    p = run_ours(fails, "text output", [exe, "--load", d, "--tokenizer", d, "--prompt",
                                        hf_reference.TEXT_PROMPT, "--sampling", "greedy",
                                        "--ignore-eos", "--max-tokens", str(len(tokens)),
                                        "--output", "text"])
    if p is None:
        return
    raw, decoded = expected_text(d, tokens)
    got = p.stdout.rstrip(b"\n")
    prompt = hf_reference.TEXT_PROMPT.encode()
    ok = got in (raw, prompt + raw) or harness.text(got) in (decoded,
                                                             hf_reference.TEXT_PROMPT + decoded)
    print("text output: %r (HF: %r)" % (got, decoded))
    fails.check(ok, "text output %r is neither the generated bytes %r nor HF's decode %r"
                % (got, raw, decoded))


def run_numerics(c, exe, d, fails, label, extra):
    out = os.path.join(d + "-out", label.replace(" ", "_").replace("=", ""))
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    prompt = np.load(os.path.join(d, "prompt_ids.npy")).tolist()
    cmd = [exe, "--load", d, "--prompt-ids", ",".join(map(str, prompt)), "--dump", out] + extra
    if c["family"] == "bert":
        if run_ours(fails, label, cmd):
            check_encoder_dumps(fails, label, out, np.load(os.path.join(d, "ref_hidden.npy")),
                                np.load(os.path.join(d, "ref_pooled.npy")))
        return
    cmd += ["--sampling", "greedy", "--ignore-eos", "--max-tokens", str(c["steps"]),
            "--output", "ids"]
    p = run_ours(fails, label, cmd)
    if p:
        check_logit_dumps(fails, label, out, np.load(os.path.join(d, "ref_logits.npy")),
                          c["steps"])
        check_tokens(fails, label, p.stdout, prompt, np.load(os.path.join(d, "ref_tokens.npy")))


def run_text(c, exe, d, fails):
    out = os.path.join(d + "-out", "text")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    ids = np.load(os.path.join(d, "text_prompt_ids.npy")).tolist()
    cmd = [exe, "--load", d, "--tokenizer", d, "--prompt", hf_reference.TEXT_PROMPT,
           "--dump", out]
    if c["family"] == "bert":
        if run_ours(fails, "text prompt", cmd):
            check_encoder_dumps(fails, "text prompt", out,
                                np.load(os.path.join(d, "text_ref_hidden.npy")),
                                np.load(os.path.join(d, "text_ref_pooled.npy")))
        return
    tokens = np.load(os.path.join(d, "text_ref_tokens.npy"))
    p = run_ours(fails, "text prompt", cmd + ["--sampling", "greedy", "--ignore-eos",
                                              "--max-tokens", str(len(tokens)), "--output",
                                              "ids"])
    if p:
        check_logit_dumps(fails, "text prompt", out,
                          np.load(os.path.join(d, "text_ref_logits.npy")), len(tokens),
                          hint="; if the --prompt-ids run passed, our tokenizer's ids for "
                          "%r differ from HF's %s" % (hf_reference.TEXT_PROMPT, ids))
        check_tokens(fails, "text prompt", p.stdout, ids, tokens)
        check_text_output(fails, exe, d, tokens.tolist())


def check(exe, c, workdir):
    fails = harness.Failures("check_infer %s" % c["name"])
    if not os.access(exe, os.X_OK):
        harness.die("%s is not an executable" % exe)
    d = hf_reference.ensure(c, workdir)
    meta = harness.load_json(os.path.join(d, "meta.json"))
    print("reference: %s (%d parameters)" % (d, meta["params"]))
    run_numerics(c, exe, d, fails, "default threads", [])
    if meta["params"] <= THREADS_CHECK_MAX_PARAMS:
        run_numerics(c, exe, d, fails, "threads=1", ["--threads", "1"])
    if c["tokenizer"]:
        run_text(c, exe, d, fails)
    return fails.exit_code()


def main(argv):
    if len(argv) == 4 and argv[1] == "--self-test":
        import self_test
        return self_test.main(configs.get(argv[2]), os.path.abspath(argv[3]))
    if len(argv) == 5 and argv[1] == "--bad-inputs":
        import bad_inputs
        return bad_inputs.main(os.path.abspath(argv[2]), configs.get(argv[3]),
                               os.path.abspath(argv[4]))
    if len(argv) == 4 and not argv[1].startswith("-"):
        return check(os.path.abspath(argv[1]), configs.get(argv[2]), os.path.abspath(argv[3]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
