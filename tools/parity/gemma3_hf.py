#!/usr/bin/env python3
"""Gemma 3 (text) references from Hugging Face transformers, independent of
Hark's implementation.

1. A small random-weight Gemma3ForCausalLM (tiny widths, but the real
   layout: 4 query heads sharing KV heads, head size != width / heads,
   QK-norm, four norms per layer, GELU(tanh)-gated FFN, five local
   sliding-window layers then a global one, local/global RoPE bases 1e4/1e6,
   embedding scaled by sqrt(width), tied output). The norm weights are
   random too (transformers stores Gemma's RMSNorm weight as w in
   x*(1+w)), so a converter that forgets llama.cpp's +1 fails. Saved as
   model.safetensors + config.json; gemma3-tiny.json records, for fixed
   prompts longer than the window, the logits at every prompt position
   (sampled ids plus the 32 largest), 32 raw-argmax greedy tokens by full
   recomputation, and the logits of the first 4 generated steps.
2. gemma3.tokref.json: the real Gemma 3 tokenizer (tokenizer.json +
   tokenizer_config.json, offline) on the shared test strings, in the
   format of llm-kit/references/tokenize/*.tokref.json, plus
   apply_chat_template renderings.

usage: gemma3_hf.py OUTDIR TOKENIZER_DIR STRINGS.json
fp32, eager attention, TF32 off.
"""
import hashlib
import json
import os
import sys

import torch
import transformers

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False

WINDOW = 4
LOCAL_BASE, GLOBAL_BASE = 10000.0, 1000000.0
LAYERS = ["sliding_attention"] * 5 + ["full_attention", "sliding_attention"]
PROMPTS = [
    [2, 9, 1077, 253, 655, 30, 1500, 7, 7, 7, 42],
    [2, 1999, 5, 640, 12, 12, 300, 301, 302, 303, 304, 305, 1, 0, 88, 1024, 2047, 3, 4, 17],
]


def config():
    common = dict(vocab_size=2048, hidden_size=64, intermediate_size=160, num_hidden_layers=len(LAYERS),
                  num_attention_heads=4, num_key_value_heads=2, head_dim=32, query_pre_attn_scalar=32,
                  hidden_activation="gelu_pytorch_tanh", max_position_embeddings=256, rms_norm_eps=1e-6,
                  sliding_window=WINDOW, layer_types=LAYERS, tie_word_embeddings=True,
                  final_logit_softcapping=None, attn_logit_softcapping=None)
    try:  # transformers 5: per-layer-type RoPE parameters
        cfg = transformers.Gemma3TextConfig(**common, rope_parameters={
            "sliding_attention": {"rope_type": "default", "rope_theta": LOCAL_BASE},
            "full_attention": {"rope_type": "default", "rope_theta": GLOBAL_BASE}})
    except Exception as e:  # transformers 4
        print("rope_parameters rejected:", e)
        cfg = transformers.Gemma3TextConfig(**common, rope_theta=GLOBAL_BASE, rope_local_base_freq=LOCAL_BASE)
    return cfg


def build(device):
    torch.manual_seed(20260314)
    cfg = config()
    model = transformers.Gemma3ForCausalLM._from_config(cfg, attn_implementation="eager")
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(torch.randn_like(p) * 0.3)
            elif "embed_tokens" in name:
                p.copy_(torch.randn_like(p) / cfg.hidden_size ** 0.5)
            else:
                p.copy_(torch.randn_like(p) / p.shape[1] ** 0.5)
    model.tie_weights()
    # The RoPE bases the model really uses, whatever the config spelling.
    freqs = {n: b.double().tolist() for n, b in model.named_buffers() if n.endswith("inv_freq")}
    hd = cfg.head_dim
    for base in (LOCAL_BASE, GLOBAL_BASE):
        want = (1.0 / base ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd)).tolist()
        assert any(max(abs(a - b) / b for a, b in zip(v, want)) < 1e-6 for v in freqs.values()), (base, list(freqs))
    return cfg, model.to(device).eval().float(), freqs


def sample(row, step=97):
    row = row.double().cpu()
    top = torch.argsort(-row)[:32].tolist()
    idx = sorted(set(range(0, len(row), step)) | set(top))
    return {"ids": idx, "values": [float(row[i]) for i in idx]}


@torch.no_grad()
def model_refs(out_dir, device):
    cfg, model, freqs = build(device)
    model.save_pretrained(out_dir, safe_serialization=True)
    results = []
    for prompt in PROMPTS:
        logits = model(torch.tensor([prompt], device=device)).logits[0]
        rows = [sample(logits[i]) for i in range(len(prompt))]
        toks, steps = list(prompt), []
        for s in range(32):
            last = model(torch.tensor([toks], device=device)).logits[0, -1]
            if s < 4:
                steps.append(sample(last))
            toks.append(int(torch.argmax(last)))
        results.append({"prompt": prompt, "prompt_logits": rows, "greedy": toks[len(prompt):], "step_logits": steps})
    out = {"model": "gemma3-tiny", "architecture": "gemma3",
           "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
           "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
           "precision": "fp32, eager attention, TF32 off",
           "layer_types": list(cfg.layer_types), "sliding_window": cfg.sliding_window,
           "rope_bases": {"sliding_attention": LOCAL_BASE, "full_attention": GLOBAL_BASE},
           "inv_freq_buffers": sorted(freqs), "results": results}
    with open(os.path.join(out_dir, "gemma3-tiny.json"), "w") as f:
        json.dump(out, f)
    print("gemma3-tiny greedy", [r["greedy"][:8] for r in results])


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


CHATS = {
    "plain": [{"role": "user", "content": "Hi! Can you tell me a joke?"},
              {"role": "assistant", "content": "Why did the scarecrow win an award? Because he was outstanding in his field."},
              {"role": "user", "content": "Another one, please."}],
    "with_system": [{"role": "system", "content": "You are a concise assistant."},
                    {"role": "user", "content": "What is the capital of France?"},
                    {"role": "assistant", "content": "Paris."},
                    {"role": "user", "content": "And of Germany?"}],
    "single": [{"role": "user", "content": "Hello"}],
}


def tokenizer_refs(out_dir, tk_dir, strings_path):
    import tokenizers
    tok = transformers.AutoTokenizer.from_pretrained(tk_dir)
    raw = tokenizers.Tokenizer.from_file(os.path.join(tk_dir, "tokenizer.json"))
    strings = json.load(open(strings_path))
    cases, agree, disagree = [], 0, 0
    for i, text in enumerate(strings):
        ids = tok.encode(text, add_special_tokens=False)
        dec = tok.decode(ids, skip_special_tokens=False)
        cases.append({"id": i, "text": text, "ids": ids, "tokens": tok.convert_ids_to_tokens(ids),
                      "ids_with_special": tok.encode(text), "decoded": dec, "roundtrip_ok": dec == text,
                      "decoded_skip_special": tok.decode(ids, skip_special_tokens=True)})
        if raw.encode(text, add_special_tokens=False).ids == ids:
            agree += 1
        else:
            disagree += 1
    chat = []
    for conv, msgs in CHATS.items():
        for gen in (True, False):
            r = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=gen)
            chat.append({"template": "tokenizer_config", "template_file": None, "conversation": conv,
                         "add_generation_prompt": gen, "kwargs": {}, "messages": msgs, "rendered": r,
                         "ids": tok.encode(r, add_special_tokens=False)})
    out = {"generator": {"library": "transformers", "version": transformers.__version__,
                         "tokenizers": tokenizers.__version__},
           "tokenizer": "gemma3",
           "files": {n: sha(os.path.join(tk_dir, n)) for n in ("tokenizer.json", "tokenizer_config.json")},
           "conventions": {"ids": "tokenizer.encode(text, add_special_tokens=False)",
                           "ids_with_special": "tokenizer.encode(text) (adds <bos>)",
                           "decoded": "tokenizer.decode(ids, skip_special_tokens=False)",
                           "chat": "apply_chat_template(messages, tokenize=False, add_generation_prompt=...), ids = encode(rendered, add_special_tokens=False)"},
           "cross_check": {"library": "tokenizers.Tokenizer.from_file (ids)", "agree": agree, "disagree": disagree},
           "cases": cases, "chat": chat}
    with open(os.path.join(out_dir, "gemma3.tokref.json"), "w") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
    print("tokenizer cases", len(cases), "cross-check agree", agree, "disagree", disagree)
    print(chat[0]["rendered"])


def main():
    out_dir, tk_dir, strings = sys.argv[1:4]
    os.makedirs(out_dir, exist_ok=True)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    err = None
    try:
        model_refs(out_dir, device)
    except Exception as e:  # still make the tokenizer references
        import traceback
        traceback.print_exc()
        err = e
    tokenizer_refs(out_dir, tk_dir, strings)
    if err:
        raise err


if __name__ == "__main__":
    main()
