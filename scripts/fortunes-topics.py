#!/usr/bin/env python3
"""Labelled examples for the tuning demo: which fortune file a fortune is from.

usage: fortunes-topics.py CORPUS.jsonl OUT_DIR [--categories a,b,...]
                          [--val-fraction F] [--max-chars N] [--seed S]

Reads the corpus fortunes-corpus.py writes ({"text", "category"} per line),
keeps the fortunes of the chosen categories (default: computers, love,
science, food, law, sports) that are at most --max-chars long (default 400:
a prompt of 128 tokens holds them), and writes OUT_DIR/train.jsonl and
OUT_DIR/val.jsonl, {"text": ..., "label": <category>} per line: a
stratified split (--val-fraction of every category, default 0.2), shuffled
with a fixed seed, so every run gives the same files. Standard library only.
"""
import argparse
import json
import os
import random
import sys

DEFAULT = "computers,love,science,food,law,sports"


def main():
    ap = argparse.ArgumentParser(usage=__doc__.strip().splitlines()[2].replace("usage: ", ""))
    ap.add_argument("corpus")
    ap.add_argument("out_dir")
    ap.add_argument("--categories", default=DEFAULT)
    ap.add_argument("--val-fraction", type=float, default=0.2)
    ap.add_argument("--max-chars", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    wanted = [c for c in a.categories.split(",") if c]
    if not 0 < a.val_fraction < 1:
        sys.exit("fortunes-topics: --val-fraction must be between 0 and 1")
    by_category = {c: [] for c in wanted}
    with open(a.corpus, encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            text = " ".join(doc["text"].split())  # one line: the template sees plain text
            if doc.get("category") in by_category and 0 < len(text) <= a.max_chars:
                by_category[doc["category"]].append(text)
    empty = [c for c, texts in by_category.items() if len(texts) < 5]
    if empty:
        sys.exit("fortunes-topics: too few fortunes in %s (is the category name right?)"
                 % ", ".join(empty))
    rng = random.Random(a.seed)
    train, val = [], []
    for c in wanted:
        texts = sorted(set(by_category[c]))
        rng.shuffle(texts)
        n_val = max(1, round(len(texts) * a.val_fraction))
        val += [{"text": t, "label": c} for t in texts[:n_val]]
        train += [{"text": t, "label": c} for t in texts[n_val:]]
    rng.shuffle(train)
    rng.shuffle(val)
    os.makedirs(a.out_dir, exist_ok=True)
    for name, rows in (("train.jsonl", train), ("val.jsonl", val)):
        with open(os.path.join(a.out_dir, name), "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    counts = ", ".join("%s %d" % (c, sum(r["label"] == c for r in train + val)) for c in wanted)
    print("fortunes-topics: %d train, %d validation examples (%s) -> %s"
          % (len(train), len(val), counts, a.out_dir))


if __name__ == "__main__":
    main()
