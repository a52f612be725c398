#!/usr/bin/env python3
"""Checks a decoder written by `edgebench model synth --arch llama|qwen2` against Hugging Face
`transformers`: the file's weights are loaded into LlamaForCausalLM / Qwen2ForCausalLM built from
the file's edgebench.llm.* metadata, and the logits of a prompt of N tokens from the ONNX graph
(onnx.reference, no ONNX Runtime needed) must match the PyTorch model's. This tests what the C
tests cannot: that the graph is the family's real architecture (rotary form and scaling, GQA
head order, biases, norms, tied lm_head).

usage: llm_hf_check.py MODEL.onnx [N] [TOL]   (needs numpy, onnx, torch, transformers)
Exits 1 when the largest logit error, relative to the largest |logit|, is above TOL (1e-4).
"""
import sys

import numpy as np
import onnx
import torch
import transformers
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator


def hf_model(meta):
    kw = dict(
        hidden_size=int(meta["hidden_size"]),
        num_hidden_layers=int(meta["num_hidden_layers"]),
        num_attention_heads=int(meta["num_attention_heads"]),
        num_key_value_heads=int(meta["num_key_value_heads"]),
        intermediate_size=int(meta["intermediate_size"]),
        vocab_size=int(meta["vocab_size"]),
        rms_norm_eps=float(meta["rms_norm_eps"]),
        rope_theta=float(meta["rope_theta"]),
        max_position_embeddings=int(meta["ctx"]),
        tie_word_embeddings=meta["tie_word_embeddings"] == "1",
    )
    if meta["arch"] == "llama":
        scaling = dict(p.split("=") for p in meta["rope_scaling"].split()[1:])
        cfg = transformers.LlamaConfig(
            head_dim=int(meta["head_dim"]),
            attention_bias=False,
            mlp_bias=False,
            rope_scaling={"rope_type": "llama3", **{k: float(v) for k, v in scaling.items()}},
            **kw,
        )
        return transformers.LlamaForCausalLM(cfg)
    return transformers.Qwen2ForCausalLM(transformers.Qwen2Config(**kw))


def main():
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-4
    m = onnx.load(path)
    meta = {
        p.key[len("edgebench.llm.") :]: p.value
        for p in m.metadata_props
        if p.key.startswith("edgebench.llm.")
    }
    model = hf_model(meta).float().eval()
    weights = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    state = {}
    for name, v in weights.items():
        if not name.startswith("model."):
            continue
        v = v.astype(np.float32)
        if v.ndim == 2 and name != "model.embed_tokens.weight":
            v = v.T  # MatMul weights are [in, out]; nn.Linear holds [out, in]
        state[name] = torch.from_numpy(np.ascontiguousarray(v))
    state["lm_head.weight"] = state["model.embed_tokens.weight"]
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if "rotary_emb" not in k]
    if missing or unexpected:
        sys.exit(f"{path}: weights do not fit: missing {missing}, unexpected {unexpected}")

    rng = np.random.default_rng(0)
    ids = rng.integers(0, int(meta["vocab_size"]), size=(1, n), dtype=np.int64)
    pos = np.arange(n, dtype=np.int64)[None, :]
    with torch.no_grad():
        ref = model(torch.from_numpy(ids), position_ids=torch.from_numpy(pos)).logits.numpy()

    feeds = {"input_ids": ids, "position_ids": pos}
    dt = np.float16 if meta["dtype"] == "fp16" else np.float32
    kv = (1, int(meta["num_key_value_heads"]), 0, int(meta["head_dim"]))
    for layer in range(int(meta["num_hidden_layers"])):
        for kind in ("key", "value"):
            feeds[f"past_key_values.{layer}.{kind}"] = np.zeros(kv, dtype=dt)
    got = ReferenceEvaluator(m).run(["logits"], feeds)[0].astype(np.float32)
    err = float(np.abs(got - ref).max() / np.abs(ref).max())
    print(f"{path}: {meta['arch']} {meta['size']} {meta['dtype']}, {n} tokens: max logit error "
          f"{err:.3g} of max |logit| {np.abs(ref).max():.3g} (tolerance {tol:g})")
    sys.exit(0 if err <= tol else 1)


if __name__ == "__main__":
    main()
