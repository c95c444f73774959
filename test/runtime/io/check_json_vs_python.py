"""Differential test of bmrt::json against Python's json module.

Why: the tokenizers read 50k-entry vocabularies and merges through our JSON
reader; a subtle escape or number bug would silently change tokens. Python's
json (which we did not write) is the reference: random documents (nesting,
escapes, astral-plane characters as \\u surrogate pairs and as raw UTF-8,
integers and doubles at the extremes) and a real tokenizer.json written by
Hugging Face `tokenizers` must read back identically, member order included.

  python check_json_vs_python.py <json_dump_tool>
"""
import json
import os
import random
import subprocess
import sys
import tempfile

from tokenizers import Tokenizer, models, pre_tokenizers, trainers

TOOL = sys.argv[1]
rng = random.Random(20240611)
ALPHABET = ["a", "Z", " ", "\"", "\\", "/", "\n", "\t", "\x00", "\x1f", "\x7f", "é", "Ġ",
            "€", "中", "\U0001F600", "\U00010348", "\uffff"]


def random_string():
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 8)))


def random_number():
    kind = rng.randint(0, 4)
    if kind == 0:
        return rng.randint(-2**53, 2**53)
    if kind == 1:
        return rng.randint(-1000, 1000)
    if kind == 2:
        return rng.uniform(-1, 1) * 10 ** rng.randint(-300, 300)
    if kind == 3:
        return rng.choice([0.0, -0.0, 5e-324, 1.7976931348623157e308, 0.1, 1e-7, 2.5e-310])
    return rng.random()


def random_value(depth):
    kind = rng.randint(0, 6 if depth < 6 else 3)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return random_number()
    if kind in (2, 3):
        return random_string()
    if kind == 4:
        return [random_value(depth + 1) for _ in range(rng.randint(0, 5))]
    return {random_string(): random_value(depth + 1) for _ in range(rng.randint(0, 5))}


def canonical(text):
    # Numbers as floats on both sides (we hold doubles); key order kept.
    return json.dumps(json.loads(text, parse_int=float), ensure_ascii=False)


def compare(path, what):
    r = subprocess.run([TOOL, path], capture_output=True, timeout=60)
    if r.returncode != 0:
        sys.exit(f"FAIL ({what}): the tool failed: {r.stderr.decode(errors='replace')}")
    with open(path, encoding="utf-8") as f:
        expected = canonical(f.read())
    got = canonical(r.stdout.decode("utf-8"))
    if got != expected:
        k = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b),
                 min(len(got), len(expected)))
        lo = max(0, k - 40)
        sys.exit(f"FAIL ({what}): differs at char {k}:\n ours: {got[lo:k+40]!r}\n"
                 f" python: {expected[lo:k+40]!r}")


def main():
    with tempfile.TemporaryDirectory(prefix="bmrt-io-json-") as work:
        for ascii_only in (True, False):
            docs = [random_value(0) for _ in range(400)]
            path = os.path.join(work, f"random-{ascii_only}.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(docs, f, ensure_ascii=ascii_only, indent=rng.choice([None, 1]))
            compare(path, f"random documents, ensure_ascii={ascii_only}")

        # A real tokenizer.json, as Hugging Face tokenizers writes it.
        tok = Tokenizer(models.BPE(unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["[UNK]", "<|endoftext|>"])
        corpus = ["The quick brown fox jumps over the lazy dog. Ünïcödé 中文 😀 \"quotes\"\\"] * 50
        tok.train_from_iterator(corpus, trainer)
        path = os.path.join(work, "tokenizer.json")
        tok.save(path)
        compare(path, "tokenizer.json from tokenizers")
    print("OK")


if __name__ == "__main__":
    main()
