#!/usr/bin/env python3
"""Turns Debian's `fortunes` package into a JSONL training corpus.

usage: fortunes-corpus.py OUT.jsonl [FORTUNES_DIR]

Each fortune (the text between lines holding a single "%") becomes one line
{"text": ..., "category": <file name>}. The picture files (art, ascii-art)
are left out: their text is drawing, not language. Deterministic: files in
name order, fortunes in file order.
"""
import json
import os
import sys

SKIP = {"art", "ascii-art"}


def fortunes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        entry = []
        for line in f:
            if line.rstrip("\n") == "%":
                if entry:
                    yield "".join(entry).strip("\n")
                entry = []
            else:
                entry.append(line)
        if entry and "".join(entry).strip():
            yield "".join(entry).strip("\n")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[2])
    src = sys.argv[2] if len(sys.argv) == 3 else "/usr/share/games/fortunes"
    if not os.path.isdir(src):
        sys.exit("fortunes-corpus: %s not found: install Debian's 'fortunes' package "
                 "(scripts/install-deps.sh does)" % src)
    count, size = 0, 0
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        for name in sorted(os.listdir(src)):
            path = os.path.join(src, name)
            if name in SKIP or "." in name or os.path.islink(path) or not os.path.isfile(path):
                continue
            for text in fortunes(path):
                out.write(json.dumps({"text": text, "category": name}, ensure_ascii=False) + "\n")
                count += 1
                size += len(text.encode("utf-8"))
    if count == 0:
        sys.exit("fortunes-corpus: no fortunes under %s" % src)
    print("fortunes-corpus: %d fortunes, %.1f MB of text -> %s" % (count, size / 1e6, sys.argv[1]))


if __name__ == "__main__":
    main()
