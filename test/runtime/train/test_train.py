"""train_main, driven through hand-written training programs (tiny_train.cpp).

Usage: test_train.py --train EXE --train-sgd EXE --train-wide EXE --workdir DIR

The tiny model (embedding + positions -> tanh(linear) -> tied head -> cross
entropy) is rebuilt in torch here: the first step's gradients
(--dump-grads), three steps of AdamW with clipping and the cosine schedule
(transformers' get_cosine_schedule_with_warmup), the logged losses and
--eval-only's loss are compared with torch on the same batches. The rest
checks the executable's behaviour: resume is bit-identical to an
uninterrupted run (also after SIGTERM and after a corrupt newest
checkpoint), NaN stops with the step number without saving, bad data and
another model's checkpoints fail with clear messages and exit codes.
"""
import argparse
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
import unittest

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.numpy import load_file, save_file
from transformers import get_cosine_schedule_with_warmup

parser = argparse.ArgumentParser()
for name in ("--train", "--train-sgd", "--train-wide", "--workdir"):
    parser.add_argument(name, required=True)
ARGS, rest = parser.parse_known_args()
for key, value in vars(ARGS).items():
    setattr(ARGS, key, os.path.abspath(value))
sys.argv = sys.argv[:1] + rest

V, C, T, B = 257, 8, 8, 4  # tiny_train.cpp
LR, BETAS, EPS, WD, CLIP, WARMUP = 0.02, (0.9, 0.95), 1e-8, 0.1, 1.0, 2
EOS = 256
WORK = ARGS.workdir
HF = {"wte": "transformer.wte.weight", "wpe": "transformer.wpe.weight",
      "fc.w": "transformer.fc.weight", "fc.b": "transformer.fc.bias"}


def corpus_text(n_words=3000, seed=0):
    rng = np.random.default_rng(seed)
    words = "the cat sat on a mat and then the dog ran to the cat who sat there".split()
    return " ".join(words[i] for i in rng.integers(0, len(words), n_words))


def run(exe, *args, env=None, check=None):
    e = dict(os.environ, **(env or {}))
    p = subprocess.run([exe, *args], cwd=WORK, capture_output=True, text=True, env=e,
                       timeout=60)
    if check is not None and p.returncode != check:
        raise AssertionError(f"{exe} {' '.join(args)}: exit {p.returncode}, expected {check}\n"
                             f"stdout: {p.stdout}\nstderr: {p.stderr}")
    return p


def path(*parts):
    return os.path.join(WORK, *parts)


def same_bytes(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def read_log(file):
    with open(file) as f:
        return [json.loads(line) for line in f if line.strip()]


# ------------------------------------------------------------------ torch model

def torch_logits(p, tokens):
    x = p["wte"][tokens] + p["wpe"][torch.arange(T)]
    h = torch.tanh(x @ p["fc.w"].T + p["fc.b"])
    return h @ p["wte"].T


def sequential_batch(ids, train_len, step):
    """Batch `step` (0-based) of sequential order over the train split."""
    windows = (train_len - 1) // T
    tok, tgt = [], []
    for b in range(B):
        s = ((step * B + b) % windows) * T
        tok.append(ids[s:s + T])
        tgt.append(ids[s + 1:s + T + 1])
    return torch.tensor(np.array(tok)).long(), torch.tensor(np.array(tgt)).long()


def split_len(n, fraction=0.05):
    return n - math.ceil(n * fraction)


class Train(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        shutil.rmtree(WORK, ignore_errors=True)
        os.makedirs(WORK)
        cls.text = corpus_text()
        with open(path("corpus.txt"), "w") as f:
            f.write(cls.text)
        cls.ids = np.array(list(cls.text.encode()) + [EOS], np.int64)

    def fresh(self, name):
        d = path(name)
        shutil.rmtree(d, ignore_errors=True)
        return d

    # -------------------------------------------------------------- numerics

    def test_grads_steps_and_eval_match_torch(self):
        rng = np.random.default_rng(1)
        init = {"wte": rng.normal(0, 0.3, (V, C)), "wpe": rng.normal(0, 0.1, (T, C)),
                "fc.w": rng.normal(0, 0.3, (C, C)), "fc.b": rng.normal(0, 0.1, (C,))}
        init = {k: v.astype(np.float32) for k, v in init.items()}
        save_file({HF[k]: v for k, v in init.items()}, path("init.safetensors"))
        out = self.fresh("numerics")
        run(ARGS.train, "--data", "corpus.txt", "--load", "init.safetensors", "--steps", "3",
            "--order", "sequential", "--threads", "1", "--dump-grads", "grads.safetensors",
            "--save", "numerics", "--log", "numerics.jsonl", check=0)

        params = {k: torch.tensor(v, requires_grad=True) for k, v in init.items()}
        decay = [params["fc.w"]]
        no_decay = [params["wte"], params["wpe"], params["fc.b"]]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": WD},
                                 {"params": no_decay, "weight_decay": 0.0}],
                                lr=LR, betas=BETAS, eps=EPS)
        sched = get_cosine_schedule_with_warmup(opt, WARMUP, 3)
        train_len = split_len(len(self.ids))
        losses = []
        for step in range(3):
            tok, tgt = sequential_batch(self.ids, train_len, step)
            loss = F.cross_entropy(torch_logits(params, tok).reshape(-1, V), tgt.reshape(-1))
            opt.zero_grad()
            loss.backward()
            losses.append(loss.item())
            if step == 0:
                grads = load_file(path("grads.safetensors"))
                for k in params:
                    np.testing.assert_allclose(grads[HF[k]], params[k].grad.numpy(),
                                               rtol=1e-4, atol=1e-6, err_msg=f"grad of {k}")
                np.testing.assert_array_equal(grads["lm_head.weight"],
                                              grads["transformer.wte.weight"])
            torch.nn.utils.clip_grad_norm_(list(params.values()), CLIP)
            opt.step()
            sched.step()
        log = read_log(path("numerics.jsonl"))
        np.testing.assert_allclose([r["loss"] for r in log], losses, rtol=1e-5)
        final = load_file(os.path.join(out, "step-0000003", "model.safetensors"))
        for k in params:
            np.testing.assert_allclose(final[HF[k]], params[k].detach().numpy(), rtol=1e-4,
                                       atol=2e-6, err_msg=f"{k} after 3 AdamW steps")
        opt_state = load_file(os.path.join(out, "step-0000003", "optimizer.safetensors"))
        torch_state = opt.state[params["fc.w"]]
        np.testing.assert_allclose(opt_state["fc.w.exp_avg"], torch_state["exp_avg"].numpy(),
                                   rtol=1e-4, atol=1e-7)
        np.testing.assert_allclose(opt_state["fc.w.exp_avg_sq"],
                                   torch_state["exp_avg_sq"].numpy(), rtol=1e-4, atol=1e-10)

        # --eval-only over the held-out split: every window once.
        p = run(ARGS.train, "--eval-only", "--load", os.path.join(out, "step-0000003"),
                "--data", "corpus.txt", "--threads", "1", check=0)
        ours = dict(line.split() for line in p.stdout.strip().splitlines())
        begin = train_len
        windows = (len(self.ids) - begin - 1) // T
        with torch.no_grad():
            total, count = 0.0, 0
            for w in range(windows):
                s = begin + w * T
                tok = torch.tensor(self.ids[s:s + T]).long()[None]
                tgt = torch.tensor(self.ids[s + 1:s + T + 1]).long()
                total += F.cross_entropy(torch_logits(params, tok).reshape(-1, V), tgt,
                                         reduction="sum").item()
                count += T
        self.assertAlmostEqual(float(ours["loss"]), total / count, places=4)
        self.assertAlmostEqual(float(ours["perplexity"]), math.exp(total / count), places=3)

    def test_loss_falls_and_log_parses(self):
        self.fresh("falls")
        run(ARGS.train, "--data", "corpus.txt", "--steps", "60", "--threads", "1",
            "--log", "falls.jsonl", "--eval-every", "20", "--eval-batches", "4", check=0)
        log = read_log(path("falls.jsonl"))
        steps = [r for r in log if "loss" in r]
        evals = [r for r in log if "val_loss" in r]
        self.assertEqual([r["step"] for r in steps], list(range(1, 61)))
        self.assertEqual([r["step"] for r in evals], [20, 40, 60])
        for r in steps:
            self.assertEqual(set(r), {"step", "loss", "lr", "grad_norm", "tokens_per_s",
                                      "elapsed"})
        for r in evals:
            self.assertAlmostEqual(r["val_ppl"], math.exp(r["val_loss"]), places=3)
        first = np.mean([r["loss"] for r in steps[:5]])
        last = np.mean([r["loss"] for r in steps[-5:]])
        self.assertLess(last, 0.6 * first)
        self.assertLess(evals[-1]["val_loss"], evals[0]["val_loss"] + 0.5)

    # ---------------------------------------------------------- resume

    def test_resume_is_bit_identical(self):
        # SGD + momentum with a constant schedule: 10 steps, then --resume to 20.
        for d in ("straight", "split"):
            self.fresh(d)
        run(ARGS.train_sgd, "--data", "corpus.txt", "--steps", "20", "--threads", "1",
            "--save", "straight", check=0)
        run(ARGS.train_sgd, "--data", "corpus.txt", "--steps", "10", "--threads", "1",
            "--save", "split", check=0)
        p = run(ARGS.train_sgd, "--data", "corpus.txt", "--steps", "20", "--threads", "1",
                "--save", "split", "--resume", check=0)
        self.assertIn("resumed from split/step-0000010", p.stderr)
        for f in ("model.safetensors", "optimizer.safetensors"):
            self.assertTrue(same_bytes(path("straight", "step-0000020", f),
                                       path("split", "step-0000020", f)), f)
        state = load_file(path("split", "step-0000020", "optimizer.safetensors"))
        self.assertEqual(sorted(state), ["fc.b.momentum_buffer", "fc.w.momentum_buffer",
                                         "wpe.momentum_buffer", "wte.momentum_buffer"])
        # A resumed run keeps its settings.
        p = run(ARGS.train_sgd, "--data", "corpus.txt", "--steps", "30", "--save", "split",
                "--resume", "--seed", "5", check=2)
        self.assertIn("--seed 5 differs", p.stderr)

    def straight_run(self, name, steps, exe=ARGS.train):
        self.fresh(name)
        run(exe, "--data", "corpus.txt", "--steps", str(steps), "--threads", "1",
            "--save", name, check=0)
        return path(name, f"step-{steps:07d}")

    def assert_same_checkpoint(self, a, b):
        for f in ("model.safetensors", "optimizer.safetensors"):
            self.assertTrue(same_bytes(os.path.join(a, f), os.path.join(b, f)), f)

    def test_sigterm_saves_and_resumes(self):
        ref = self.straight_run("sig-ref", 30)
        d = self.fresh("sig")
        proc = subprocess.Popen([ARGS.train, "--data", "corpus.txt", "--steps", "30",
                                 "--threads", "1", "--save", "sig", "--save-every", "4",
                                 "--log", "sig.jsonl"], cwd=WORK, stderr=subprocess.PIPE,
                                text=True, env=dict(os.environ, TINY_TRAIN_SLEEP_MS="25"))
        deadline = time.time() + 20
        while not os.path.exists(os.path.join(d, "latest")) and time.time() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 143, err)
        self.assertIn("stopped by SIGTERM after step", err)
        self.assertIn("continue with --resume", err)
        stopped = int(err.split("after step ")[1].split(";")[0])
        self.assertLess(stopped, 30)
        with open(os.path.join(d, "latest")) as f:
            self.assertEqual(f.read().strip(), f"step-{stopped:07d}")
        run(ARGS.train, "--data", "corpus.txt", "--steps", "30", "--threads", "1", "--save",
            "sig", "--resume", "--log", "sig.jsonl", check=0)
        self.assert_same_checkpoint(ref, os.path.join(d, "step-0000030"))
        logged = [r["step"] for r in read_log(path("sig.jsonl"))]
        self.assertEqual(logged, list(range(1, 31)))  # appended, no gap, no repeat

    def test_corrupt_newest_falls_back(self):
        # The constant schedule (SGD variant): stopping at 15 and going on to
        # 20 is the same run as 20 straight.
        ref = self.straight_run("fb-ref", 20, ARGS.train_sgd)
        d = self.fresh("fb")
        run(ARGS.train_sgd, "--data", "corpus.txt", "--steps", "15", "--threads", "1", "--save",
            "fb", "--save-every", "5", check=0)
        self.assertEqual(sorted(os.listdir(d)),
                         ["latest", "step-0000005", "step-0000010", "step-0000015"])
        model = os.path.join(d, "step-0000015", "model.safetensors")
        with open(model, "r+b") as f:  # half-written
            f.truncate(os.path.getsize(model) // 2)
        p = run(ARGS.train_sgd, "--data", "corpus.txt", "--steps", "20", "--threads", "1",
                "--save", "fb", "--resume", check=0)
        self.assertIn("skipping checkpoint fb/step-0000015", p.stderr)
        self.assertIn("resuming from fb/step-0000010", p.stderr)
        self.assert_same_checkpoint(ref, os.path.join(d, "step-0000020"))
        # latest naming a missing directory; an incomplete newest directory
        with open(os.path.join(d, "latest"), "w") as f:
            f.write("step-0000099\n")
        os.makedirs(os.path.join(d, "step-0000050"))
        p = run(ARGS.train_sgd, "--data", "corpus.txt", "--steps", "20", "--threads", "1",
                "--save", "fb", "--resume", check=0)
        self.assertIn("resuming from fb/step-0000020", p.stderr)
        self.assertIn("nothing to do", p.stderr)

    def test_keep(self):
        d = self.fresh("keep")
        run(ARGS.train, "--data", "corpus.txt", "--steps", "12", "--threads", "1", "--save",
            "keep", "--save-every", "2", "--keep", "2", check=0)
        self.assertEqual(sorted(os.listdir(d)), ["latest", "step-0000010", "step-0000012"])

    # ---------------------------------------------------------- failures

    def test_nan_stops_without_saving(self):
        d = self.fresh("nan")
        p = run(ARGS.train, "--data", "corpus.txt", "--steps", "10", "--threads", "1",
                "--save", "nan", "--save-every", "1", env={"TINY_TRAIN_NAN_AT_STEP": "4"},
                check=1)
        self.assertIn("the loss is nan at step 4", p.stderr)
        self.assertIn("the last good checkpoint is nan/step-0000003", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(d, "step-0000004")))
        with open(os.path.join(d, "latest")) as f:
            self.assertEqual(f.read().strip(), "step-0000003")

    def test_data_errors(self):
        with open(path("empty.txt"), "w"):
            pass
        with open(path("short.txt"), "w") as f:
            f.write("abc")
        cases = [
            (["--data", "missing.txt"], "missing.txt: the data file does not exist"),
            (["--data", "empty.txt"], "empty.txt: the data file is empty"),
            (["--data", "short.txt"], "fewer than sequence length + 1"),
            (["--data", "corpus.txt", "--tokenizer", "nowhere"], "nowhere"),
        ]
        # a token file for a bigger vocabulary
        big = np.arange(100, dtype=np.uint16) * 10
        header = bytearray(64)
        header[0:8] = b"BMBTOK1\0"
        header[8:12] = (1).to_bytes(4, "little")
        header[12:16] = (2).to_bytes(4, "little")
        header[16:24] = (len(big)).to_bytes(8, "little")
        header[24:32] = (1000).to_bytes(8, "little")
        h = 0xcbf29ce484222325
        for byte in big.tobytes():
            h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
        header[32:40] = h.to_bytes(8, "little")
        with open(path("big.tok"), "wb") as f:
            f.write(bytes(header) + big.tobytes())
        cases.append((["--data", "big.tok"], "the data's vocabulary has 1000 ids, more than"))
        for args, message in cases:
            p = run(ARGS.train, *args, "--steps", "1", check=1)
            self.assertIn(message, p.stderr, args)
            self.assertTrue(p.stderr.startswith("error: ") or "error: " in p.stderr)
        for args, message in [(["--steps", "x"], "--steps expects an integer"),
                              (["--resume"], "--resume continues from the checkpoints"),
                              (["--eval-only"], "--eval-only needs --load"),
                              (["--bogus"], "unknown flag '--bogus'"),
                              (["--order", "shuffled"], "--order must be"),
                              (["--comm-timeout", "0"], "--comm-timeout must be > 0 seconds")]:
            p = run(ARGS.train, *args, check=2)
            self.assertIn(message, p.stderr)

    def test_jsonl_data(self):
        with open(path("docs.jsonl"), "w") as f:
            for i in range(200):
                f.write(json.dumps({"text": corpus_text(20, seed=i)}) + "\n")
        p = run(ARGS.train, "--data", "docs.jsonl", "--steps", "3", "--threads", "1", check=0)
        self.assertIn("docs.jsonl (text, byte tokenizer)", p.stderr)
        with open(path("bad.jsonl"), "w") as f:
            f.write('{"text": "fine"}\n{"txt": 1}\n')
        p = run(ARGS.train, "--data", "bad.jsonl", "--steps", "1", check=1)
        self.assertIn("bad.jsonl line 2", p.stderr)

    def test_tokenizer_dir_is_copied(self):
        # A GPT-2 style tokenizer of 257 ids (256 bytes + <|endoftext|>, no merges).
        from transformers.models.gpt2.tokenization_gpt2 import bytes_to_unicode
        tok = path("tok")
        os.makedirs(tok, exist_ok=True)
        vocab = {ch: i for i, ch in enumerate(bytes_to_unicode().values())}
        vocab = {ch: i for i, ch in enumerate(sorted(vocab, key=vocab.get))}
        vocab["<|endoftext|>"] = 256
        with open(os.path.join(tok, "vocab.json"), "w") as f:
            json.dump(vocab, f)
        with open(os.path.join(tok, "merges.txt"), "w") as f:
            f.write("#version: 0.2\n")
        d = self.fresh("withtok")
        p = run(ARGS.train, "--data", "corpus.txt", "--tokenizer", "tok", "--steps", "2",
                "--threads", "1", "--save", "withtok", check=0)
        self.assertIn("gpt2", p.stderr)
        ck = os.path.join(d, "step-0000002")
        self.assertEqual(sorted(os.listdir(ck)),
                         ["merges.txt", "model.safetensors", "optimizer.safetensors",
                          "trainer_state.json", "vocab.json"])

    def test_other_model(self):
        self.fresh("mine")
        run(ARGS.train, "--data", "corpus.txt", "--steps", "2", "--threads", "1", "--save",
            "mine", check=0)
        p = run(ARGS.train_wide, "--data", "corpus.txt", "--steps", "4", "--save", "mine",
                "--resume", check=1)
        self.assertIn("is a checkpoint of model 'TinyLM'", p.stderr)
        self.assertIn("not TinyLMWide's", p.stderr)
        p = run(ARGS.train_wide, "--data", "corpus.txt", "--steps", "1", "--load",
                "mine/step-0000002", check=1)
        self.assertIn("shape mismatch for tensor 'transformer.wte.weight'", p.stderr)

    def test_help_and_info(self):
        p = run(ARGS.train, "--help", check=0)
        self.assertIn("Batch 4 x sequence length 8 are fixed by the job at compile time",
                      p.stdout)
        for flag in ("--data", "--resume", "--dump-grads", "--eval-only", "--accum",
                     "--deterministic", "--no-overlap", "--comm-timeout", "--rank-logs",
                     "mpirun -np N"):
            self.assertIn(flag, p.stdout)
        p = run(ARGS.train, "--info", check=0)
        self.assertIn("train: batch 4 x seq 8", p.stdout)
        self.assertIn("entry forward_backward", p.stdout)

    def test_loss_scale_flag(self):
        # fp16's dynamic loss scaling (mixed precision): the flag is refused
        # by other programs and must be a power of two.
        p = run(ARGS.train, "--data", "corpus.txt", "--steps", "1", "--loss-scale", "1024",
                check=2)
        self.assertIn("--loss-scale applies to precision = fp16 programs (this one is fp32)",
                      p.stderr)
        p = run(ARGS.train, "--loss-scale", "1000", check=2)
        self.assertIn("--loss-scale must be a power of two", p.stderr)

    def test_accumulation_equals_bigger_batch_mean(self):
        # --accum 2: the step's gradient is that of the mean over both micro-batches.
        rng = np.random.default_rng(2)
        init = {"wte": rng.normal(0, 0.3, (V, C)), "wpe": rng.normal(0, 0.1, (T, C)),
                "fc.w": rng.normal(0, 0.3, (C, C)), "fc.b": np.zeros(C)}
        init = {k: v.astype(np.float32) for k, v in init.items()}
        save_file(init, path("init-ours.safetensors"))  # our names load too
        run(ARGS.train, "--data", "corpus.txt", "--load", "init-ours.safetensors", "--steps",
            "1", "--accum", "2", "--order", "sequential", "--threads", "1", "--dump-grads",
            "grads2.safetensors", check=0)
        params = {k: torch.tensor(v, requires_grad=True) for k, v in init.items()}
        train_len = split_len(len(self.ids))
        toks, tgts = zip(*(sequential_batch(self.ids, train_len, s) for s in (0, 1)))
        tok, tgt = torch.cat(toks), torch.cat(tgts)
        x = params["wte"][tok] + params["wpe"][torch.arange(T)]
        h = torch.tanh(x @ params["fc.w"].T + params["fc.b"])
        loss = F.cross_entropy((h @ params["wte"].T).reshape(-1, V), tgt.reshape(-1))
        loss.backward()
        grads = load_file(path("grads2.safetensors"))
        for k in params:
            np.testing.assert_allclose(grads[HF[k]], params[k].grad.numpy(), rtol=1e-4,
                                       atol=1e-6, err_msg=k)


if __name__ == "__main__":
    unittest.main(verbosity=2)
