# Writes the tensor names and shapes of tiny Hugging Face models, as
# save_pretrained(safe_serialization=True) stores them, for
# check_hf_names.py. Needs torch, transformers and safetensors, so it is not
# run by the tests: its output is checked in next to it. Regenerate with
#   .venv-ref/bin/python test/lit/models/Inputs/hf_keys.py test/lit/models/Inputs
# Each model has the configuration of a tiny model in hf-names.test.
import os
import sys
import tempfile

import transformers
from safetensors import safe_open
from transformers import (BertConfig, BertForMaskedLM, BertModel, GPT2Config, GPT2LMHeadModel,
                          LlamaConfig, LlamaForCausalLM)

BERT_TINY = dict(vocab_size=1024, hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=512, max_position_embeddings=128)

MODELS = {
    "gpt2-nano": lambda: GPT2LMHeadModel(GPT2Config(
        n_layer=2, n_embd=64, n_head=4, vocab_size=512, n_positions=64)),
    "llama-nano": lambda: LlamaForCausalLM(LlamaConfig(
        vocab_size=512, hidden_size=64, intermediate_size=176, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)),
    "bert-tiny": lambda: BertModel(BertConfig(**BERT_TINY)),
    "bert-tiny-nopool": lambda: BertModel(BertConfig(**BERT_TINY), add_pooling_layer=False),
    "bertmlm-tiny": lambda: BertForMaskedLM(BertConfig(**BERT_TINY)),
}


def write(name, model, out_dir):
    """`file NAME d0 d1 ...` for every tensor in the file, `omitted ...` for
    the state_dict entries that save_pretrained leaves out (tied ones)."""
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        with safe_open(os.path.join(tmp, "model.safetensors"), "pt") as f:
            saved = {k: list(f.get_tensor(k).shape) for k in f.keys()}
    lines = [f"# {type(model).__name__} ({name}), transformers {transformers.__version__}"]
    for k in sorted(saved):
        lines.append(" ".join(["file", k] + [str(d) for d in saved[k]]))
    for k, v in sorted(model.state_dict().items()):
        if k not in saved:
            lines.append(" ".join(["omitted", k] + [str(d) for d in v.shape]))
    with open(os.path.join(out_dir, f"hf-{name}.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    for name, make in MODELS.items():
        write(name, make(), sys.argv[1])
