"""bmb-prompt (our prompt input assembly) against an independent reference.

usage: compare_hf.py <bmb-prompt> <work dir>

Trains five small tokenizers here with Hugging Face `tokenizers` (nothing
is downloaded): BERT-style WordPiece ([CLS] $A [SEP], [MASK], [UNK]),
RoBERTa-style byte-level BPE (<s> $A </s>, <mask> with lstrip), GPT-2
style byte-level BPE (no framing, no mask token: a causal LM, whose mask adds
no token and is scored at the token before it), and Llama-style
SentencePiece BPE (<s> $A, "▁" for spaces, <0xNN> byte fallback, no mask
token) in its two tokenizer.json forms: the legacy Prepend("▁") +
Replace normalizer, and a Metaspace pre-tokenizer. Segments are encoded one
by one (OpenPrompt), except that a SentencePiece tokenizer's "▁" prefix
stands for a segment's leading space (encode_segment). For several
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


SPM_SPACE = "\u2581"  # SentencePiece's "▁"


def train_llama(texts, work, legacy):
    """Llama style (SentencePiece converted to BPE, as Llama 1/2's
    tokenizer.json): <unk> <s> </s>, the 256 <0xNN> byte tokens, then the
    pieces; byte_fallback and fuse_unk; "▁" for spaces, prepended to every
    encoded text. legacy: by a Prepend("▁") + Replace(" ", "▁") normalizer
    (the files of transformers' legacy conversion); else by a Metaspace
    pre-tokenizer (prepend_scheme first, no split), which prepends only when
    the text does not already start with "▁". <s> first, no mask token: a
    causal LM."""
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    if legacy:
        tok.normalizer = normalizers.Sequence([normalizers.Prepend(SPM_SPACE),
                                               normalizers.Replace(" ", SPM_SPACE)])
    else:
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SPM_SPACE,
                                                     prepend_scheme="first", split=False)
    specials = ["<unk>", "<s>", "</s>"]
    tok.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=400, min_frequency=2, special_tokens=specials, show_progress=False))
    spec = json.loads(tok.to_str())
    pieces = [t for t, _ in sorted(spec["model"]["vocab"].items(), key=lambda kv: kv[1])
              if t not in specials]
    order = specials + ["<0x%02X>" % b for b in range(256)] + pieces
    spec["model"]["vocab"] = {t: i for i, t in enumerate(order)}
    spec["model"]["byte_fallback"] = True
    spec["model"]["fuse_unk"] = True
    for added in spec["added_tokens"]:
        added["id"] = spec["model"]["vocab"][added["content"]]
    tok = Tokenizer.from_str(json.dumps(spec))
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    tok.decoder = decoders.Sequence([decoders.Replace(SPM_SPACE, " "), decoders.ByteFallback(),
                                     decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    name = "llama" if legacy else "llama-metaspace"
    os.makedirs(f"{work}/{name}", exist_ok=True)
    tok.save(f"{work}/{name}/tokenizer.json")
    assert tok.encode("a").ids[0] == 1 and tok.token_to_id("<0xE2>") == 3 + 0xE2
    return tok, None, [1], []


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


def starts_as_word(tok):
    """SentencePiece style: every encoded text starts with "▁"."""
    return tok.encode("a", add_special_tokens=False).tokens[0].startswith(SPM_SPACE)


def encode_segment(tok, text):
    """One segment's ids: for SentencePiece, the "▁" the tokenizer prepends
    stands for the segment's leading space (docs/tuning.md)."""
    if starts_as_word(tok) and text.startswith(" "):
        text = text[1:]
    return tok.encode(text, add_special_tokens=False).ids


def reference(tok, mask_token, prefix, suffix, segments, policy, max_len, example):
    """The rules of docs/tuning.md, independently of bmb-prompt."""
    plain = lambda s: encode_segment(tok, s)  # noqa: E731
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


def legacy_spm(family):
    return family == "llama"


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

    families = (("bert", train_bert), ("roberta", train_roberta), ("gpt2", train_gpt2),
                ("llama", lambda t, w: train_llama(t, w, legacy=True)),
                ("llama-metaspace", lambda t, w: train_llama(t, w, legacy=False)))
    for family, train in families:
        tok, mask_token, prefix, suffix = train(texts, work)
        tokdir = f"{work}/{family}"
        spm = family.startswith("llama")
        short = {"text_a": "the film was great", "text_b": "was it fun", "title": "review"}
        long = {"text_a": " ".join(rng.choice(WORDS) for _ in range(40)),
                "text_b": " ".join(rng.choice(WORDS) for _ in range(25)),
                "title": "sports news"}
        empty = {"text_a": "", "text_b": "", "title": ""}
        label_words = {}
        examples = [short, long, {**short, "text_a": "a really very long boring plot " * 3}]
        if spm:
            # Characters the pieces lack: <0xNN> byte tokens (byte fallback);
            # runs of spaces: one "▁" each.
            examples.append({"text_a": "caf\u00e9  \u2603 was  great", "text_b": "  fun ",
                             "title": "\u00fcber"})
        for tname, segments in TEMPLATES.items():
            for policy in ("tail", "head", "balanced"):
                max_len = 24
                plan = {"segments": segments, "truncate": policy, "max_len": max_len,
                        **verbalizers(segments)}
                name = f"{family}-{tname}-{policy}"
                r, _, _ = run(tool, tokdir, plan, examples, work, name)
                if mask_token is None and not prefix and tname == "two_masks":
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
                label_words[tname] = got["label_words"]
                if spm and tname == "sentiment":
                    # The café/snowman example needs <0xNN> byte tokens (3..258).
                    check(f"{name}: byte-fallback ids in the assembly",
                          any(3 <= i < 259 for i in got["examples"][3]["ids"]), True)
                for i, e in enumerate(examples):
                    want = reference(tok, mask_token, prefix, suffix, segments, policy, max_len, e)
                    check(f"{name} example {i}", got["examples"][i], want)
                check(f"{name} content-free", got["content_free"],
                      reference(tok, mask_token, prefix, suffix, segments, policy, max_len, empty))
                spaces = [s.get("space", False) for s in segments if s["kind"] == "mask"]
                want_words = [[[encode_segment(tok, (" " if sp else "") + w) for w in ws]
                               for ws in WORDS_PER_MASK[m]]
                              for m, sp in enumerate(spaces)]
                check(f"{name} label words", got["label_words"], want_words)
                want_soft = [encode_segment(tok, (" " if s.get("space") else "") + s["init"])
                             if s.get("init") else []
                             for s in segments if s["kind"] == "soft"]
                check(f"{name} soft init", got["soft_init"], want_soft)
                if family == "bert" and "soft" not in [s["kind"] for s in segments]:
                    # WordPiece ignores where spaces fall: one HF call on the
                    # whole text must give the same ids as our parts.
                    whole = tok.encode(filled_text(segments, short, mask_token)).ids
                    check(f"{name} whole-text encoding", got["examples"][0]["ids"], whole)
        # Byte-level BPE: the word after the mask's space is a different token.
        if family in ("roberta", "gpt2"):
            check(f"{family}: ' good' differs from 'good'",
                  tok.encode(" good", add_special_tokens=False).ids !=
                  tok.encode("good", add_special_tokens=False).ids, True)
        if spm:
            # Byte fallback, and how each style treats a text's leading space:
            # the legacy normalizer always prepends "▁" (" good" -> "▁▁good"),
            # Metaspace only when the text does not start with one.
            snow = tok.encode("\u2603", add_special_tokens=False).tokens
            check(f"{family}: byte fallback", snow[-3:], ["<0xE2>", "<0x98>", "<0x83>"])
            good = "".join(tok.encode(" good", add_special_tokens=False).tokens)
            check(f"{family}: ' good'", good,
                  SPM_SPACE * (2 if legacy_spm(family) else 1) + "good")
        # The first token of a label word tells the labels apart (reduce =
        # first scores it): "bad" and "good" after the mask's space.
        words = label_words["sentiment"][0]
        check(f"{family}: the first tokens of 'bad' and 'good' differ",
              words[0][0][0] != words[1][0][0], True)
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
