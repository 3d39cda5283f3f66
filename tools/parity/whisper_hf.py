#!/usr/bin/env python3
"""Reference outputs for Hark's synthetic Whisper models, from Hugging Face
transformers (an implementation independent of Hark's).

Each model is a whisper.cpp GGML file written by Hark's own writer
(tools/parity/whisper-random). This script reads the file, loads its weights
into transformers' WhisperForConditionalGeneration (fp32, eager attention,
TF32 off) and records, for one audio clip:
  - the log-mel spectrogram of WhisperFeatureExtractor (sampled frames),
  - the encoder output (sampled rows),
  - raw decoder logits at the last position of fixed prompts (sampled ids
    plus the 32 largest),
  - language detection (argmax over the language tokens after SOT),
  - 16 raw-argmax greedy tokens for the transcribe and translate tasks.
The outputs are small JSON files committed under
engine/whisper/parity/testdata; the Go test regenerates the models from
their seeds and compares.

usage: whisper_hf.py AUDIO.wav OUTDIR MODEL.bin...
"""
import json
import os
import struct
import sys
import wave

import numpy as np
import torch
import transformers
from transformers import WhisperConfig, WhisperFeatureExtractor, WhisperForConditionalGeneration

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False

GGML_MAGIC = 0x67676D6C
HPARAMS = ["n_vocab", "n_audio_ctx", "n_audio_state", "n_audio_head", "n_audio_layer",
           "n_text_ctx", "n_text_state", "n_text_head", "n_text_layer", "n_mels", "ftype"]


def read_ggml(path):
    b = open(path, "rb").read()
    off = 0

    def i32():
        nonlocal off
        v = struct.unpack_from("<i", b, off)[0]
        off += 4
        return v

    assert struct.unpack_from("<I", b, 0)[0] == GGML_MAGIC
    off = 4
    hp = {k: i32() for k in HPARAMS}
    n_mel, n_fft = i32(), i32()
    off += 4 * n_mel * n_fft
    n_tok = i32()
    for _ in range(n_tok):
        n = i32()  # read before adding: `off += i32()` would use the old off
        off += n
    tensors = {}
    while off < len(b):
        n_dims, name_len, ttype = i32(), i32(), i32()
        dims = [i32() for _ in range(n_dims)]
        name = b[off:off + name_len].decode()
        off += name_len
        dtype = {0: "<f4", 1: "<f2"}[ttype]
        count = int(np.prod(dims))
        arr = np.frombuffer(b, dtype, count, off)
        off += count * np.dtype(dtype).itemsize
        tensors[name] = arr.reshape(list(reversed(dims))).astype(np.float32)
    return hp, tensors


def hf_name(n):
    """openai/whisper.cpp tensor name -> transformers parameter name."""
    n = n.replace("encoder.positional_embedding", "model.encoder.embed_positions.weight")
    n = n.replace("decoder.positional_embedding", "model.decoder.embed_positions.weight")
    n = n.replace("decoder.token_embedding", "model.decoder.embed_tokens")
    n = n.replace("encoder.ln_post", "model.encoder.layer_norm")
    n = n.replace("decoder.ln.", "model.decoder.layer_norm.")
    n = n.replace("encoder.conv", "model.encoder.conv")
    for side in ("encoder", "decoder"):
        n = n.replace(f"{side}.blocks.", f"model.{side}.layers.")
    n = n.replace(".cross_attn_ln.", ".encoder_attn_layer_norm.")
    n = n.replace(".cross_attn.", ".encoder_attn.")
    n = n.replace(".attn_ln.", ".self_attn_layer_norm.")
    n = n.replace(".attn.", ".self_attn.")
    n = n.replace(".mlp_ln.", ".final_layer_norm.")
    n = n.replace(".mlp.0.", ".fc1.").replace(".mlp.2.", ".fc2.")
    n = n.replace(".query.", ".q_proj.").replace(".key.", ".k_proj.")
    n = n.replace(".value.", ".v_proj.").replace(".out.", ".out_proj.")
    return n


def specials(n_vocab):
    eot = 50256 if n_vocab == 51864 else 50257
    ts = n_vocab - 1501
    return dict(eot=eot, sot=eot + 1, translate=ts - 6, transcribe=ts - 5, no_timestamps=ts - 1,
                n_lang=ts - 6 - eot - 2, timestamp_begin=ts)


def load_model(path, device):
    hp, t = read_ggml(path)
    sp = specials(hp["n_vocab"])
    cfg = WhisperConfig(
        vocab_size=hp["n_vocab"], num_mel_bins=hp["n_mels"],
        encoder_layers=hp["n_audio_layer"], encoder_attention_heads=hp["n_audio_head"],
        decoder_layers=hp["n_text_layer"], decoder_attention_heads=hp["n_text_head"],
        d_model=hp["n_audio_state"], encoder_ffn_dim=4 * hp["n_audio_state"],
        decoder_ffn_dim=4 * hp["n_text_state"], max_source_positions=hp["n_audio_ctx"],
        max_target_positions=hp["n_text_ctx"], pad_token_id=sp["eot"], bos_token_id=sp["eot"],
        eos_token_id=sp["eot"], decoder_start_token_id=sp["sot"], tie_word_embeddings=True,
        dropout=0.0, attention_dropout=0.0, activation_dropout=0.0)
    model = WhisperForConditionalGeneration._from_config(cfg, attn_implementation="eager")
    sd = {}
    for name, arr in t.items():
        v = torch.from_numpy(arr.copy())
        if name.endswith("conv1.bias") or name.endswith("conv2.bias"):
            v = v.reshape(-1)
        sd[hf_name(name)] = v
    missing, unexpected = model.load_state_dict(sd, strict=False)
    assert not unexpected, unexpected
    assert set(missing) <= {"proj_out.weight"}, missing
    model.tie_weights()
    assert torch.equal(model.proj_out.weight, model.model.decoder.embed_tokens.weight)
    return hp, sp, model.to(device).eval().float()


def read_wav(path):
    with wave.open(path) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
        x = np.frombuffer(w.readframes(w.getnframes()), "<i2")
    return x.astype(np.float32) / 32768.0


def sample_logits(row, step):
    row = row.double().cpu().numpy()
    idx = sorted(set(range(0, len(row), step)) | set(np.argsort(-row)[:32].tolist()))
    return {"ids": idx, "values": [float(row[i]) for i in idx]}


@torch.no_grad()
def run(model_path, audio, out_dir, device):
    hp, sp, model = load_model(model_path, device)
    fe = WhisperFeatureExtractor(feature_size=hp["n_mels"])
    feats = fe(audio, sampling_rate=16000, return_tensors="np").input_features  # [1, mels, 3000]
    mel = torch.from_numpy(feats).to(device)
    enc = model.model.encoder(mel).last_hidden_state[0]  # [1500, d]

    def logits(tokens):
        ids = torch.tensor([tokens], device=device)
        return model(encoder_outputs=(enc[None],), decoder_input_ids=ids).logits[0, -1]

    lang_logits = logits([sp["sot"]])[sp["sot"] + 1:sp["sot"] + 1 + sp["n_lang"]]
    lang = int(torch.argmax(lang_logits))
    lang_tok = sp["sot"] + 1 + lang

    def greedy(prompt, n=16):
        toks = list(prompt)
        for _ in range(n):
            toks.append(int(torch.argmax(logits(toks))))
        return toks[len(prompt):]

    prompts = {
        "sot": [sp["sot"]],
        "transcribe": [sp["sot"], lang_tok, sp["transcribe"], sp["no_timestamps"]],
        "translate": [sp["sot"], lang_tok, sp["translate"], sp["no_timestamps"]],
        "timestamps": [sp["sot"], lang_tok, sp["transcribe"]],
    }
    frames = list(range(0, 3000, 97)) + [2999]
    rows = list(range(0, hp["n_audio_ctx"], 61)) + [hp["n_audio_ctx"] - 1]
    name = os.path.splitext(os.path.basename(model_path))[0]
    out = {
        "model": name,
        "hparams": hp,
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "precision": "fp32, eager attention, TF32 off",
        "logmel": {"frames": frames, "values": [[float(v) for v in feats[0, :, f]] for f in frames]},
        "encoder": {"rows": rows, "values": [[float(v) for v in enc[r].double().cpu()] for r in rows]},
        "language": {"index": lang, "token": lang_tok},
        "logits": {k: {"prompt": p, **sample_logits(logits(p), 53)} for k, p in prompts.items()},
        "greedy": {k: {"prompt": prompts[k], "tokens": greedy(prompts[k])} for k in ("transcribe", "translate")},
    }
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(out, f)
    print(name, "language", lang, "greedy", out["greedy"]["transcribe"]["tokens"][:8])


def main():
    audio = read_wav(sys.argv[1])
    device = "cuda" if torch.cuda.is_available() else "cpu"
    for p in sys.argv[3:]:
        run(p, audio, sys.argv[2], device)


if __name__ == "__main__":
    main()
