#!/usr/bin/env python3
"""Turns Debian's `fortunes` package into a JSONL training corpus.

usage: fortunes-corpus.py [--one-line] OUT.jsonl [FORTUNES_DIR]

Each fortune (the text between lines holding a single "%") becomes one line
{"text": ..., "category": <file name>}. --one-line collapses each fortune's
line breaks, tabs and runs of spaces to single spaces: the tuning demo's
masked LM then learns from text shaped like the examples it classifies
(fortunes-topics.py writes them that way), not from layout. The picture files (art, ascii-art)
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
    args = sys.argv[1:]
    one_line = bool(args) and args[0] == "--one-line"
    if one_line:
        args = args[1:]
    if len(args) not in (1, 2) or args[0].startswith("-"):
        sys.exit(__doc__.strip().splitlines()[2])
    out_path = args[0]
    src = args[1] if len(args) == 2 else "/usr/share/games/fortunes"
    if not os.path.isdir(src):
        sys.exit("fortunes-corpus: %s not found: install Debian's 'fortunes' package "
                 "(scripts/install-deps.sh does)" % src)
    count, size = 0, 0
    with open(out_path, "w", encoding="utf-8") as out:
        for name in sorted(os.listdir(src)):
            path = os.path.join(src, name)
            if name in SKIP or "." in name or os.path.islink(path) or not os.path.isfile(path):
                continue
            for text in fortunes(path):
                if one_line:
                    text = " ".join(text.split())
                out.write(json.dumps({"text": text, "category": name}, ensure_ascii=False) + "\n")
                count += 1
                size += len(text.encode("utf-8"))
    if count == 0:
        sys.exit("fortunes-corpus: no fortunes under %s" % src)
    print("fortunes-corpus: %d fortunes, %.1f MB of text -> %s" % (count, size / 1e6, out_path))


if __name__ == "__main__":
    main()
