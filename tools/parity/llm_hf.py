#!/usr/bin/env python3
"""Reference outputs for Hark's synthetic Llama/Qwen2/Qwen3 models, from
Hugging Face transformers (independent of Hark's implementation).

Each model is an f32 GGUF file written by Hark's GGUF writer
(tools/parity/llm-random). This script reads it, loads the weights into
LlamaForCausalLM / Qwen2ForCausalLM / Qwen3ForCausalLM (fp32, eager
attention, TF32 off; llama's Q/K rows are un-permuted from llama.cpp's GGUF
layout back to Hugging Face's), and records for each fixed prompt the logits
at every prompt position (sampled ids plus the 32 largest) and 32 raw-argmax
greedy tokens with the logits of the first 4 generated steps.

usage: llm_hf.py OUTDIR MODEL.gguf...
"""
import json
import os
import struct
import sys

import numpy as np
import torch
import transformers

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False

PROMPTS = [
    [1, 9038, 2501, 253, 655, 30],
    [42, 7, 31000, 12, 12, 12, 49151, 0, 5, 640],
]


def read_gguf(path):
    b = open(path, "rb").read()
    off = 0

    def take(fmt):
        nonlocal off
        v = struct.unpack_from(fmt, b, off)
        off += struct.calcsize(fmt)
        return v[0]

    def string():
        nonlocal off
        n = take("<Q")
        s = b[off:off + n].decode()
        off += n
        return s

    scalar = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}

    def value(t):
        if t == 8:
            return string()
        if t == 9:
            et, n = take("<I"), take("<Q")
            return [value(et) for _ in range(n)]
        return take(scalar[t])

    assert b[:4] == b"GGUF"
    off = 4
    version, n_tensors, n_kv = take("<I"), take("<Q"), take("<Q")
    assert version == 3
    kv = {}
    for _ in range(n_kv):
        k = string()
        kv[k] = value(take("<I"))
    infos = []
    for _ in range(n_tensors):
        name = string()
        nd = take("<I")
        dims = [take("<Q") for _ in range(nd)]
        typ, offset = take("<I"), take("<Q")
        assert typ == 0, "f32 tensors only"
        infos.append((name, dims, offset))
    align = kv.get("general.alignment", 32)
    data = (off + align - 1) // align * align
    tensors = {}
    for name, dims, offset in infos:
        n = int(np.prod(dims))
        arr = np.frombuffer(b, "<f4", n, data + offset)
        tensors[name] = arr.reshape(list(reversed(dims))).copy()
    return kv, tensors


def unpermute(w, n_head):
    """Inverse of llama.cpp's convert permute for llama Q/K rows."""
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def build(path, device):
    kv, t = read_gguf(path)
    arch = kv["general.architecture"]
    g = lambda k: kv[f"{arch}.{k}"]
    n_head, n_kv = g("attention.head_count"), g("attention.head_count_kv")
    tied = "output.weight" not in t
    common = dict(vocab_size=t["token_embd.weight"].shape[0], hidden_size=g("embedding_length"),
                  intermediate_size=g("feed_forward_length"), num_hidden_layers=g("block_count"),
                  num_attention_heads=n_head, num_key_value_heads=n_kv, head_dim=g("attention.key_length"),
                  max_position_embeddings=g("context_length"), rms_norm_eps=g("attention.layer_norm_rms_epsilon"),
                  tie_word_embeddings=tied)
    theta = g("rope.freq_base")
    if arch == "llama":
        cfg = transformers.LlamaConfig(**common, attention_bias=False, mlp_bias=False)
        cls = transformers.LlamaForCausalLM
    elif arch == "qwen2":
        cfg = transformers.Qwen2Config(**common)
        cls = transformers.Qwen2ForCausalLM
    elif arch == "qwen3":
        cfg = transformers.Qwen3Config(**common, attention_bias=False)
        cls = transformers.Qwen3ForCausalLM
    else:
        raise ValueError(arch)
    # The RoPE base moved from rope_theta to rope_parameters in newer
    # transformers; set both and check the frequencies the model built.
    cfg.rope_theta = theta
    if getattr(cfg, "rope_parameters", None) is not None:
        cfg.rope_parameters = {**cfg.rope_parameters, "rope_type": "default", "rope_theta": theta}
    model = cls._from_config(cfg, attn_implementation="eager")
    hd = g("attention.key_length")
    want = 1.0 / theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    got = model.model.rotary_emb.inv_freq.double()
    assert torch.allclose(got, want, rtol=1e-6), (got[:4], want[:4])
    names = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight",
             "output.weight": "lm_head.weight"}
    layer = {"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
             "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj", "attn_q_norm": "self_attn.q_norm",
             "attn_k_norm": "self_attn.k_norm", "ffn_norm": "post_attention_layernorm",
             "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj"}
    sd = {}
    for name, arr in t.items():
        if name in names:
            hf = names[name]
        else:
            _, i, part, kind = name.split(".")
            hf = f"model.layers.{i}.{layer[part]}.{kind}"
            if arch == "llama" and part == "attn_q":
                arr = unpermute(arr, n_head)
            if arch == "llama" and part == "attn_k":
                arr = unpermute(arr, n_kv)
        sd[hf] = torch.from_numpy(arr)
    missing, unexpected = model.load_state_dict(sd, strict=False)
    assert not unexpected, unexpected
    assert set(missing) <= ({"lm_head.weight"} if tied else set()), missing
    model.tie_weights()
    return kv, model.to(device).eval().float()


def sample(row, step=97):
    row = row.double().cpu().numpy()
    idx = sorted(set(range(0, len(row), step)) | set(np.argsort(-row)[:32].tolist()))
    return {"ids": idx, "values": [float(row[i]) for i in idx]}


@torch.no_grad()
def run(path, out_dir, device):
    kv, model = build(path, device)
    name = os.path.splitext(os.path.basename(path))[0]
    results = []
    for prompt in PROMPTS:
        ids = torch.tensor([prompt], device=device)
        logits = model(ids).logits[0]
        rows = [sample(logits[i]) for i in range(len(prompt))]
        toks = list(prompt)
        steps = []
        for s in range(32):
            last = model(torch.tensor([toks], device=device)).logits[0, -1]
            if s < 4:
                steps.append(sample(last))
            toks.append(int(torch.argmax(last)))
        results.append({"prompt": prompt, "prompt_logits": rows, "greedy": toks[len(prompt):], "step_logits": steps})
    out = {"model": name, "architecture": kv["general.architecture"],
           "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
           "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
           "precision": "fp32, eager attention, TF32 off", "results": results}
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(out, f)
    print(name, "greedy", results[0]["greedy"][:8])


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    for p in sys.argv[2:]:
        run(p, sys.argv[1], device)


if __name__ == "__main__":
    main()
