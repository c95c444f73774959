"""bmb-prompt (our prompt input assembly) against an independent reference.

usage: compare_hf.py <bmb-prompt> <work dir>

Trains three small tokenizers here with Hugging Face `tokenizers` (nothing
is downloaded): BERT-style WordPiece ([CLS] $A [SEP], [MASK], [UNK]),
RoBERTa-style byte-level BPE (<s> $A </s>, <mask> with lstrip) and GPT-2
style byte-level BPE (no framing, no mask token: a causal LM, whose mask adds
no token and is scored at the token before it). For several
templates (one field, two fields with a soft token, two masks, a meta field
that is not shortenable) and examples (short; too long, under each
truncation policy), the expected ids, mask positions, soft slots and label
word ids are computed below with the HF tokenizer, following the rules of
docs/tuning.md written out again in Python, and compared with bmb-prompt's.
For WordPiece, where word boundaries do not depend on spaces, the untruncated
ids must also equal HF encoding the whole filled-in template in one call.
A label word that needs [UNK] must be refused, naming the word and label.
"""

import json
import os
import random
import subprocess
import sys

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers
from tokenizers import processors, trainers

WORDS = """the a film movie was is it great good bad terrible awful fine plot actors
acting story boring fun funny long short and but not very really quite question answer
yes no maybe right wrong so because review title news sports world business science
""".split()


def corpus(rng, n=3000):
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) +
            rng.choice([".", "!", "?", ""]) for _ in range(n)]


def train_bert(texts, work):
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix="##")
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok.train_from_iterator(texts, trainers.WordPieceTrainer(
        vocab_size=300, min_frequency=2, special_tokens=specials, show_progress=False))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    os.makedirs(work + "/bert", exist_ok=True)
    tok.save(work + "/bert/tokenizer.json")
    return tok, "[MASK]", [cls], [sep]


def train_roberta(texts, work):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=400, min_frequency=2, special_tokens=["<s>", "<pad>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, normalized=False, special=True)])
    bos, eos = tok.token_to_id("<s>"), tok.token_to_id("</s>")
    tok.post_processor = processors.RobertaProcessing(("</s>", eos), ("<s>", bos))
    os.makedirs(work + "/roberta", exist_ok=True)
    tok.save(work + "/roberta/tokenizer.json")
    return tok, "<mask>", [bos], [eos]


def train_gpt2(texts, work):
    """GPT-2 style: no special tokens around the text and no mask token, so
    the mask adds no token and is scored at the token before it."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=400, min_frequency=2, special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    os.makedirs(work + "/gpt2", exist_ok=True)
    tok.save(work + "/gpt2/tokenizer.json")
    return tok, None, [], []


def field(name, space=False, shortenable=True, kind="field"):
    return {"kind": kind, "name": name, "space": space, "shortenable": shortenable}


TEMPLATES = {
    # "{text_a} It was {mask}."
    "sentiment": [field("text_a"), {"kind": "text", "text": " It was"},
                  {"kind": "mask", "space": True}, {"kind": "text", "text": "."}],
    # "{text_a} {soft: "so"} Question: {text_b}? {mask}."
    "nli": [field("text_a"), {"kind": "soft", "init": "so", "space": True},
            {"kind": "text", "text": " Question:"}, field("text_b", space=True),
            {"kind": "text", "text": "?"}, {"kind": "mask", "space": True},
            {"kind": "text", "text": "."}],
    # "{text_a} {mask} and {mask}!"
    "two_masks": [field("text_a"), {"kind": "mask", "space": True}, {"kind": "text", "text": " and"},
                  {"kind": "mask", "space": True}, {"kind": "text", "text": "!"}],
    # "{meta: title}: {text_a} {soft}{mask}"
    "meta": [field("title", kind="meta", shortenable=False), {"kind": "text", "text": ":"},
             field("text_a", space=True), {"kind": "soft", "space": True}, {"kind": "mask"}],
}
LABELS = ["negative", "positive"]
WORDS_PER_MASK = [[["bad", "terrible"], ["good", "great", "funfunny"]],
                  [["no"], ["yes", "right"]]]


def verbalizers(segments):
    """One verbalizer per mask, as bmb-lower-prompts writes them."""
    n = sum(s["kind"] == "mask" for s in segments)
    return {"labels": LABELS, "verbalizers": [{"words": WORDS_PER_MASK[i]} for i in range(n)]}


def reference(tok, mask_token, prefix, suffix, segments, policy, max_len, example):
    """The rules of docs/tuning.md, independently of bmb-prompt."""
    plain = lambda s: tok.encode(s, add_special_tokens=False).ids  # noqa: E731
    parts, cut = [], []
    for s in segments:
        if s["kind"] == "text":
            ids = plain(s["text"])
        elif s["kind"] in ("field", "meta"):
            v = example[s["name"]]
            ids = plain((" " if s.get("space") else "") + v) if v else []
        elif s["kind"] == "mask":
            ids = [tok.token_to_id(mask_token)] if mask_token else []
        else:
            ids = [0]
        parts.append(ids)
        cut.append(s["kind"] in ("field", "meta") and s.get("shortenable", False))
    excess = len(prefix) + len(suffix) + sum(map(len, parts)) - max_len
    truncated = max(excess, 0)
    if policy == "balanced":
        while excess > 0:
            longest = max((i for i in range(len(parts)) if cut[i]), key=lambda i: (len(parts[i]), i))
            parts[longest] = parts[longest][:-1]
            excess -= 1
    else:
        order = range(len(parts) - 1, -1, -1) if policy == "tail" else range(len(parts))
        for i in order:
            if excess <= 0 or not cut[i]:
                continue
            n = min(excess, len(parts[i]))
            parts[i] = parts[i][:len(parts[i]) - n] if policy == "tail" else parts[i][n:]
            excess -= n
    ids, masks, soft = list(prefix), [], []
    for s, p in zip(segments, parts):
        if s["kind"] == "mask":
            masks.append(len(ids) if mask_token else len(ids) - 1)
        if s["kind"] == "soft":
            soft.append([len(ids), len(soft)])
        ids += p
    return {"ids": ids + suffix, "mask": masks, "soft": soft, "truncated": truncated}


def filled_text(segments, example, mask_token):
    """The template filled in as one string (what a user would type)."""
    out = ""
    for s in segments:
        lead = " " if s.get("space") else ""
        if s["kind"] == "text":
            out += s["text"]
        elif s["kind"] in ("field", "meta"):
            out += lead + example[s["name"]]
        elif s["kind"] == "mask":
            out += lead + mask_token
    return out


def run(tool, tokdir, plan, examples, work, name):
    plan_path, ex_path = f"{work}/{name}.plan.json", f"{work}/{name}.jsonl"
    with open(plan_path, "w") as f:
        json.dump(plan, f)
    with open(ex_path, "w") as f:
        for e in examples:
            f.write(json.dumps(e) + "\n")
    r = subprocess.run([tool, "--tokenizer", tokdir, plan_path, ex_path],
                       capture_output=True, text=True)
    return r, plan_path, ex_path


def main():
    tool, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = random.Random(1234)
    texts = corpus(rng)
    failures, checked = [], 0

    def check(what, ours, theirs):
        nonlocal checked
        checked += 1
        if ours != theirs:
            failures.append(f"{what}:\n  ours   {ours}\n  theirs {theirs}")

    for family, train in (("bert", train_bert), ("roberta", train_roberta), ("gpt2", train_gpt2)):
        tok, mask_token, prefix, suffix = train(texts, work)
        tokdir = f"{work}/{family}"
        short = {"text_a": "the film was great", "text_b": "was it fun", "title": "review"}
        long = {"text_a": " ".join(rng.choice(WORDS) for _ in range(40)),
                "text_b": " ".join(rng.choice(WORDS) for _ in range(25)),
                "title": "sports news"}
        empty = {"text_a": "", "text_b": "", "title": ""}
        examples = [short, long, {**short, "text_a": "a really very long boring plot " * 3}]
        for tname, segments in TEMPLATES.items():
            for policy in ("tail", "head", "balanced"):
                max_len = 24
                plan = {"segments": segments, "truncate": policy, "max_len": max_len,
                        **verbalizers(segments)}
                name = f"{family}-{tname}-{policy}"
                r, _, _ = run(tool, tokdir, plan, examples, work, name)
                if mask_token is None and tname == "two_masks":
                    # Empty text_a leaves nothing before the first mask for a
                    # causal LM to predict it from: refused.
                    expect = ("error: the content-free input: nothing precedes the {mask}, so a "
                              "causal LM (the gpt2-bpe tokenizer has no mask token) has no "
                              "logits to predict it from")
                    check(f"{name} refused", (r.returncode, r.stderr.strip()), (1, expect))
                    continue
                if r.returncode != 0:
                    failures.append(f"{name}: bmb-prompt failed: {r.stderr.strip()}")
                    continue
                got = json.loads(r.stdout)
                for i, e in enumerate(examples):
                    want = reference(tok, mask_token, prefix, suffix, segments, policy, max_len, e)
                    check(f"{name} example {i}", got["examples"][i], want)
                check(f"{name} content-free", got["content_free"],
                      reference(tok, mask_token, prefix, suffix, segments, policy, max_len, empty))
                spaces = [s.get("space", False) for s in segments if s["kind"] == "mask"]
                want_words = [[[tok.encode((" " if sp else "") + w, add_special_tokens=False).ids
                                for w in ws] for ws in WORDS_PER_MASK[m]]
                              for m, sp in enumerate(spaces)]
                check(f"{name} label words", got["label_words"], want_words)
                want_soft = [tok.encode((" " if s.get("space") else "") + s["init"],
                                        add_special_tokens=False).ids if s.get("init") else []
                             for s in segments if s["kind"] == "soft"]
                check(f"{name} soft init", got["soft_init"], want_soft)
                if family == "bert" and "soft" not in [s["kind"] for s in segments]:
                    # WordPiece ignores where spaces fall: one HF call on the
                    # whole text must give the same ids as our parts.
                    whole = tok.encode(filled_text(segments, short, mask_token)).ids
                    check(f"{name} whole-text encoding", got["examples"][0]["ids"], whole)
        # Byte-level BPE: the word after the mask's space is a different token.
        if family != "bert":
            check(f"{family}: ' good' differs from 'good'",
                  tok.encode(" good", add_special_tokens=False).ids !=
                  tok.encode("good", add_special_tokens=False).ids, True)
        # A multi-token label word is kept as its tokens ("funfunny").
        multi = [len(ids) for ids in want_words[0][1]]
        if max(multi) < 2:
            failures.append(f"{family}: 'funfunny' was expected to need several tokens: {multi}")
        # A word the tokenizer cannot spell is refused by name.
        plan = {"segments": TEMPLATES["sentiment"], "truncate": "tail", "max_len": 24,
                "labels": ["negative", "positive"], "words": [["bad"], ["\u2603"]]}
        r, _, _ = run(tool, tokdir, plan, [short], work, f"{family}-unk")
        if family == "bert":
            expect = "label word '\u2603' of label 'positive' is not known to the wordpiece tokenizer"
            if r.returncode != 1 or expect not in r.stderr:
                failures.append(f"{family}: [UNK] label word: rc {r.returncode}, {r.stderr!r}")
            checked += 1
        # An example missing a field names its file and line.
        r, _, ex_path = run(tool, tokdir, {"segments": TEMPLATES["nli"], "max_len": 24},
                            [short, {"text_a": "x"}], work, f"{family}-missing")
        expect = f"{ex_path}:2: no field 'text_b' (the prompt template reads {{text_b}})"
        if r.returncode != 1 or expect not in r.stderr:
            failures.append(f"{family}: missing field: rc {r.returncode}, {r.stderr!r}")
        checked += 1

    for f in failures:
        print("FAIL", f)
    print(f"{checked} checks, {len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
