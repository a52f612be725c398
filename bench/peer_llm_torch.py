#!/usr/bin/env python3
"""The PyTorch peer of `edgebench llm` on a GPU: a transformers decoder of the same configuration
(from_config, random weights: timing does not depend on them) run as a Python user would, prefill
of --prompt tokens then greedy decode of --gen tokens with a static KV cache, in two modes:

  eager     the model called step by step (model.forward, StaticCache)
  compiled  the same with torch.compile(mode="reduce-overhead") on the forward (CUDA graphs),
            the static cache at its full length so every decode step has one shape

Per mode: prefill ms (CUDA events, p50 over --reps), decode ms per token (p50 over every step of
every repetition after one warm-up repetition), decode tokens/s. One JSON line per mode on stdout:
  {"peer": "torch eager fp16", "prefill_ms": .., "decode_ms_p50": .., "decode_tok_s": .., ...}

usage: peer_llm_torch.py --arch qwen2|llama --size 0.5b|1b|tiny [--dtype fp16|fp32]
       [--prompt 512] [--gen 128] [--reps 5] [--modes eager,compiled]
"""
import argparse
import json
import statistics
import sys

import torch
import transformers

CONFIGS = {  # the Hugging Face config.json numbers edgebench's synthesizer uses (model/llm.h)
    ("qwen2", "0.5b"): dict(hidden_size=896, num_hidden_layers=24, num_attention_heads=14,
                            num_key_value_heads=2, intermediate_size=4864, vocab_size=151936,
                            rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True),
    ("llama", "1b"): dict(hidden_size=2048, num_hidden_layers=16, num_attention_heads=32,
                          num_key_value_heads=8, intermediate_size=8192, vocab_size=128256,
                          rope_theta=500000.0, rms_norm_eps=1e-5, tie_word_embeddings=True),
    ("llama", "tiny"): dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                            num_key_value_heads=2, intermediate_size=128, vocab_size=1024,
                            tie_word_embeddings=True),
    ("qwen2", "tiny"): dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                            num_key_value_heads=2, intermediate_size=128, vocab_size=1024,
                            tie_word_embeddings=True),
}


def build(arch, size, dtype, ctx):
    kw = dict(CONFIGS[(arch, size)], max_position_embeddings=ctx)
    cfg = (transformers.Qwen2Config if arch == "qwen2" else transformers.LlamaConfig)(**kw)
    model = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=dtype)
    return model.to("cuda").eval()


def static_cache(config, ctx, dtype):
    """A StaticCache of `ctx` positions (the constructor changed across transformers versions:
    recent ones size it lazily from the first update)."""
    try:
        return transformers.StaticCache(config=config, max_cache_len=ctx)
    except TypeError:
        return transformers.StaticCache(config=config, max_batch_size=1, max_cache_len=ctx,
                                        device="cuda", dtype=dtype)


def run(model, mode, prompt, gen, reps, dtype):
    ctx = prompt + gen
    fwd = model.forward
    if mode == "compiled":
        fwd = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)
    ids = torch.randint(0, model.config.vocab_size, (1, prompt), device="cuda")
    prefill, steps = [], []
    for rep in range(reps + 1):  # the first repetition warms up (and compiles)
        cache = static_cache(model.config, ctx, dtype)
        pos = torch.arange(prompt, device="cuda")
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.no_grad():
            a.record()
            out = model(input_ids=ids, cache_position=pos, past_key_values=cache, use_cache=True)
            tok = out.logits[:, -1:].argmax(-1)
            b.record()
            torch.cuda.synchronize()
            if rep > 0:
                prefill.append(a.elapsed_time(b))
            for j in range(gen):
                p = torch.tensor([prompt + j], device="cuda")
                a.record()
                out = fwd(input_ids=tok, cache_position=p, past_key_values=cache, use_cache=True)
                tok = out.logits[:, -1:].argmax(-1)
                b.record()
                torch.cuda.synchronize()
                if rep > 0:
                    steps.append(a.elapsed_time(b))
    med = statistics.median(steps)
    return {
        "prefill_ms": statistics.median(prefill),
        "decode_ms_p50": med,
        "decode_tok_s": 1000.0 / statistics.mean(steps),
        "steps": len(steps),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="qwen2")
    ap.add_argument("--size", default="0.5b")
    ap.add_argument("--dtype", default="fp16", choices=["fp16", "fp32"])
    ap.add_argument("--prompt", type=int, default=512)
    ap.add_argument("--gen", type=int, default=128)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--modes", default="eager,compiled")
    a = ap.parse_args()
    dtype = torch.float16 if a.dtype == "fp16" else torch.float32
    model = build(a.arch, a.size, dtype, a.prompt + a.gen)
    for mode in a.modes.split(","):
        r = run(model, mode, a.prompt, a.gen, a.reps, dtype)
        r.update(peer=f"torch {mode} {a.dtype}", arch=a.arch, size=a.size, prompt=a.prompt,
                 gen=a.gen, torch=torch.__version__, transformers=transformers.__version__,
                 device=torch.cuda.get_device_name())
        print(json.dumps(r))
        print(f"{r['peer']}: prefill {r['prefill_ms']:.2f} ms, decode {r['decode_ms_p50']:.3f} "
              f"ms/token p50 ({r['decode_tok_s']:.0f} tok/s)", file=sys.stderr)


if __name__ == "__main__":
    main()
