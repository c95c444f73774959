#!/usr/bin/python3
"""Writes runtime/tokenizers/unicode_tables.inc: the Unicode data the
tokenizers need (character classes, lower-case mappings, canonical
decompositions, combining classes).

Run by hand with Debian 12's /usr/bin/python3, whose `unicodedata` is
Unicode 14.0.0; the output is committed and the build never runs this:

    /usr/bin/python3 scripts/gen-unicode-tables.py > runtime/tokenizers/unicode_tables.inc

Why not all plain Unicode 14: our reference is Hugging Face's `tokenizers`
0.19.1, and it does not read one Unicode version everywhere.

* GPT-2's pre-tokenization regex runs on Oniguruma 6.9.8 (Unicode 14.0):
  \\p{L}, \\p{N} and \\s are Unicode 14 here, exactly.
* char::is_whitespace and char::to_lowercase come from Rust's std; for every
  code point they agree with Unicode 14 White_Space and Python's per-char
  str.lower() (checked against tokenizers over all code points).
* BERT's punctuation, control and non-spacing-mark tests use the Rust crate
  `unicode_categories` 0.1.1, whose tables are frozen at Unicode 8.0. The
  differences are listed below as data (*_ONLY_IN_UNICODE_14 are code points
  assigned or re-categorised since then; *_ONLY_IN_CRATE the reverse). They
  were computed by comparing the crate's src/tables.rs (Debian package
  librust-unicode-categories-dev 0.1.1) with Unicode 14.
* NFD (BERT's strip_accents) uses `unicode-normalization-alignments` 0.1.12,
  frozen at Unicode 9.0: the marks below have combining class 0 there and
  U+11938 has no decomposition. Found by normalising every code point (and
  mark pairs) with tokenizers' NFD normalizer.

test/runtime/tokenizers/check_parts.py checks every class and mapping
against tokenizers itself, so a wrong entry here fails a test.
"""

import sys
import unicodedata

EXPECTED_UNICODE = "14.0.0"

# White_Space (PropList.txt); Python has no accessor for the property. The
# list is fixed since Unicode 6.3.
WHITE_SPACE = [(0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680),
               (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F),
               (0x3000, 0x3000)]

# unicode_categories 0.1.1 (Unicode 8.0) versus Unicode 14: see the header.
PUNCT_ONLY_IN_UNICODE_14 = [
    (0x061D, 0x061D), (0x09FD, 0x09FD), (0x0A76, 0x0A76), (0x0C77, 0x0C77), (0x0C84, 0x0C84),
    (0x1B7D, 0x1B7E), (0x2E43, 0x2E4F), (0x2E52, 0x2E5D), (0x10EAD, 0x10EAD), (0x10F55, 0x10F59),
    (0x10F86, 0x10F89), (0x1144B, 0x1144F), (0x1145A, 0x1145B), (0x1145D, 0x1145D),
    (0x11660, 0x1166C), (0x116B9, 0x116B9), (0x1183B, 0x1183B), (0x11944, 0x11946),
    (0x119E2, 0x119E2), (0x11A3F, 0x11A46), (0x11A9A, 0x11A9C), (0x11A9E, 0x11AA2),
    (0x11C41, 0x11C45), (0x11C70, 0x11C71), (0x11EF7, 0x11EF8), (0x11FFF, 0x11FFF),
    (0x12FF1, 0x12FF2), (0x16E97, 0x16E9A), (0x16FE2, 0x16FE2), (0x1E95E, 0x1E95F)]
PUNCT_ONLY_IN_CRATE = [(0x166D, 0x166D), (0x111C9, 0x111C9)]
MN_ONLY_IN_UNICODE_14 = [
    (0x07FD, 0x07FD), (0x0898, 0x089F), (0x08CA, 0x08E1), (0x09FE, 0x09FE), (0x0AFA, 0x0AFF),
    (0x0B55, 0x0B55), (0x0C04, 0x0C04), (0x0C3C, 0x0C3C), (0x0D00, 0x0D00), (0x0D3B, 0x0D3C),
    (0x0D81, 0x0D81), (0x0EBA, 0x0EBA), (0x180F, 0x180F), (0x1885, 0x1886), (0x1ABF, 0x1ACE),
    (0x1DF6, 0x1DFB), (0xA82C, 0xA82C), (0xA8C5, 0xA8C5), (0xA8FF, 0xA8FF), (0xA9BD, 0xA9BD),
    (0x10D24, 0x10D27), (0x10EAB, 0x10EAC), (0x10F46, 0x10F50), (0x10F82, 0x10F85),
    (0x11070, 0x11070), (0x11073, 0x11074), (0x110C2, 0x110C2), (0x111C9, 0x111C9),
    (0x111CF, 0x111CF), (0x1123E, 0x1123E), (0x1133B, 0x1133B), (0x11438, 0x1143F),
    (0x11442, 0x11444), (0x11446, 0x11446), (0x1145E, 0x1145E), (0x1182F, 0x11837),
    (0x11839, 0x1183A), (0x1193B, 0x1193C), (0x1193E, 0x1193E), (0x11943, 0x11943),
    (0x119D4, 0x119D7), (0x119DA, 0x119DB), (0x119E0, 0x119E0), (0x11A01, 0x11A0A),
    (0x11A33, 0x11A38), (0x11A3B, 0x11A3E), (0x11A47, 0x11A47), (0x11A51, 0x11A56),
    (0x11A59, 0x11A5B), (0x11A8A, 0x11A96), (0x11A98, 0x11A99), (0x11C30, 0x11C36),
    (0x11C38, 0x11C3D), (0x11C3F, 0x11C3F), (0x11C92, 0x11CA7), (0x11CAA, 0x11CB0),
    (0x11CB2, 0x11CB3), (0x11CB5, 0x11CB6), (0x11D31, 0x11D36), (0x11D3A, 0x11D3A),
    (0x11D3C, 0x11D3D), (0x11D3F, 0x11D45), (0x11D47, 0x11D47), (0x11D90, 0x11D91),
    (0x11D95, 0x11D95), (0x11D97, 0x11D97), (0x11EF3, 0x11EF4), (0x16F4F, 0x16F4F),
    (0x16FE4, 0x16FE4), (0x1CF00, 0x1CF2D), (0x1CF30, 0x1CF46), (0x1E000, 0x1E006),
    (0x1E008, 0x1E018), (0x1E01B, 0x1E021), (0x1E023, 0x1E024), (0x1E026, 0x1E02A),
    (0x1E130, 0x1E136), (0x1E2AE, 0x1E2AE), (0x1E2EC, 0x1E2EF), (0x1E944, 0x1E94A)]
MN_ONLY_IN_CRATE = [(0x1734, 0x1734)]
# The crate's "other": Cc, Cf and the private-use planes (no Cn, no Cs).
CONTROL_ONLY_IN_UNICODE_14 = [(0x0890, 0x0891), (0x08E2, 0x08E2), (0x110CD, 0x110CD),
                              (0x13430, 0x13438)]

# unicode-normalization-alignments 0.1.12 (Unicode 9.0) versus Unicode 14.
CCC_ZERO_IN_HF = [
    (0x07FD, 0x07FD), (0x0898, 0x089F), (0x08CA, 0x08D3), (0x09FE, 0x09FE), (0x0C3C, 0x0C3C),
    (0x0D3B, 0x0D3C), (0x0EBA, 0x0EBA), (0x1715, 0x1715), (0x1ABF, 0x1ACE), (0x1DF6, 0x1DFA),
    (0xA82C, 0xA82C), (0x10D24, 0x10D27), (0x10EAB, 0x10EAC), (0x10F46, 0x10F50),
    (0x10F82, 0x10F85), (0x11070, 0x11070), (0x1133B, 0x1133B), (0x1145E, 0x1145E),
    (0x11839, 0x1183A), (0x1193D, 0x1193E), (0x11943, 0x11943), (0x119E0, 0x119E0),
    (0x11A34, 0x11A34), (0x11A47, 0x11A47), (0x11A99, 0x11A99), (0x11D42, 0x11D42),
    (0x11D44, 0x11D45), (0x11D97, 0x11D97), (0x16FF0, 0x16FF1), (0x1E130, 0x1E136),
    (0x1E2AE, 0x1E2AE), (0x1E2EC, 0x1E2EF)]
NO_DECOMPOSITION_IN_HF = [0x11938]

# Regex \w is Alphabetic + M + Nd + Pc + Join_Control. Alphabetic is L + Nl +
# Other_Alphabetic; Other_Alphabetic outside M is only these So ranges
# (circled and squared Latin letters). Used for added tokens' single_word.
OTHER_ALPHABETIC_SYMBOLS = [(0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169),
                            (0x1F170, 0x1F189)]

# Bits of CharClassRange::flags; unicode.h declares the same names.
LETTER, NUMBER, WHITE, BERT_PUNCT, BERT_MN, BERT_CONTROL, WORD = 1, 2, 4, 8, 16, 32, 64
ASCII_PUNCT = set(range(33, 48)) | set(range(58, 65)) | set(range(91, 97)) | set(range(123, 127))
MAX_CP = 0x10FFFF


def in_ranges(cp, ranges):
    return any(a <= cp <= b for a, b in ranges)


def expand(ranges):
    return {cp for a, b in ranges for cp in range(a, b + 1)}


def class_flags():
    white = expand(WHITE_SPACE)
    punct_add, punct_del = expand(PUNCT_ONLY_IN_CRATE), expand(PUNCT_ONLY_IN_UNICODE_14)
    mn_add, mn_del = expand(MN_ONLY_IN_CRATE), expand(MN_ONLY_IN_UNICODE_14)
    control_del = expand(CONTROL_ONLY_IN_UNICODE_14)
    other_alpha = expand(OTHER_ALPHABETIC_SYMBOLS)
    flags = [0] * (MAX_CP + 1)
    for cp in range(MAX_CP + 1):
        if 0xD800 <= cp <= 0xDFFF:
            continue  # never decoded: UTF-8 cannot carry surrogates
        cat = unicodedata.category(chr(cp))
        f = 0
        if cat[0] == "L":
            f |= LETTER
        if cat[0] == "N":
            f |= NUMBER
        if cp in white:
            f |= WHITE
        if cp in ASCII_PUNCT or ((cat[0] == "P" or cp in punct_add) and cp not in punct_del):
            f |= BERT_PUNCT
        if (cat == "Mn" or cp in mn_add) and cp not in mn_del:
            f |= BERT_MN
        if cat in ("Cc", "Cf", "Co") and cp not in control_del:
            f |= BERT_CONTROL
        if (cat[0] in "LM" or cat in ("Nd", "Nl", "Pc") or cp in (0x200C, 0x200D)
                or cp in other_alpha):
            f |= WORD
        flags[cp] = f
    ranges = []
    for cp, f in enumerate(flags):
        if ranges and ranges[-1][2] == f and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp, f])
    return ranges


def lowercase_entries():
    out = []
    for cp in range(MAX_CP + 1):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        low = chr(cp).lower()
        if low != chr(cp):
            if len(low) > 3:
                sys.exit("lower-case mapping of U+%04X is longer than 3" % cp)
            out.append((cp, [ord(c) for c in low]))
    return out


def decomposition_entries():
    out = []
    for cp in range(MAX_CP + 1):
        if 0xD800 <= cp <= 0xDFFF or 0xAC00 <= cp <= 0xD7A3:
            continue  # Hangul syllables decompose by formula (unicode.cpp)
        if cp in NO_DECOMPOSITION_IN_HF:
            continue
        nfd = unicodedata.normalize("NFD", chr(cp))
        if nfd != chr(cp):
            out.append((cp, [ord(c) for c in nfd]))
    return out


def combining_ranges():
    zero = expand(CCC_ZERO_IN_HF)
    ranges = []
    for cp in range(MAX_CP + 1):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ccc = 0 if cp in zero else unicodedata.combining(chr(cp))
        if ccc == 0:
            continue
        if ranges and ranges[-1][2] == ccc and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp, ccc])
    return ranges


def main():
    if unicodedata.unidata_version != EXPECTED_UNICODE:
        sys.exit("expected unicodedata %s (Debian 12's python3), found %s: the frozen-table "
                 "differences above are relative to %s" %
                 (EXPECTED_UNICODE, unicodedata.unidata_version, EXPECTED_UNICODE))
    w = sys.stdout.write
    w("// Generated by scripts/gen-unicode-tables.py from Unicode %s (Python %s unicodedata),\n"
      "// with Hugging Face tokenizers' frozen-table differences applied. Do not edit.\n\n"
      % (unicodedata.unidata_version, sys.version.split()[0]))
    w("static const CharClassRange kCharClassRanges[] = {\n")
    for a, b, f in class_flags():
        w("    {0x%X, 0x%X, %d},\n" % (a, b, f))
    w("};\n\n")
    w("static const LowercaseEntry kLowercase[] = {\n")
    for cp, low in lowercase_entries():
        low = low + [0] * (3 - len(low))
        w("    {0x%X, {0x%X, 0x%X, 0x%X}},\n" % (cp, low[0], low[1], low[2]))
    w("};\n\n")
    data, entries = [], []
    for cp, seq in decomposition_entries():
        entries.append((cp, len(data), len(seq)))
        data.extend(seq)
    w("static const DecompositionEntry kDecomposition[] = {\n")
    for cp, offset, length in entries:
        w("    {0x%X, %d, %d},\n" % (cp, offset, length))
    w("};\n\n")
    w("static const uint32_t kDecompositionData[] = {\n")
    for i in range(0, len(data), 8):
        w("    " + " ".join("0x%X," % c for c in data[i:i + 8]) + "\n")
    w("};\n\n")
    w("static const CombiningClassRange kCombiningClass[] = {\n")
    for a, b, ccc in combining_ranges():
        w("    {0x%X, 0x%X, %d},\n" % (a, b, ccc))
    w("};\n")


if __name__ == "__main__":
    main()
