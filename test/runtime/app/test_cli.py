"""The infer command line, driven through hand-written fake programs.

Usage: test_cli.py --lm EXE --lm-no-tokenizer EXE --encoder-pooled EXE
                   --encoder-mean EXE --sampling-hook LIB.so --workdir DIR

The fakes (fake_lm.cpp, fake_encoder.cpp) are tiny deterministic "models";
this script writes their weights with the `safetensors` package, computes
what they must produce with numpy, and checks the executables' stdout,
stderr, exit codes and --dump files (read with np.load). Sampled tokens are
checked against transformers' TopKLogitsWarper on the dumped logits.
"""
import argparse
import ctypes
import os
import re
import shutil
import subprocess
import sys
import unittest

import numpy as np
import torch
from safetensors.numpy import load_file, save_file
from transformers.generation.logits_process import TopKLogitsWarper

parser = argparse.ArgumentParser()
for name in ("--lm", "--lm-no-tokenizer", "--encoder-pooled", "--encoder-mean", "--sampling-hook",
             "--workdir"):
    parser.add_argument(name, required=True)
ARGS, rest = parser.parse_known_args()
for key, value in vars(ARGS).items():  # the executables run with cwd = workdir
    setattr(ARGS, key, os.path.abspath(value))
sys.argv = sys.argv[:1] + rest

V, T, C = 257, 12, 4  # fake_lm.cpp
EOS = 256
EV, ET, EC = 256, 8, 3  # fake_encoder.cpp
WORK = ARGS.workdir


def make_weights():
    rng = np.random.default_rng(0)
    emb = rng.normal(0, 1, (V, V)).astype(np.float32)
    emb[:, ord("a"):ord("z") + 1] += 8  # greedy picks letters: printable output
    emb[:, EOS] = -30
    prev = (0.5 * rng.normal(0, 1, (V, V))).astype(np.float32)
    pos = (0.5 * rng.normal(0, 1, (T, V))).astype(np.float32)
    pos[7, EOS] = 100  # the token after position 7 is EOS
    probe = rng.normal(0, 1, (V, C)).astype(np.float32)
    enc_probe = rng.normal(0, 1, (EV, EC)).astype(np.float32)
    enc_scale = rng.normal(0, 1, (EC,)).astype(np.float32)
    return dict(emb=emb, prev=prev, pos=pos, probe=probe), dict(probe=enc_probe, scale=enc_scale)


LM, ENC = make_weights()
LM_HF = {
    "lm.tables.weight": np.concatenate([LM["emb"], LM["prev"]], axis=0),
    "lm.positions.weight": np.ascontiguousarray(LM["pos"].T),
    "probe.weight": LM["probe"],
}


def lm_logits(seq):
    """fake_lm's logits after the tokens `seq` (positions 0..len-1)."""
    last = len(seq) - 1
    x = LM["emb"][seq[last]] + LM["pos"][last]
    if last > 0:
        x = x + LM["prev"][seq[last - 1]]
    return x


def lm_greedy(prompt, max_tokens=128, stop_at_eos=True):
    """(generated ids, whether the context filled up), as the app must do."""
    seq, out = list(prompt), []
    while max_tokens > 0:
        token = int(np.argmax(lm_logits(seq)))
        if stop_at_eos and token == EOS:
            return out, False
        out.append(token)
        if len(out) >= max_tokens:
            return out, False
        if len(seq) >= T:
            return out, True
        seq.append(token)
    return out, False


def encoder_vector(text, pooled):
    ids = list(text.encode())
    hidden = ENC["probe"][ids] + 0.5 * np.arange(len(ids), dtype=np.float32)[:, None]
    mean = hidden.mean(axis=0)
    return np.tanh(ENC["scale"] * mean) if pooled else mean


HOOK = ctypes.CDLL(ARGS.sampling_hook)  # sampling_hook.cpp: our sampler, called directly
HOOK.bmrt_test_sample_steps.restype = ctypes.c_int64
HOOK.bmrt_test_sample_steps.argtypes = [
    ctypes.c_int, ctypes.c_double, ctypes.c_int64, ctypes.c_double, ctypes.c_uint64,
    ctypes.c_uint64, ctypes.c_int64, ctypes.POINTER(ctypes.c_float), ctypes.c_int64,
    ctypes.POINTER(ctypes.c_int32), ctypes.c_char_p, ctypes.c_int64]


def hook_top_k_token(logits, k, temperature, seed, step):
    """The token our sampler draws for `logits` at (seed, step)."""
    logits = np.ascontiguousarray(logits, dtype=np.float32)
    token = np.zeros(1, dtype=np.int32)
    err = ctypes.create_string_buffer(256)
    n = HOOK.bmrt_test_sample_steps(2, temperature, k, 1.0, seed, step, 1,
                                    logits.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                    len(logits), token.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)),
                                    err, len(err))
    assert n == 1, err.value
    return int(token[0])


def run(exe, *args, stdin=None, cwd=None):
    return subprocess.run([exe, *args], input=stdin, capture_output=True, timeout=30,
                          cwd=cwd or WORK)


LM_FILE = os.path.join(WORK, "fake_lm.safetensors")  # the job's `from`, relative to cwd
HF_FILE = os.path.join(WORK, "fake_lm_hf.safetensors")
ENC_FILE = os.path.join(WORK, "fake_encoder.safetensors")
GREEDY = ["--sampling", "greedy"]


def setUpModule():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    save_file(LM, LM_FILE)
    save_file(LM_HF, HF_FILE)
    save_file(ENC, ENC_FILE)


class CommandLine(unittest.TestCase):
    def assertUsageError(self, result, *fragments):
        err = result.stderr.decode()
        self.assertEqual(result.returncode, 2, err)
        self.assertTrue(err.startswith("error: "), err)
        self.assertIn("--help", err)
        self.assertEqual(result.stdout, b"")
        for fragment in fragments:
            self.assertIn(fragment, err)

    def assertRunError(self, result, *fragments):
        err = result.stderr.decode()
        self.assertEqual(result.returncode, 1, err)
        self.assertIn("error: ", err)
        for fragment in fragments:
            self.assertIn(fragment, err)

    def test_help_documents_every_flag(self):
        r = run(ARGS.lm, "--help")
        self.assertEqual(r.returncode, 0)
        out = r.stdout.decode()
        for flag in ("--load", "--delta", "--load-delta", "--use-delta", "--tokenizer", "--prompt", "--prompt-ids", "--max-tokens",
                     "--sampling", "--temperature", "--top-k", "--top-p", "--seed",
                     "--ignore-eos", "--threads", "--profile", "--output", "--dump", "--save",
                     "--save-names", "--info", "--help"):
            self.assertRegex(out, r"\n  " + re.escape(flag) + r"\b", flag)
        self.assertIn("fake_lm.safetensors", out)  # the job's default checkpoint
        self.assertIn("top_k (k = 3, temperature = 0.5)", out)  # the job's sampling

    def test_bad_flags_exit_2(self):
        cases = [
            (["--bogus"], "unknown flag '--bogus'"),
            (["--max-tokens"], "--max-tokens needs a value"),
            (["--max-tokens", "ten"], "--max-tokens expects an integer"),
            (["--top-p", "2"], "--top-p"),
            (["--sampling", "beam"], "--sampling"),
            (["--output", "json"], "--output"),
            (["--prompt", "a", "--prompt-ids", "1"], "exclude"),
            (["--save-names", "hf"], "--save"),
            (["--sampling", "greedy", "--top-k", "3"], "--top-k has no effect"),
            (["--save", "x.safetensors", "--save-names", "gguf"], "no name map 'gguf'"),
        ]
        for args, fragment in cases:
            with self.subTest(args=args):
                self.assertUsageError(run(ARGS.lm, *args), fragment)
        self.assertUsageError(run(ARGS.encoder_pooled, "--max-tokens", "3"), "encoder")

    def test_greedy_prompt_ids_stops_at_eos(self):
        expected, full = lm_greedy([104, 105])
        self.assertFalse(full)
        self.assertEqual(len(expected), 6)  # pos[7] forces EOS after 6 tokens
        r = run(ARGS.lm, *GREEDY, "--prompt-ids", "104,105", "--output", "ids")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.decode(), " ".join(map(str, expected)) + "\n")

    def test_text_output_and_default_checkpoint(self):
        expected, _ = lm_greedy(list(b"hi"))
        r = run(ARGS.lm, *GREEDY, "--prompt", "hi")  # no --load: the job's `from`
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, bytes(expected) + b"\n")

    def test_max_tokens(self):
        expected, _ = lm_greedy([104, 105], max_tokens=3)
        r = run(ARGS.lm, *GREEDY, "--prompt-ids", "104,105", "--max-tokens", "3",
                "--output", "ids", "--threads", "1")
        self.assertEqual(r.stdout.decode(), " ".join(map(str, expected)) + "\n")

    def test_ignore_eos_until_the_context_is_full(self):
        expected, full = lm_greedy([104, 105], max_tokens=50, stop_at_eos=False)
        self.assertTrue(full)
        self.assertIn(EOS, expected)
        r = run(ARGS.lm, *GREEDY, "--prompt-ids", "104,105", "--max-tokens", "50",
                "--ignore-eos", "--output", "ids")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.decode(), " ".join(map(str, expected)) + "\n")
        self.assertIn(f"stopped after {len(expected)} tokens: the context of FakeLM (12 tokens) "
                      "is full", r.stderr.decode())

    def test_prompt_errors(self):
        self.assertRunError(run(ARGS.lm, "--prompt", "abcdefghijklm"),
                            "prompt has 13 tokens; the context of FakeLM is 12")
        self.assertRunError(run(ARGS.lm, "--prompt-ids", "1,300"), "token id 300",
                            "vocabulary of FakeLM (257 tokens)")
        self.assertRunError(run(ARGS.lm, "--prompt", ""), "the prompt is empty")

    def test_checkpoint_errors(self):
        self.assertRunError(run(ARGS.lm, "--load", os.path.join(WORK, "missing.safetensors"),
                                "--prompt", "hi"), "missing.safetensors")
        self.assertRunError(run(ARGS.lm, "--load", ENC_FILE, "--prompt", "hi"),
                            "fake_encoder.safetensors")
        self.assertRunError(run(ARGS.encoder_mean, "--prompt", "hi"), "no checkpoint",
                            "--load")

    def test_stdin_prompts_are_independent(self):
        lines = []
        for prompt in ("hi", "ab", "q"):
            expected, _ = lm_greedy(list(prompt.encode()))
            lines.append(bytes(expected) + b"\n")
        r = run(ARGS.lm, *GREEDY, stdin=b"hi\nab\r\nq\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, b"".join(lines))
        # An empty line is an error naming the line; the other lines are served
        # and the run fails at the end.
        r = run(ARGS.lm, *GREEDY, stdin=b"hi\n\nab\n")
        self.assertRunError(r, "error: stdin line 2: the prompt is empty",
                            "error: 1 of 3 requests failed (the first: stdin line 2)")
        self.assertEqual(r.stdout, lines[0] + lines[1])
        # --dump: request N's files in DIR/lineNNNN, as a --prompt's (none for a
        # failed request).
        dump, one = os.path.join(WORK, "dump-stdin"), os.path.join(WORK, "dump-stdin-one")
        shutil.rmtree(dump, ignore_errors=True)
        shutil.rmtree(one, ignore_errors=True)
        r = run(ARGS.lm, *GREEDY, "--dump", dump, stdin=b"hi\n\nab\n")
        self.assertEqual(sorted(os.listdir(dump)), ["line0001", "line0003"])
        r = run(ARGS.lm, *GREEDY, "--dump", one, "--prompt", "ab")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(os.listdir(os.path.join(dump, "line0003"))), sorted(os.listdir(one)))
        for name in os.listdir(one):
            self.assertEqual(np.load(os.path.join(dump, "line0003", name)).tobytes(),
                             np.load(os.path.join(one, name)).tobytes(), name)
        # A JSON request line is the same prompt; a malformed one, or one naming a
        # delta when the run has none, fails alone.
        r = run(ARGS.lm, *GREEDY, stdin=b'{"prompt": "hi"}\n{"prompt": "ab"\n'
                b'{"prompt": "q", "delta": "sst2"}\n{"delta": null, "prompt": "ab"}\n')
        self.assertRunError(r, "error: stdin line 2: JSON request: invalid JSON at byte 15: expected ',' or '}'",
                            "error: stdin line 3: the request names delta 'sst2', but this run "
                            "has no deltas", "2 of 4 requests failed")
        self.assertEqual(r.stdout, lines[0] + lines[1])

    def test_dump_matches_the_model(self):
        dump = os.path.join(WORK, "dump-greedy")
        shutil.rmtree(dump, ignore_errors=True)
        r = run(ARGS.lm, *GREEDY, "--prompt-ids", "104,105", "--max-tokens", "3", "--dump", dump,
                "--output", "ids")
        self.assertEqual(r.returncode, 0, r.stderr)
        generated = [int(x) for x in r.stdout.split()]
        self.assertEqual(sorted(os.listdir(dump)),
                         [f"step000{k}_{name}.npy" for k in range(3) for name in ("hidden", "logits")])
        seq = [104, 105]
        for step in range(3):
            logits = np.load(os.path.join(dump, f"step{step:04d}_logits.npy"))
            hidden = np.load(os.path.join(dump, f"step{step:04d}_hidden.npy"))
            self.assertEqual(logits.dtype, np.float32)
            self.assertEqual(logits.shape, (1, V))
            np.testing.assert_allclose(logits[0], lm_logits(seq), rtol=1e-6, atol=1e-6)
            rows = seq if step == 0 else seq[-1:]  # prefill: the prompt; decode: one token
            first = 0 if step == 0 else len(seq) - 1
            self.assertEqual(hidden.shape, (1, len(rows), C))
            want = LM["probe"][rows] + np.arange(first, first + len(rows), dtype=np.float32)[:, None]
            np.testing.assert_allclose(hidden[0], want, rtol=1e-6)
            seq.append(generated[step])

    def test_sampling_defaults_and_seeds(self):
        # The job samples with top_k(3, temperature = 0.5): every token must be
        # among the 3 that TopKLogitsWarper keeps for that step's logits.
        def sample(seed, dump):
            shutil.rmtree(dump, ignore_errors=True)
            r = run(ARGS.lm, "--prompt-ids", "104,105", "--max-tokens", "9", "--ignore-eos",
                    "--seed", str(seed), "--output", "ids", "--dump", dump)
            self.assertEqual(r.returncode, 0, r.stderr)
            return [int(x) for x in r.stdout.split()]

        dump = os.path.join(WORK, "dump-topk")
        tokens = sample(11, dump)
        self.assertEqual(len(tokens), 9)
        for step, token in enumerate(tokens):
            logits = torch.tensor(np.load(os.path.join(dump, f"step{step:04d}_logits.npy")))
            kept = torch.isfinite(TopKLogitsWarper(3)(None, logits / 0.5))[0]
            self.assertTrue(bool(kept[token]), f"step {step}: token {token} outside the top 3")
            # Token k of a generation is drawn at (seed, k), as sampling.h says.
            self.assertEqual(hook_top_k_token(logits[0].numpy(), 3, 0.5, 11, step), token)
        self.assertEqual(sample(11, dump), tokens)
        self.assertNotEqual(sample(12, dump), tokens)
        # A stdin line gives the same tokens as the same --prompt-ids.
        r = run(ARGS.lm, "--max-tokens", "9", "--ignore-eos", "--seed", "11", "--output", "ids",
                stdin=b"hi\n")
        self.assertEqual([int(x) for x in r.stdout.split()], tokens)

    def test_profile(self):
        r = run(ARGS.lm, *GREEDY, "--prompt-ids", "104,105", "--max-tokens", "4", "--profile")
        self.assertEqual(r.returncode, 0, r.stderr)
        err = r.stderr.decode()
        self.assertRegex(err, r"(?m)^sampling +4 ")
        self.assertRegex(err, r"(?m)^prefill: 2 tokens in [0-9.]+ s \([0-9.]+ tokens/s\)$")
        self.assertRegex(err, r"(?m)^decode: 3 tokens in [0-9.]+ s \([0-9.]+ tokens/s\)$")
        self.assertRegex(err, r"(?m)^peak RSS: [0-9.]+ MiB \(planned: params 0\.5 MiB \+ state "
                              r"0\.0 MiB \+ activations 0\.0 MiB = 0\.5 MiB\)$")

    def test_info(self):
        r = run(ARGS.lm, "--info")
        self.assertEqual(r.returncode, 0, r.stderr)
        out = r.stdout.decode()
        values = 2 * V * V + T * V + V * C
        for fragment in ("model: FakeLM (causal LM, vocab 257, ctx 12)", "job: chat",
                         "source: fake_lm.bmb", f"params: 4 tensors, {values} values",
                         "memory plan: params", "entry prefill: up to 12 rows",
                         "entry decode: up to 1 rows", "output logits", "name map hf: 3 rules",
                         "lm.positions.weight = pos transposed",
                         "lm.tables.weight = concat(emb, prev; axis 0)"):
            self.assertIn(fragment, out)

    def test_save_in_both_layouts_and_load_hf(self):
        ours = os.path.join(WORK, "saved_ours.safetensors")
        hf = os.path.join(WORK, "saved_hf.safetensors")
        r = run(ARGS.lm, "--save", ours)
        self.assertEqual(r.returncode, 0, r.stderr)
        saved = load_file(ours)
        self.assertEqual(sorted(saved), sorted(LM))
        for name in LM:
            np.testing.assert_array_equal(saved[name], LM[name])
        r = run(ARGS.lm, "--load", ours, "--save", hf, "--save-names", "hf")
        self.assertEqual(r.returncode, 0, r.stderr)
        saved = load_file(hf)
        self.assertEqual(sorted(saved), sorted(LM_HF))
        for name in LM_HF:
            np.testing.assert_array_equal(saved[name], LM_HF[name])
        expected, _ = lm_greedy([104, 105])
        r = run(ARGS.lm, *GREEDY, "--load", HF_FILE, "--prompt-ids", "104,105", "--output", "ids")
        self.assertEqual(r.stdout.decode(), " ".join(map(str, expected)) + "\n", r.stderr)

    def test_without_a_tokenizer(self):
        exe = ARGS.lm_no_tokenizer  # the job names no tokenizer; the checkpoint dir has none
        expected, _ = lm_greedy([104, 105], max_tokens=3, stop_at_eos=False)
        r = run(exe, *GREEDY, "--prompt-ids", "104,105", "--max-tokens", "3", "--ignore-eos",
                "--output", "ids")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.decode(), " ".join(map(str, expected)) + "\n")
        self.assertRunError(run(exe, *GREEDY, "--prompt", "hi"))
        r = run(exe, *GREEDY, "--prompt", "hi", "--tokenizer", "byte")
        self.assertEqual(r.stdout, bytes(lm_greedy(list(b"hi"))[0]) + b"\n", r.stderr)


class Encoder(unittest.TestCase):
    def check_line(self, line, expected):
        values = np.array([float(x) for x in line.split()])
        np.testing.assert_allclose(values, expected, rtol=1e-5, atol=1e-6)

    def test_pooled_and_mean(self):
        for exe, pooled in ((ARGS.encoder_pooled, True), (ARGS.encoder_mean, False)):
            r = run(exe, "--load", ENC_FILE, "--prompt", "abc")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.check_line(r.stdout.decode(), encoder_vector("abc", pooled))

    def test_stdin_dump_and_errors(self):
        r = run(ARGS.encoder_pooled, "--load", ENC_FILE, stdin=b"abc\nxy\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.decode().splitlines()
        self.assertEqual(len(lines), 2)
        self.check_line(lines[0], encoder_vector("abc", True))
        self.check_line(lines[1], encoder_vector("xy", True))
        dump = os.path.join(WORK, "dump-encoder")
        shutil.rmtree(dump, ignore_errors=True)
        r = run(ARGS.encoder_pooled, "--load", ENC_FILE, "--prompt", "xyz", "--dump", dump)
        self.assertEqual(r.returncode, 0, r.stderr)
        hidden = np.load(os.path.join(dump, "step0000_hidden.npy"))
        self.assertEqual(hidden.shape, (1, 3, EC))
        np.testing.assert_allclose(hidden[0], ENC["probe"][list(b"xyz")] +
                                   0.5 * np.arange(3, dtype=np.float32)[:, None], rtol=1e-6)
        pooled = np.load(os.path.join(dump, "step0000_pooled.npy"))
        np.testing.assert_allclose(pooled[0], encoder_vector("xyz", True), rtol=1e-5)
        r = run(ARGS.encoder_pooled, "--load", ENC_FILE, "--prompt", "abcdefghi")
        self.assertEqual(r.returncode, 1)
        self.assertIn("prompt has 9 tokens; the context of FakeEncoder is 8", r.stderr.decode())


if __name__ == "__main__":
    unittest.main(verbosity=2)
