"""Writes a Hugging Face GPT-2 checkpoint and tokenizer for the demo.

The weights are random (transformers' own initialisation; there is no
download here), so generated text is noise, but every file is exactly what
`save_pretrained` and `tokenizers` write for a real model: model.safetensors
with transformers' names (Conv1D layout, fused c_attn, tied head), config.json
and a byte-level BPE tokenizer.json trained on this checkout's docs.

usage: make-demo-checkpoint.py OUTDIR [--vocab 4096 --dim 192 --layers 6 --heads 6 --ctx 256]

The tokenizer is trained to the model's vocabulary size (a small corpus
may give fewer tokens; ids stay below the model's vocab).
"""
import argparse
import glob
import os

import torch
from tokenizers import Tokenizer, models, pre_tokenizers, decoders, trainers
from transformers import GPT2Config, GPT2LMHeadModel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--dim", type=int, default=192)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--heads", type=int, default=6)
    ap.add_argument("--ctx", type=int, default=256)
    ap.add_argument("--vocab", type=int, default=4096)
    o = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.makedirs(o.out, exist_ok=True)

    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=o.vocab, n_positions=o.ctx, n_embd=o.dim, n_layer=o.layers,
                     n_head=o.heads, activation_function="gelu_new")
    GPT2LMHeadModel(cfg).eval().save_pretrained(o.out, safe_serialization=True)

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=o.vocab, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    files = sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    tok.train(files, trainer)
    tok.save(os.path.join(o.out, "tokenizer.json"))
    print("wrote %s (model.safetensors, config.json, tokenizer.json)" % o.out)


if __name__ == "__main__":
    main()
