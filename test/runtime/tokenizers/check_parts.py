"""Our pipeline steps against Hugging Face's `tokenizers`, one at a time:
character classes and BERT normalization code point by code point, NFD,
and the pre-tokenized pieces of the comparison strings.

usage: check_parts.py <bmrt_tok_parts_dump> <work dir>

For each code point of planes 0-3 and 14 (every assigned character of
Unicode 14 lives there, bar private use) and every 97th of the rest, both
sides answer the same probes: how GPT-2's regex splits "a"+c, "1"+c, "!"+c
(letter / number / space / other), how BertPreTokenizer splits "a"+c+"b"
(whitespace / punctuation), and what BertNormalizer's clean_text,
handle_chinese_chars, strip_accents and lowercase steps each make of c.
Then NFD of every decomposable character and of every combining mark
between a base letter and one mark of each combining class (which checks
canonical reordering). Last, the pieces of every string of
tokenizer_corpus.test_strings(): GPT-2's ByteLevel pre-tokenizer, BERT's
normalizer + BertPreTokenizer, and Metaspace; a wrong split can be
invisible in the ids of a small vocabulary, but not here. The first 10
differences are printed; any difference fails.
"""

import os
import subprocess
import sys
import time
import unicodedata

from tokenizers import normalizers, pre_tokenizers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tokenizer_corpus  # noqa: E402


def code_points():
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        plane = cp >> 16
        if plane in (0, 1, 2, 3, 14) or cp % 97 == 0:
            yield cp


def hf_classes(cps):
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    bert = pre_tokenizers.BertPreTokenizer()

    def norm(clean, chinese, strip, lower):
        return normalizers.BertNormalizer(clean_text=clean, handle_chinese_chars=chinese,
                                          strip_accents=strip, lowercase=lower).normalize_str

    clean, chinese = norm(True, False, False, False), norm(False, True, False, False)
    strip, lower = norm(False, False, True, False), norm(False, False, False, True)
    lines = []
    for cp in cps:
        c = chr(cp)
        counts = "".join(str(len(byte_level.pre_tokenize_str(p + c))) for p in ("a", "1", "!"))
        pieces = ",".join(piece.encode().hex() for piece, _ in bert.pre_tokenize_str("a" + c + "b"))
        lines.append("%x %s %s %s %s %s %s" % (
            cp, counts, pieces, clean(c).encode().hex(), chinese(c).encode().hex(),
            strip(c).encode().hex(), lower(c).encode().hex()))
    return lines


def nfd_strings():
    marks = [cp for cp in range(0x110000)
             if not 0xD800 <= cp <= 0xDFFF and unicodedata.combining(chr(cp))]
    one_per_class = {}
    for cp in marks:
        one_per_class.setdefault(unicodedata.combining(chr(cp)), cp)
    strings = [chr(cp) for cp in range(0x110000)
               if not 0xD800 <= cp <= 0xDFFF and unicodedata.decomposition(chr(cp))]
    for cp in marks:
        for rep in one_per_class.values():
            strings.append("a" + chr(cp) + chr(rep))
    return strings


def hf_pieces(strings):
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    bert_norm = normalizers.BertNormalizer(lowercase=True)
    bert = pre_tokenizers.BertPreTokenizer()
    metaspace = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)

    def join(pieces):
        return ",".join(p.encode().hex() for p, _ in pieces)

    lines = []
    for s in strings:
        normalized = bert_norm.normalize_str(s)
        lines.append("%s %s %s %s" % (join(byte_level.pre_tokenize_str(s)), normalized.encode().hex(),
                                      join(bert.pre_tokenize_str(normalized)),
                                      join(metaspace.pre_tokenize_str(s))))
    return lines


def run_dump(dump, mode, lines, work):
    src, out = os.path.join(work, mode + ".in"), os.path.join(work, mode + ".out")
    with open(src, "w") as f:
        f.write("\n".join(lines) + "\n")
    subprocess.run([dump, mode, src, out], check=True)
    with open(out) as f:
        return f.read().splitlines()


def compare(what, ours, theirs, describe):
    if len(ours) != len(theirs):
        print("FAIL %s: %d lines from us, %d from HF" % (what, len(ours), len(theirs)))
        return 1
    bad = [i for i in range(len(ours)) if ours[i] != theirs[i]]
    for i in bad[:10]:
        print("MISMATCH %s %s\n  ours: %s\n  hf:   %s" % (what, describe(i), ours[i], theirs[i]))
    print("%s: %d compared, %d mismatches" % (what, len(ours), len(bad)))
    return len(bad)


def main():
    dump, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    start = time.time()
    cps = list(code_points())
    theirs = hf_classes(cps)
    ours = run_dump(dump, "classes", ["%x" % cp for cp in cps], work)
    bad = compare("classes", ours, theirs, lambda i: "U+%04X" % cps[i])
    strings = nfd_strings()
    nfd = normalizers.NFD()
    theirs = [nfd.normalize_str(s).encode().hex() for s in strings]
    ours = run_dump(dump, "nfd", [s.encode().hex() for s in strings], work)
    bad += compare("nfd", ours, theirs,
                   lambda i: " ".join("U+%04X" % ord(c) for c in strings[i]))
    strings = tokenizer_corpus.test_strings()
    ours = run_dump(dump, "pieces", [s.encode().hex() for s in strings], work)
    bad += compare("pieces", ours, hf_pieces(strings), lambda i: repr(strings[i]))
    print("%.1f s" % (time.time() - start))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
