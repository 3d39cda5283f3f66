"""How a model reads the evaluation passage's second long-form window under
each previous-text prompt layout (PyTorch fp32, CPU): none, the first
window's segments as plain text, and as a long-form transcription feeds them
back (timestamps included; all of them, or the last four). The offline
`hark transcribe` of the passage breaks down from its second window on
(bench/speechkit/20261202-s24, -s25); this says whether the prompt's layout
is still the cause.

  python3 longprompt.py --ckpt ckpt.pt --kit ASSETS --eval eval.json --pcm passage.pcm --srt first.srt --at 27.48

--srt: `hark transcribe --format srt` of the passage with the same model (its
segments before --at, the second window's start, make the prompt).
"""
import argparse
import json
import os
import re

import numpy as np
import torch

from evaluate import wer
from mel import NSAMPLES, SR, Mel
from model import Whisper, sinusoids
from tok import EOT, NO_SPEECH, NO_TS, NVOCAB, SOT, SOT_PREV, TS0, Tok


def ts(sec):
    return TS0 + int(round(min(max(sec, 0.0), 30.0) / 0.02))


@torch.no_grad()
def greedy_ts(model, mel, tok, prompt, maxlen=224):
    """Greedy decoding with timestamps (never decreasing), the special tokens and
    non-speech tokens suppressed; returns the text tokens."""
    xa = model.encoder(mel[None])
    seq = ([SOT_PREV] + prompt if prompt else []) + [SOT]
    sup = torch.zeros(NVOCAB, dtype=torch.bool)
    sup[tok.non_speech()] = True
    sup[[SOT, SOT_PREV, NO_SPEECH, NO_TS, 50358, 50359]] = True
    out, last = [], TS0
    for _ in range(maxlen):
        logits = model.decoder(torch.tensor([seq + out]), xa)[0, -1].float().masked_fill(sup, float("-inf"))
        logits[TS0:last] = float("-inf")
        t = int(logits.argmax())
        if t == EOT:
            break
        if t >= TS0:
            last = t
        out.append(t)
    return [t for t in out if t < EOT]


def main():
    ap = argparse.ArgumentParser()
    for name, what in (("--ckpt", "a training checkpoint"), ("--kit", "holds gpt2.tiktoken and mel_filters.npz"),
                       ("--eval", "testdata/speechkit/eval.json"), ("--pcm", "the passage, s16le 16 kHz"),
                       ("--srt", "hark transcribe --format srt of the passage")):
        ap.add_argument(name, required=True, help=what)
    ap.add_argument("--at", type=float, required=True, help="the second window's start, seconds")
    a = ap.parse_args()
    torch.set_num_threads(2)
    ck = torch.load(a.ckpt, map_location="cpu", weights_only=False)
    model = Whisper(ck["dims"])
    model.load_state_dict({k: v.float() for k, v in ck["model"].items()})
    if ck["model"]["encoder.positional_embedding"].dtype == torch.float16:
        model.encoder.positional_embedding.copy_(sinusoids(*model.encoder.positional_embedding.shape))
    model.eval()
    tok = Tok(os.path.join(a.kit, "gpt2.tiktoken"))
    melf = Mel(os.path.join(a.kit, "mel_filters.npz"), "cpu")
    segs = []
    for blk in open(a.srt).read().strip().split("\n\n"):
        lines = blk.splitlines()
        t0, t1 = [sum(float(x) * m for x, m in zip(re.split("[:,]", s.strip())[:3], (3600, 60, 1)))
                  + int(re.split("[:,]", s.strip())[3]) / 1000 for s in lines[1].split("-->")]
        if t1 <= a.at + 1e-6:
            segs.append((t0, t1, " ".join(lines[2:])))
    ev = json.load(open(a.eval))["sentences"]
    pcm = np.fromfile(a.pcm, np.int16)
    lo = int(a.at * SR)
    audio = torch.from_numpy(pcm[lo:lo + NSAMPLES].astype(np.float32) / 32768)
    wav = torch.zeros(1, NSAMPLES)
    wav[0, :len(audio)] = audio
    mel = melf(wav, torch.tensor([len(audio)]))[0]
    ref = " ".join(e["spoken"] for e in ev if lo <= e["start"] and e["end"] <= lo + NSAMPLES)

    def timed(ss):
        return [t for s0, s1, txt in ss for t in [ts(s0)] + tok.encode(" " + txt) + [ts(s1)]]

    variants = [("none", []), ("plain text", tok.encode(" " + " ".join(s[2] for s in segs))),
                (f"timed, all {len(segs)} segments", timed(segs)), ("timed, last 4 segments", timed(segs[-4:]))]
    for name, p in variants:
        hyp = tok.decode(greedy_ts(model, mel, tok, p[-223:])).strip()
        e, n = wer(ref, hyp)
        print(f"{name:>26}: {len(p):3d} prompt tokens, WER {e / n:6.1%} ({e}/{n}): {hyp[:160]}")


if __name__ == "__main__":
    main()
