"""Small tokenizers trained here with Hugging Face `tokenizers`, saved next to a
test checkpoint so that our executables' --tokenizer path is checked against
tokenizers nobody here wrote.

GPT-2 style: byte-level BPE with the model's vocab size (256 byte symbols,
<|endoftext|>, and merges up to the vocab). BERT style: a lower-casing
WordPiece vocab.txt (sorted) with [PAD] [UNK] [CLS] [SEP] [MASK]. Both are saved
through transformers' fast tokenizer classes, so the directory holds the same
files a hub checkpoint does (tokenizer.json plus vocab.json + merges.txt, or
vocab.txt).

The corpus is Debian's license texts: present on every Debian system, never
downloaded, and unchanged between runs (their hash is part of the cache key).
"""

import hashlib
import os

CORPUS_FILES = ["/usr/share/common-licenses/GPL-3",
                "/usr/share/common-licenses/Apache-2.0",
                "/usr/share/common-licenses/GFDL-1.3"]


def corpus_lines():
    lines = []
    for path in CORPUS_FILES:
        with open(path, encoding="utf-8") as f:
            lines.extend(line.strip() for line in f if line.strip())
    return lines


def corpus_hash():
    h = hashlib.sha256()
    for path in CORPUS_FILES:
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def train_gpt2_bpe(vocab, out_dir):
    """Byte-level BPE with exactly `vocab` entries, saved into out_dir."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2TokenizerFast
    tok = ByteLevelBPETokenizer()
    tok.train_from_iterator(corpus_lines(), vocab_size=vocab, min_frequency=2,
                            special_tokens=["<|endoftext|>"], show_progress=False)
    if tok.get_vocab_size() != vocab:
        raise RuntimeError("byte-level BPE came out with %d entries, not %d (corpus too small?)"
                           % (tok.get_vocab_size(), vocab))
    fast = GPT2TokenizerFast(tokenizer_object=tok._tokenizer, bos_token="<|endoftext|>",
                             eos_token="<|endoftext|>", unk_token="<|endoftext|>")
    fast.save_pretrained(out_dir)


def train_bert_wordpiece(vocab, out_dir):
    """Lower-casing WordPiece of at most `vocab` entries, saved into out_dir.
    Merges stop at a minimum pair count rather than at the size, and the
    vocab is written sorted: the trainer breaks ties in hash order, so
    either would change the ids from run to run."""
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertTokenizerFast
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = BertWordPieceTokenizer(lowercase=True)
    tok.train_from_iterator(corpus_lines(), vocab_size=100000, min_frequency=16,
                            special_tokens=specials, show_progress=False)
    words = sorted(set(tok.get_vocab()) - set(specials))
    if len(specials) + len(words) > vocab:
        raise RuntimeError("WordPiece came out with %d entries, more than %d"
                           % (len(specials) + len(words), vocab))
    path = os.path.join(out_dir, "vocab.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(w + "\n" for w in specials + words))
    # The fast tokenizer built from vocab.txt adds [CLS] ... [SEP] framing
    # and writes tokenizer.json next to it.
    BertTokenizerFast(vocab_file=path, do_lower_case=True).save_pretrained(out_dir)


def train(family, vocab, out_dir):
    if family == "gpt2":
        train_gpt2_bpe(vocab, out_dir)
    elif family == "bert":
        train_bert_wordpiece(vocab, out_dir)
    else:
        raise ValueError("no tokenizer for family %r" % family)


def load(out_dir):
    from transformers import AutoTokenizer
    return AutoTokenizer.from_pretrained(out_dir, local_files_only=True)
