"""Our tokenizers against Hugging Face's `tokenizers` (the reference).

usage: compare_hf.py <bmrt_tok_driver> <work dir>

Trains small vocabularies here with `tokenizers` (nothing is downloaded):
GPT-2 style byte-level BPE (also with the BPE and added-token options GPT-2
does not use), BERT WordPiece (with two added tokens), and Llama-style BPE with byte
fallback (in the Prepend+Replace normalizer form transformers writes, in the
Metaspace pre-tokenizer form, and without byte fallback so that <unk> is
used). Each is saved as tokenizer.json; GPT-2 also as vocab.json +
merges.txt and BERT as vocab.txt, whose references are transformers' own
conversions of those files (GPT2TokenizerFast, BertTokenizerFast); and all
three as transformers' save_pretrained writes them (tokenizer_config.json
names BOS/EOS; AutoTokenizer's ids are the reference for ours).

For every configuration, on the same few thousand strings (tokenizer_corpus.py):
ids without and with special tokens, decode(ids) with special tokens
skipped, decode of random id sequences, and each id's streamed bytes. Invalid
UTF-8 goes to byte-level tokenizers as bytes (must round-trip and decode as
HF decodes our ids) and to the others as Python's decode("utf-8",
"replace"), which is what we document. The first 10 mismatches are printed;
any mismatch fails.
"""

import collections
import json
import os
import random
import subprocess
import sys
import time

from tokenizers import (AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers,
                        processors, trainers)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tokenizer_corpus  # noqa: E402

MIN_STRINGS = 3000
METASPACE = "\u2581"


def train_gpt2(corpus, work):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=1500, min_frequency=2,
                                  special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    os.makedirs(work + "/gpt2", exist_ok=True)
    os.makedirs(work + "/gpt2-files", exist_ok=True)
    tok.save(work + "/gpt2/tokenizer.json")
    tok.model.save(work + "/gpt2-files")
    from transformers import GPT2TokenizerFast
    files = GPT2TokenizerFast(vocab_file=work + "/gpt2-files/vocab.json",
                              merges_file=work + "/gpt2-files/merges.txt")
    return tok, files.backend_tokenizer


def train_gpt2_affixes(corpus, work):
    """Byte-level BPE with the options GPT-2 leaves off: a continuing-subword
    prefix, an end-of-word suffix, a prefix space, and added tokens that
    strip whitespace, match single words only, or match after normalization."""
    tok = Tokenizer(models.BPE(continuing_subword_prefix="##", end_of_word_suffix="</w>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1000, min_frequency=2,
                                  special_tokens=["<|endoftext|>"],
                                  continuing_subword_prefix="##", end_of_word_suffix="</w>",
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, normalized=False, special=True)])
    tok.add_tokens([AddedToken("[X]", rstrip=True, normalized=False),
                    AddedToken("hello world", single_word=True, normalized=True)])
    os.makedirs(work + "/gpt2-affixes", exist_ok=True)
    tok.save(work + "/gpt2-affixes/tokenizer.json")
    return tok


def train_bert(corpus, work):
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                                strip_accents=None, lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix="##")
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    trainer = trainers.WordPieceTrainer(vocab_size=1500, min_frequency=2, special_tokens=specials,
                                        show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    for d in ("bert", "bert-files", "bert-cased-files"):
        os.makedirs(work + "/" + d, exist_ok=True)
    tok.model.save(work + "/bert-files")
    tok.model.save(work + "/bert-cased-files")
    tok.add_tokens([AddedToken("\u00dcmlaut", normalized=True),
                    AddedToken("[NEW]", single_word=True, normalized=False)])
    tok.save(work + "/bert/tokenizer.json")
    with open(work + "/bert-cased-files/tokenizer_config.json", "w") as f:
        json.dump({"do_lower_case": False}, f)
    from transformers import BertTokenizerFast
    uncased = BertTokenizerFast(vocab_file=work + "/bert-files/vocab.txt", do_lower_case=True)
    cased = BertTokenizerFast(vocab_file=work + "/bert-cased-files/vocab.txt", do_lower_case=False)
    return tok, uncased.backend_tokenizer, cased.backend_tokenizer


def llama_vocab(corpus):
    """A SentencePiece-like BPE vocabulary laid out as Llama's: <unk> <s>
    </s>, the 256 <0xNN> byte tokens, then the learned pieces."""
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=METASPACE, prepend_scheme="always")
    trainer = trainers.BpeTrainer(vocab_size=1200, min_frequency=2,
                                  special_tokens=["<unk>", "<s>", "</s>"], limit_alphabet=120,
                                  show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    model = json.loads(tok.to_str())["model"]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab["<0x%02X>" % b] = len(vocab)
    for token, _ in sorted(model["vocab"].items(), key=lambda kv: kv[1]):
        vocab.setdefault(token, len(vocab))
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    return vocab, merges


def llama_tokenizer(vocab, merges, form):
    tok = Tokenizer(models.BPE(vocab, merges, unk_token="<unk>", fuse_unk=True,
                               byte_fallback=form != "unk"))
    if form == "metaspace":
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=METASPACE, prepend_scheme="first",
                                                     split=False)
        tok.decoder = decoders.Sequence([decoders.ByteFallback(),
                                         decoders.Metaspace(replacement=METASPACE,
                                                            prepend_scheme="first")])
    else:  # what transformers' LlamaTokenizerFast writes
        tok.normalizer = normalizers.Sequence([normalizers.Prepend(METASPACE),
                                               normalizers.Replace(" ", METASPACE)])
        tok.decoder = decoders.Sequence([decoders.Replace(METASPACE, " "), decoders.ByteFallback(),
                                         decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True)
                            for t in ("<unk>", "<s>", "</s>")])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", 1)])
    return tok


def save_with_transformers(work, gpt2, bert, llama):
    """The directories transformers' save_pretrained writes (tokenizer.json,
    tokenizer_config.json, special_tokens_map.json, vocab files), reloaded
    with AutoTokenizer, whose bos/eos ids are then the reference for ours."""
    from transformers import AutoTokenizer, BertTokenizerFast, GPT2TokenizerFast, LlamaTokenizerFast
    eot = "<|endoftext|>"
    saved = [("gpt2", GPT2TokenizerFast(tokenizer_object=gpt2, bos_token=eot, eos_token=eot,
                                        unk_token=eot)),
             ("bert", BertTokenizerFast(tokenizer_object=bert, do_lower_case=True)),
             ("llama", LlamaTokenizerFast(tokenizer_object=llama, legacy=True))]
    out = []
    for family, fast in saved:
        path = "%s/%s-saved" % (work, family)
        fast.save_pretrained(path)
        auto = AutoTokenizer.from_pretrained(path, local_files_only=True)
        ids = (-1 if auto.bos_token_id is None else auto.bos_token_id,
               -1 if auto.eos_token_id is None else auto.eos_token_id)
        out.append((family + "-saved", path, family, auto.backend_tokenizer, family, ids))
    return out


def run_driver(driver, args):
    result = subprocess.run([driver] + args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("driver failed: %s %s\n%s" % (driver, " ".join(args), result.stderr))


def write_lines(path, lines):
    with open(path, "w") as f:
        f.write("".join(line + "\n" for line in lines))


def read_lines(path):
    with open(path) as f:
        return f.read().split("\n")[:-1]


def ids_text(ids):
    return ",".join(map(str, ids))


def expected_token_bytes(hf, family):
    """Each id's streamed bytes as derived from HF's vocabulary strings (and,
    for WordPiece, HF's decoder); special tokens stream nothing."""
    from transformers.models.gpt2.tokenization_gpt2 import bytes_to_unicode
    byte_of = {c: b for b, c in bytes_to_unicode().items()}
    specials = {t.content for t in hf.get_added_tokens_decoder().values() if t.special}
    out = []
    for i in range(hf.get_vocab_size(with_added_tokens=True)):
        t = hf.id_to_token(i)
        if t is None or t in specials:
            out.append(b"")
        elif family == "gpt2":
            out.append(bytes(byte_of[c] for c in t) if all(c in byte_of for c in t) else t.encode())
        elif family == "llama":
            is_byte = len(t) == 6 and t.startswith("<0x") and t.endswith(">")
            out.append(bytes([int(t[3:5], 16)]) if is_byte else t.replace(METASPACE, " ").encode())
        else:  # WordPiece: what HF's decoder adds for t after some first token
            out.append(hf.decoder.decode(["x", t])[1:].encode())
    return out


def clip(value, limit=300):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "... (%d chars)" % len(text)


class Report:
    def __init__(self):
        self.mismatches = 0
        self.compared = 0
        self.by_check = collections.Counter()

    def check(self, config, what, item, ours, theirs):
        self.compared += 1
        if ours == theirs:
            return
        self.mismatches += 1
        self.by_check[(config, what)] += 1
        if self.mismatches <= 10:
            print("MISMATCH [%s] %s for %s\n  ours: %s\n  hf:   %s"
                  % (config, what, clip(item), clip(ours), clip(theirs)))


KINDS = {"gpt2": "gpt2-bpe", "bert": "wordpiece", "llama": "sentencepiece-bpe"}


def compare(report, driver, work, name, path, hint, hf, family, bos_eos, strings, invalid):
    start = time.time()
    byte_level = family == "gpt2"
    specials = [t.content for t in hf.get_added_tokens_decoder().values() if t.special]
    spec = json.loads(hf.to_str())
    lossless = byte_level and not (spec["model"].get("continuing_subword_prefix") or
                                   spec["model"].get("end_of_word_suffix") or
                                   spec["pre_tokenizer"].get("add_prefix_space"))
    inputs = [s.encode("utf-8") for s in strings] + invalid
    src, out = "%s/%s.in" % (work, name), "%s/%s.out" % (work, name)
    write_lines(src, [b.hex() for b in inputs])
    run_driver(driver, ["encode", path, hint, src, out])
    lines = read_lines(out)
    header, rows = lines[0].split(), lines[1:]
    if len(rows) != len(inputs):
        sys.exit("[%s] driver gave %d rows for %d inputs" % (name, len(rows), len(inputs)))
    report.check(name, "kind", path, header[0], KINDS[family])
    report.check(name, "bos, eos", path, (int(header[2]), int(header[3])), bos_eos)
    report.check(name, "vocab size", path, int(header[1]), hf.get_vocab_size(with_added_tokens=True))
    # Invalid UTF-8: byte-level encodes the bytes; the others see U+FFFD.
    texts = strings + ([b.decode("utf-8", "replace") for b in invalid] if not byte_level else [])
    plain = hf.encode_batch(texts, add_special_tokens=False)
    framed = hf.encode_batch(texts, add_special_tokens=True)
    for i, row in enumerate(rows):
        ours_plain, ours_framed, ours_decoded, ours_stream = row.split(";")
        raw = inputs[i]
        if i < len(texts):
            report.check(name, "encode", texts[i], ours_plain, ids_text(plain[i].ids))
            report.check(name, "encode(special)", texts[i], ours_framed, ids_text(framed[i].ids))
            theirs = hf.decode(framed[i].ids, skip_special_tokens=True)
            report.check(name, "decode", texts[i], bytes.fromhex(ours_decoded).decode("utf-8"), theirs)
        else:  # byte-level and invalid UTF-8: no HF encode exists
            ids = [int(x) for x in ours_framed.split(",") if x]
            theirs = hf.decode(ids, skip_special_tokens=True)
            report.check(name, "decode(invalid utf-8)", raw, bytes.fromhex(ours_decoded).decode("utf-8"),
                         theirs)
        if byte_level:
            # Streamed bytes are what HF's ByteLevel decoder concatenates; for
            # plain GPT-2, exactly the input bytes (special tokens aside).
            stream = bytes.fromhex(ours_stream)
            ids = [int(x) for x in ours_plain.split(",") if x]
            report.check(name, "streamed text", raw, stream.decode("utf-8", "replace"),
                         hf.decode(ids, skip_special_tokens=True))
            if lossless and not any(t.encode() in raw for t in specials):
                report.check(name, "streamed bytes", raw, stream, raw)
    # Random id sequences (byte tokens that do not form UTF-8, specials, ...).
    rng = random.Random(5)
    size = hf.get_vocab_size(with_added_tokens=True)
    seqs = [[rng.randrange(size) for _ in range(rng.randint(1, 24))] for _ in range(1000)]
    write_lines(src, [ids_text(s) for s in seqs])
    run_driver(driver, ["decode", path, hint, src, out])
    for seq, row in zip(seqs, read_lines(out)):
        report.check(name, "decode(random ids)", seq, bytes.fromhex(row).decode("utf-8"),
                     hf.decode(seq, skip_special_tokens=True))
    run_driver(driver, ["vocab", path, hint, out])
    expected = expected_token_bytes(hf, family)
    for i, row in enumerate(read_lines(out)):
        report.check(name, "tokenBytes", i, bytes.fromhex(row), expected[i])
    print("[%s] %d strings + %d invalid UTF-8, 1000 id sequences, %d tokens: %.1f s"
          % (name, len(strings), len(invalid), size, time.time() - start))


def main():
    driver, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    start = time.time()
    corpus = tokenizer_corpus.training_corpus()
    strings = tokenizer_corpus.test_strings()
    invalid = tokenizer_corpus.invalid_utf8()
    assert len(strings) >= MIN_STRINGS
    gpt2, gpt2_files = train_gpt2(corpus, work)
    gpt2_affixes = train_gpt2_affixes(corpus, work)
    bert, bert_files, bert_cased_files = train_bert(corpus, work)
    vocab, merges = llama_vocab(corpus)
    # Without a tokenizer_config.json, BOS/EOS are <|endoftext|> for GPT-2,
    # <s> and </s> for Llama, none for BERT.
    eot = (gpt2.token_to_id("<|endoftext|>"),) * 2
    configs = [("gpt2", work + "/gpt2/tokenizer.json", "gpt2", gpt2, "gpt2", eot),
               ("gpt2-files", work + "/gpt2-files", "gpt2", gpt2_files, "gpt2", eot),
               ("gpt2-affixes", work + "/gpt2-affixes", "gpt2", gpt2_affixes, "gpt2", eot),
               ("bert", work + "/bert", "bert", bert, "bert", (-1, -1)),
               ("bert-files", work + "/bert-files/vocab.txt", "", bert_files, "bert", (-1, -1)),
               ("bert-cased-files", work + "/bert-cased-files", "bert", bert_cased_files, "bert",
                (-1, -1))]
    for form in ("prepend", "metaspace", "unk"):
        tok = llama_tokenizer(vocab, merges, form)
        os.makedirs("%s/llama-%s" % (work, form), exist_ok=True)
        tok.save("%s/llama-%s/tokenizer.json" % (work, form))
        configs.append(("llama-" + form, "%s/llama-%s" % (work, form), "llama", tok, "llama",
                        (1, 2)))
    configs += save_with_transformers(work, gpt2, bert, configs[6][3])
    print("trained in %.1f s" % (time.time() - start))
    report = Report()
    for name, path, hint, hf, family, bos_eos in configs:
        compare(report, driver, work, name, path, hint, hf, family, bos_eos, strings, invalid)
    for (config, what), n in sorted(report.by_check.items()):
        print("  %s: %s: %d mismatches" % (config, what, n))
    print("%d checks, %d mismatches, %.1f s" % (report.compared, report.mismatches,
                                                 time.time() - start))
    sys.exit(1 if report.mismatches else 0)


if __name__ == "__main__":
    main()
