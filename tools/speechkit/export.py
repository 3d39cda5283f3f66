"""Writes the whisper.cpp files (f16 and q8_0) from a speechkit checkpoint, as
train.py does at the end of each call (the f16 file is not committed: this
rebuilds it byte for byte).

  python3 export.py --ckpt ckpt.pt --kit DIR --out DIR
"""
import argparse
import os

import torch

from ggmlfile import export
from model import Whisper, sinusoids
from tok import Tok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--kit", required=True, help="holds gpt2.tiktoken and mel_filters.npz")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    ck = torch.load(a.ckpt, map_location="cpu")
    model = Whisper(ck["dims"])
    model.load_state_dict({k: v.float() for k, v in ck["model"].items()})
    if ck["model"]["encoder.positional_embedding"].dtype == torch.float16:
        # Checkpoints of the first sessions rounded the encoder's sinusoids to fp16;
        # their files held them in float32 as torch computed them there: recomputed
        # here, they can differ in the last bit (logs/README say where).
        model.encoder.positional_embedding.copy_(sinusoids(*model.encoder.positional_embedding.shape))
    tok = Tok(os.path.join(a.kit, "gpt2.tiktoken"))
    filters = os.path.join(a.kit, "mel_filters.npz")
    os.makedirs(a.out, exist_ok=True)
    export(model, tok, filters, os.path.join(a.out, "ggml-speechkit-f16.bin"), False)
    export(model, tok, filters, os.path.join(a.out, "ggml-speechkit-q8_0.bin"), True)


if __name__ == "__main__":
    main()
