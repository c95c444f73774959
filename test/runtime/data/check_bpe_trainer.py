"""bmb-tokenize --train-bpe against Hugging Face's `tokenizers` (the reference).

usage: check_bpe_trainer.py <bmb-tokenize> <encode_driver> <work dir>

Trains a 1000-token byte-level BPE on the Debian license texts
(/usr/share/common-licenses, each file one document) with ours, then
  * loads the result with HF (ByteLevelBPETokenizer(vocab, merges), and
    transformers' GPT2TokenizerFast, which also makes <|endoftext|> special)
    and with our loadTokenizer (encode_driver), encodes the same few thousand
    strings (test/runtime/tokenizers/tokenizer_corpus.py plus the license
    lines) with all of them: the ids must be equal and decode must give the
    string back;
  * trains HF's BpeTrainer on the same documents with the same settings
    (GPT-2 pre-tokenization without prefix space, the 256-byte initial
    alphabet, min_frequency 2, <|endoftext|>) and reports how many of the
    first 200 merges (and of all) agree. Our trainer follows HF's algorithm,
    ties included, so all are expected to; fewer than 190 of the first 200
    fails;
  * trains again with --mask-token "<mask>" and checks that transformers'
    GPT2TokenizerFast.from_pretrained (which reads tokenizer_config.json)
    and our loader agree on texts holding "<mask>" (one special id, the
    last), and that a tokenizer_config.json naming a token the vocabulary
    lacks is refused by name.
"""

import os
import subprocess
import sys

from tokenizers import ByteLevelBPETokenizer, Tokenizer, models, pre_tokenizers, trainers

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tokenizers"))
import tokenizer_corpus  # noqa: E402

LICENSES = "/usr/share/common-licenses"
VOCAB = 1000
MIN_STRINGS = 500


def license_files():
    names = sorted(os.listdir(LICENSES))
    return [os.path.join(LICENSES, n) for n in names if os.path.isfile(os.path.join(LICENSES, n))]


def read_merges(path):
    with open(path, encoding="utf-8") as f:
        return [tuple(line.rstrip("\n").split(" ")) for line in f
                if line.strip() and not line.startswith("#version")]


def main():
    tool, driver, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    files = license_files()
    docs = [open(p, encoding="utf-8").read() for p in files]
    ours_dir = os.path.join(work, "ours")
    subprocess.run([tool, "--train-bpe", str(VOCAB), *files, "-o", ours_dir], check=True)
    vocab_path, merges_path = ours_dir + "/vocab.json", ours_dir + "/merges.txt"

    # --- the merges against HF's trainer ---
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, min_frequency=2,
                                  special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(docs, trainer)
    hf_dir = os.path.join(work, "hf")
    os.makedirs(hf_dir, exist_ok=True)
    tok.model.save(hf_dir)
    ours_m, hf_m = read_merges(merges_path), read_merges(hf_dir + "/merges.txt")
    first = sum(a == b for a, b in zip(ours_m[:200], hf_m[:200]))
    total = sum(a == b for a, b in zip(ours_m, hf_m))
    print(f"merges: ours {len(ours_m)}, HF {len(hf_m)}; first 200 agree at {first}/200 positions, "
          f"all at {total}/{max(len(ours_m), len(hf_m))}; same set: {set(ours_m) == set(hf_m)}")
    for i, (a, b) in enumerate(zip(ours_m, hf_m)):
        if a != b:
            print(f"  first difference at merge {i}: ours {a}, HF {b}")
            break
    failures = 0
    if first < 190:
        print("FAIL: fewer than 190 of the first 200 merges agree")
        failures += 1

    # --- our files under HF's and our loaders ---
    strings = [s for s in tokenizer_corpus.test_strings()]
    for d in docs:
        strings += [line for line in d.split("\n") if line.strip()][:80]
    strings = list(dict.fromkeys(s for s in strings if "\n" not in s and "\r" not in s))
    assert len(strings) >= MIN_STRINGS, len(strings)
    hf_plain = ByteLevelBPETokenizer(vocab_path, merges_path)
    from transformers import GPT2TokenizerFast
    hf_gpt2 = GPT2TokenizerFast(vocab_file=vocab_path, merges_file=merges_path).backend_tokenizer

    in_path, out_path = os.path.join(work, "strings.hex"), os.path.join(work, "ours.out")
    with open(in_path, "w") as f:
        for s in strings:
            f.write(s.encode("utf-8").hex() + "\n")
    subprocess.run([driver, ours_dir, in_path, out_path], check=True)
    with open(out_path) as f:
        rows = [line.rstrip("\n").split(";") for line in f]
    assert len(rows) == len(strings), (len(rows), len(strings))

    compared_plain = 0
    shown = 0
    for s, (ids_text, dec_hex) in zip(strings, rows):
        ours = [int(x) for x in ids_text.split(",")] if ids_text else []
        ref = hf_gpt2.encode(s, add_special_tokens=False).ids
        problems = []
        if ours != ref:
            problems.append(f"ids differ from GPT2TokenizerFast: ours {ours[:20]} HF {ref[:20]}")
        if "<|endoftext|>" not in s:
            compared_plain += 1
            plain = hf_plain.encode(s).ids
            if ours != plain:
                problems.append(f"ids differ from ByteLevelBPETokenizer: {plain[:20]}")
        if bytes.fromhex(dec_hex).decode("utf-8") != s.replace("<|endoftext|>", ""):
            problems.append(f"our decode does not round-trip: {bytes.fromhex(dec_hex)[:60]!r}")
        if hf_gpt2.decode(ours, skip_special_tokens=True) != s.replace("<|endoftext|>", ""):
            problems.append("HF's decode of our ids does not round-trip")
        if problems:
            failures += 1
            if shown < 10:
                shown += 1
                print(f"MISMATCH on {s[:60]!r}: " + "; ".join(problems))
    print(f"{len(strings)} strings: ids vs GPT2TokenizerFast, {compared_plain} also vs "
          f"ByteLevelBPETokenizer, decode round trips; {failures} failures")
    failures += check_mask_token(tool, driver, work, files, strings)
    return 1 if failures else 0


def check_mask_token(tool, driver, work, files, strings):
    """--mask-token: the vocabulary's last id, special for HF and for us."""
    from transformers import GPT2TokenizerFast
    mask_dir = os.path.join(work, "ours-mask")
    subprocess.run([tool, "--train-bpe", str(VOCAB), *files, "-o", mask_dir,
                    "--mask-token", "<mask>"], check=True)
    hf = GPT2TokenizerFast.from_pretrained(mask_dir)
    failures = 0
    if hf.mask_token != "<mask>" or hf.mask_token_id != VOCAB - 1 or len(hf) != VOCAB:
        print(f"FAIL: HF sees mask {hf.mask_token!r} id {hf.mask_token_id}, {len(hf)} tokens; "
              f"expected <mask> at {VOCAB - 1} of {VOCAB}")
        failures += 1
    texts = ["It was <mask>.", "<mask>", "a<mask>b", "<mask> <mask>", " <mask>"]
    texts += [s + " <mask>" for s in strings[:200] if "<" not in s]
    in_path, out_path = os.path.join(work, "mask.hex"), os.path.join(work, "mask.out")
    with open(in_path, "w") as f:
        for s in texts:
            f.write(s.encode("utf-8").hex() + "\n")
    subprocess.run([driver, mask_dir, in_path, out_path], check=True)
    with open(out_path) as f:
        rows = [line.rstrip("\n").split(";") for line in f]
    for s, (ids_text, _) in zip(texts, rows):
        ours = [int(x) for x in ids_text.split(",")] if ids_text else []
        ref = hf(s, add_special_tokens=False)["input_ids"]
        if ours != ref or ours.count(VOCAB - 1) != s.count("<mask>"):
            failures += 1
            print(f"MISMATCH (mask) on {s[:60]!r}: ours {ours[:20]} HF {ref[:20]}")
    # A mask token the vocabulary lacks: refused, naming it and the file.
    bad_dir = os.path.join(work, "bad-mask")
    os.makedirs(bad_dir, exist_ok=True)
    for name in ("vocab.json", "merges.txt"):
        with open(os.path.join(mask_dir, name), "rb") as src, \
                open(os.path.join(bad_dir, name), "wb") as dst:
            dst.write(src.read())
    with open(os.path.join(bad_dir, "tokenizer_config.json"), "w") as f:
        f.write('{"mask_token": "[MASK]"}')
    run = subprocess.run([driver, bad_dir, in_path, out_path], capture_output=True, text=True)
    expected = 'tokenizer_config.json: mask_token "[MASK]" is not in'
    if run.returncode == 0 or expected not in run.stderr:
        failures += 1
        print(f"FAIL: a mask token outside the vocabulary: exit {run.returncode}, {run.stderr!r}")
    print(f"--mask-token: {len(texts)} texts with <mask> vs GPT2TokenizerFast.from_pretrained; "
          f"{failures} failures")
    return failures


if __name__ == "__main__":
    sys.exit(main())
