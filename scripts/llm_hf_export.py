#!/usr/bin/env python3
"""Exports a small decoder from Hugging Face `transformers` (LlamaForCausalLM or Qwen2ForCausalLM
built from a config, random weights) to ONNX with `torch.onnx.export`, with its KV cache as
inputs and outputs under the names `edgebench llm` reads (input_ids, attention_mask,
position_ids, past_key_values.N.key|value -> logits, present.N.key|value), as the common
exports name them. The file is a graph written by real tooling, not by edgebench: what the
native engine cannot run in it must be a load-time error naming the op.

usage: llm_hf_export.py llama|qwen2 OUT.onnx [LAYERS] [OPSET]   (needs torch, transformers)
"""
import sys

import torch
import transformers


def config(arch, layers):
    kw = dict(
        hidden_size=64,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=128,
        vocab_size=1024,
        max_position_embeddings=256,
    )
    if arch == "llama":
        return transformers.LlamaForCausalLM(transformers.LlamaConfig(**kw))
    return transformers.Qwen2ForCausalLM(transformers.Qwen2Config(**kw))


class WithCache(torch.nn.Module):
    """The model with its cache flattened into tensors, as ONNX exports carry it."""

    def __init__(self, model, layers):
        super().__init__()
        self.model = model
        self.layers = layers

    def forward(self, input_ids, attention_mask, position_ids, *past):
        cache = transformers.DynamicCache()
        for i in range(self.layers):
            cache.update(past[2 * i], past[2 * i + 1], i)
        out = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            past_key_values=cache,
            use_cache=True,
        )
        present = []
        pkv = out.past_key_values
        for i in range(self.layers):
            if hasattr(pkv, "layers"):
                present += [pkv.layers[i].keys, pkv.layers[i].values]
            else:
                present += [pkv.key_cache[i], pkv.value_cache[i]]
        return (out.logits, *present)


def main():
    arch, out = sys.argv[1], sys.argv[2]
    layers = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    opset = int(sys.argv[4]) if len(sys.argv) > 4 else 17
    torch.manual_seed(0)
    model = config(arch, layers).float().eval()
    wrap = WithCache(model, layers)
    seq, past = 3, 5
    cfg = model.config
    head_dim = cfg.hidden_size // cfg.num_attention_heads
    ids = torch.randint(0, cfg.vocab_size, (1, seq))
    mask = torch.ones(1, past + seq, dtype=torch.int64)
    pos = torch.arange(past, past + seq).unsqueeze(0)
    kv = [torch.randn(1, cfg.num_key_value_heads, past, head_dim) for _ in range(2 * layers)]
    names_in = ["input_ids", "attention_mask", "position_ids"]
    names_out = ["logits"]
    axes = {
        "input_ids": {0: "batch_size", 1: "sequence_length"},
        "attention_mask": {0: "batch_size", 1: "total_sequence_length"},
        "position_ids": {0: "batch_size", 1: "sequence_length"},
        "logits": {0: "batch_size", 1: "sequence_length"},
    }
    for i in range(layers):
        for kind in ("key", "value"):
            p, q = f"past_key_values.{i}.{kind}", f"present.{i}.{kind}"
            names_in.append(p)
            names_out.append(q)
            axes[p] = {0: "batch_size", 2: "past_sequence_length"}
            axes[q] = {0: "batch_size", 2: "total_sequence_length"}
    with torch.no_grad():
        torch.onnx.export(
            wrap,
            (ids, mask, pos, *kv),
            out,
            input_names=names_in,
            output_names=names_out,
            dynamic_axes=axes,
            opset_version=opset,
            dynamo=False,
        )
    print(f"wrote {out}: {arch}, {layers} layers, opset {opset}, transformers "
          f"{transformers.__version__}, torch {torch.__version__}")


if __name__ == "__main__":
    main()
