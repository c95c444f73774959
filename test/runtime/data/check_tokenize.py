"""bmb-tokenize against Hugging Face's `tokenizers` (the reference).

usage: check_tokenize.py <bmb-tokenize> <work dir>

Trains a small GPT-2 style tokenizer with `tokenizers` (saved as
tokenizer.json), writes text files and a .jsonl file (with a custom field
name, unicode escapes and a blank line), runs bmb-tokenize on them, reads the
token file here (parsing the header independently of the C++ reader) and
checks the ids equal HF's encoding of each document, concatenated in input
order, with and without --append-eos; the byte tokenizer gives the bytes.
Also: --help exits 0, bad flags exit 2, an unreadable input or a bad JSONL
line exits 1 naming the file.
"""

import json
import os
import struct
import subprocess
import sys

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tokenizers"))
import tokenizer_corpus  # noqa: E402

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def read_tok(path):
    data = open(path, "rb").read()
    magic, version, width, count, vocab, checksum = struct.unpack_from("<8sIIQQQ", data, 0)
    assert magic == b"BMBTOK1\0", magic
    assert version == 1 and width in (2, 4)
    assert data[40:64] == bytes(24)
    body = data[64:]
    assert len(body) == count * width, (len(body), count, width)
    assert fnv1a(body) == checksum
    assert width == (2 if vocab <= 65536 else 4)
    ids = list(struct.unpack(f"<{count}{'H' if width == 2 else 'I'}", body))
    assert all(i < vocab for i in ids)
    return ids, vocab


def run(args):
    return subprocess.run(args, capture_output=True, text=True)


def main():
    tool, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=800, min_frequency=2, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(tokenizer_corpus.training_corpus(lines=1500), trainer)
    tok_path = os.path.join(work, "tokenizer.json")
    tok.save(tok_path)
    eos = tok.token_to_id("<|endoftext|>")

    strings = [s for s in tokenizer_corpus.test_strings(count=600) if "<|endoftext|>" not in s]
    text_docs = ["\n".join(strings[:200]) + "\n", "".join(strings[200:260]), ""]
    text_files = []
    for i, d in enumerate(text_docs):
        p = os.path.join(work, f"doc{i}.txt")
        with open(p, "w", encoding="utf-8", newline="") as f:
            f.write(d)
        text_files.append(p)
    jsonl_docs = strings[260:560]
    jsonl = os.path.join(work, "docs.jsonl")
    with open(jsonl, "w", encoding="utf-8") as f:
        for i, s in enumerate(jsonl_docs):
            f.write(json.dumps({"id": i, "body": s}, ensure_ascii=(i % 2 == 0)) + "\n")
            if i == 10:
                f.write("\n")
    inputs = [text_files[0], jsonl, text_files[1], text_files[2]]
    docs = [text_docs[0], *jsonl_docs, text_docs[1], text_docs[2]]

    def expected(append_eos):
        out = []
        for d in docs:
            out += tok.encode(d, add_special_tokens=False).ids
            if append_eos:
                out.append(eos)
        return out

    for append_eos in (False, True):
        out = os.path.join(work, f"out{int(append_eos)}.tok")
        args = [tool, "--tokenizer", tok_path, *inputs, "-o", out, "--jsonl-field", "body"]
        if append_eos:
            args.append("--append-eos")
        r = run(args)
        check(r.returncode == 0, f"bmb-tokenize failed: {r.stderr}")
        print(r.stdout, end="")
        if r.returncode == 0:
            ids, vocab = read_tok(out)
            ref = expected(append_eos)
            check(vocab == tok.get_vocab_size(), f"vocab {vocab} != {tok.get_vocab_size()}")
            check(ids == ref, f"ids differ (append_eos={append_eos}): {len(ids)} vs {len(ref)}, first "
                  f"difference at {next((i for i, (a, b) in enumerate(zip(ids, ref)) if a != b), None)}")
            check(f"{len(docs)} documents, {len(ref)} tokens" in r.stdout, "summary line")

    # The byte tokenizer: ids are the UTF-8 bytes (+ 256 as EOS).
    out = os.path.join(work, "bytes.tok")
    r = run([tool, "--tokenizer", "byte", text_files[1], jsonl, "--jsonl-field", "body",
             "--append-eos", "-o", out])
    check(r.returncode == 0, f"byte: {r.stderr}")
    if r.returncode == 0:
        ids, vocab = read_tok(out)
        ref = list(text_docs[1].encode("utf-8")) + [256]
        for s in jsonl_docs:
            ref += list(s.encode("utf-8")) + [256]
        check(vocab == 257 and ids == ref, "byte tokenizer ids")

    # Usage and errors.
    r = run([tool, "--help"])
    check(r.returncode == 0 and "--train-bpe" in r.stdout, "--help")
    for bad in (["--frobnicate"], ["--tokenizer", "byte", "-o", "x.tok"], [text_files[0], "-o", "x"],
                ["--tokenizer", "byte", text_files[0]], ["--train-bpe", "ten", text_files[0], "-o", "d"],
                ["--tokenizer", "byte", text_files[0], "-o"]):
        r = run([tool, *bad])
        check(r.returncode == 2 and "usage" in r.stderr, f"bad usage {bad}: exit {r.returncode}")
    for bad, message in (
            (["--train-bpe", "300", text_files[0], "-o", "d", "--mask-token", "mask"],
             "--mask-token wants a token written <like-this> (text never contains it), got 'mask'"),
            (["--train-bpe", "257", text_files[0], "-o", "d", "--mask-token", "<mask>"],
             "--train-bpe with --mask-token wants at least 258 tokens"),
            (["--tokenizer", "byte", text_files[0], "-o", "x.tok", "--mask-token", "<mask>"],
             "--mask-token is for --train-bpe")):
        r = run([tool, *bad])
        check(r.returncode == 2 and message in r.stderr, f"bad usage {bad}: {r.stderr[:200]}")
    missing = os.path.join(work, "no-such-file.txt")
    r = run([tool, "--tokenizer", "byte", text_files[0], missing, "-o", os.path.join(work, "m.tok")])
    check(r.returncode == 1 and missing in r.stderr, f"unreadable input: {r.returncode} {r.stderr}")
    check(not os.path.exists(os.path.join(work, "m.tok")), "no output after a failure")
    bad_jsonl = os.path.join(work, "bad.jsonl")
    with open(bad_jsonl, "w") as f:
        f.write('{"text": "fine"}\n{"text": 3}\n')
    r = run([tool, "--tokenizer", "byte", bad_jsonl, "-o", os.path.join(work, "b.tok")])
    check(r.returncode == 1 and bad_jsonl + ":2" in r.stderr, f"bad JSONL: {r.stderr}")
    with open(bad_jsonl, "w") as f:
        f.write('{"text": "fine"}\n{"text": "unterminated\n')
    r = run([tool, "--tokenizer", "byte", bad_jsonl, "-o", os.path.join(work, "b.tok")])
    check(r.returncode == 1 and bad_jsonl + ":2" in r.stderr, f"malformed JSONL: {r.stderr}")
    r = run([tool, "--tokenizer", "byte", text_files[0], "-o", os.path.join(work, "no-dir", "x.tok")])
    check(r.returncode == 1 and "no-dir" in r.stderr, f"unwritable output: {r.stderr}")

    print(f"{len(FAILURES)} failures")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
