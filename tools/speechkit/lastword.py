"""How a model ends its outputs on evaluation sentences (greedy PyTorch fp32, no timestamps, clean audio): the
clip as is, with 0.5 s of silence after it, cut at its last word's start, and cut halfway through its last word.
The fifth session's model kept the last word of 23 of the 50 term sentences as is, 32 with the silence after it:
a clip that ends soon after its last word looked to it like a window cut inside an utterance, whose left-out
fragment it had been taught to drop (examples.py now trims such windows to the words their targets keep).

  python3 lastword.py --model ../../testdata/speechkit/ggml-speechkit-q8_0.bin --kit KIT --pcm passage.pcm --every 4
"""
import argparse
import json
import os

import numpy as np
import torch

from evaluate import clip_mel, greedy, lacks_last_word, words
from mel import SR, Mel
from seed import seeded
from tok import Tok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="a whisper.cpp file export() wrote (f16 or q8_0)")
    ap.add_argument("--kit", required=True, help="gpt2.tiktoken and mel_filters.npz")
    ap.add_argument("--pcm", required=True, help="the evaluation passage, s16le mono 16 kHz")
    ap.add_argument("--eval", default=os.path.join(os.path.dirname(__file__), "../../testdata/speechkit/eval.json"))
    ap.add_argument("--every", type=int, default=1, help="every n-th sentence (4: the 50 term sentences)")
    a = ap.parse_args()
    tok = Tok(os.path.join(a.kit, "gpt2.tiktoken"))
    sup = tok.non_speech()
    _, model = seeded(a.model, 1)
    model.eval()
    melf = Mel(os.path.join(a.kit, "mel_filters.npz"), "cpu")
    ev = json.load(open(a.eval))["sentences"]
    pcm = np.fromfile(a.pcm, dtype="<i2")

    def dec(x):
        t, _ = greedy(model, clip_mel(melf, torch.from_numpy(x), "cpu"), tok, sup)
        return words(tok.decode(t))

    stats = {}

    def count(name, ok):
        s = stats.setdefault(name, [0, 0])
        s[0] += ok
        s[1] += 1

    for e in ev[::a.every]:
        x = pcm[e["start"]:e["end"]].astype(np.float32) / 32768
        ref = words(e["spoken"])
        ws = [w - e["start"] for w in e["words"]]
        h0 = dec(x)
        count("as is: last word present", bool(h0) and h0[-1] == ref[-1])
        count("as is: shorter than spoken, without its last word", lacks_last_word(ref, h0))
        h1 = dec(np.concatenate([x, np.zeros(SR // 2, np.float32)]))
        count("0.5 s of silence after it: last word present", bool(h1) and h1[-1] == ref[-1])
        k = len(ref) - 1
        if len(ws) == len(ref) and k >= 1:
            h2 = dec(x[:ws[k]])
            count("cut at the last word's start: ends on the word before", bool(h2) and h2[-1] == ref[k - 1])
            h3 = dec(x[:(ws[k] + len(x)) // 2])
            count("cut halfway through the last word: ends on the word before", bool(h3) and h3[-1] == ref[k - 1])
        print(e["id"], "|", " ".join(ref), "|", " ".join(h0), "|", " ".join(h1), flush=True)
    for name, (ok, n) in stats.items():
        print(f"{name}: {ok}/{n}")


if __name__ == "__main__":
    main()
