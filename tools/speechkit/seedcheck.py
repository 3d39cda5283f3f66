"""Checks seed.py and ggmlfile.load (logs/seed-check.txt): export() then load() gives back a model's weights (f16:
exactly its fp16 rounding; q8_0: exactly ggml's dequantization of its blocks); a checkpoint seeded from the committed
q8_0 file loads into train.py's model, keeps the file's frozen rows, and decodes the committed evaluation sentence
e093 (its log-mel in testdata/speechkit/e093.mel.f32) as PyTorch fp32 did at the end of training (pytorch-eval.json),
or within q8_0's rounding where that run's top-2 margin was small.

  /usr/bin/python3 seedcheck.py --kit ../../../shared/whisper-kit/assets > logs/seed-check.txt
"""
import argparse
import json
import os
import tempfile

import numpy as np
import torch

from evaluate import greedy
from ggmlfile import export, load
from model import DIMS, Whisper
from seed import seeded
from tok import Tok

TD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testdata", "speechkit")


def q8_roundtrip(a):
    """ggml's q8_0 of a row-major array, dequantized."""
    a = a.reshape(-1, 32).astype(np.float32)
    d = (np.abs(a).max(1) / 127.0).astype(np.float16).astype(np.float32)
    inv = np.where(d > 0, 1.0 / np.where(d > 0, np.abs(a).max(1) / 127.0, 1), 0)
    q = np.round(a * inv[:, None]).astype(np.int8).astype(np.float32)
    return d[:, None] * q


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kit", required=True, help="../shared/whisper-kit/assets (gpt2.tiktoken, mel_filters.npz)")
    a = ap.parse_args()
    tok = Tok(os.path.join(a.kit, "gpt2.tiktoken"))
    torch.manual_seed(1)
    small = Whisper(dict(DIMS, n_audio_layer=1, n_text_layer=1, n_audio_ctx=64, n_text_ctx=32))
    sd = {k: v.detach().numpy() for k, v in small.state_dict().items()}
    with tempfile.TemporaryDirectory() as d:
        for quant in (False, True):
            p = os.path.join(d, "m.bin")
            export(small, tok, os.path.join(a.kit, "mel_filters.npz"), p, quant)
            dims, got = load(p)
            assert dims == small.dims, (dims, small.dims)
            assert set(got) == set(sd)
            for k, v in sd.items():
                if v.ndim < 2 or k in ("encoder.positional_embedding", "decoder.positional_embedding"):
                    want = v.astype(np.float32)
                elif quant and k not in ("encoder.conv1.weight", "encoder.conv2.weight") and v.shape[-1] % 32 == 0:
                    want = q8_roundtrip(v).reshape(v.shape)
                else:
                    want = v.astype(np.float16).astype(np.float32)
                assert got[k].shape == v.shape, (k, got[k].shape, v.shape)
                assert np.array_equal(got[k], want), (quant, k, np.abs(got[k] - want).max())
            print(f"export then load, {'q8_0' if quant else 'f16'}: {len(sd)} tensors equal to the model's "
                  f"{'q8_0 dequantized' if quant else 'fp16 rounding'}")
    path = os.path.join(TD, "ggml-speechkit-q8_0.bin")
    ck, model = seeded(path, 1300)
    fresh = Whisper(ck["dims"])
    fresh.load_state_dict({k: v.float() for k, v in ck["model"].items()})
    print(f"seeded from {os.path.basename(path)}: dims {ck['dims']}, {int(ck['used'].sum())} trained token rows "
          f"of {len(ck['used'])}, the checkpoint loads into train.py's model")
    ev = {s["id"]: s for s in json.load(open(os.path.join(TD, "pytorch-eval.json")))["sentences"]}["e093"]
    mel = torch.from_numpy(np.fromfile(os.path.join(TD, "e093.mel.f32"), "<f4").reshape(80, -1))
    full = torch.zeros(80, 3000)
    full[:, :mel.shape[1]] = mel  # frames past the clip zeroed, as the trainer's windows
    fresh.eval()
    toks, margins = greedy(fresh, full, tok, tok.non_speech())
    same = toks == ev["tokens"]
    print(f"e093 greedy from the seeded checkpoint: {tok.decode(toks)!r}; training's fp32: {ev['text']!r}; "
          f"{'token-exact' if same else 'differs'} (smallest top-2 margin in training's run {min(ev['margins']):.3f})")
    assert same or min(ev["margins"]) < 0.1


if __name__ == "__main__":
    main()
