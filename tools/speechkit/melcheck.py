"""Writes the trainer's log-mel (mel.py) of some audio, for melcheck_test.go to
compare with Hark's (engine/whisper/mel): the model only hears what it was
trained on if both compute the same spectrogram. Also checks mel.py against
openai-whisper's own output for jfk.wav (the kit's reference tensor).

  python3 melcheck.py --kit DIR --shared ../shared --out DIR \
      [--espeak ROOT --corpus DIR --render 4] [--passage FILE --ids e007,e019]

For each clip NAME it writes NAME.pcm (s16le mono 16 kHz) and NAME.mel.f32
(float32 [80][frames], the clip's content frames: what train.py's Mel keeps
before zeroing the rest of the 3000-frame window). --render renders that many
training sentences with espeak-ng in random training voices; --passage cuts
the evaluation sentences --ids out of the evaluation passage (eval.json's
sample ranges).
"""
import argparse
import json
import os
import random
import wave

import numpy as np
import torch

from mel import HOP, NSAMPLES, Mel


def trainer_mel(melf, pcm):
    """The content frames of train.py's window for s16 samples pcm."""
    x = torch.from_numpy(pcm.astype(np.float32) / 32768)
    wav = torch.zeros(1, NSAMPLES)
    wav[0, :len(x)] = x
    m = melf(wav, torch.tensor([len(x)]))[0]
    return m[:, :len(x) // HOP].contiguous().numpy()


def write(out, name, pcm, m):
    pcm.astype("<i2").tofile(os.path.join(out, name + ".pcm"))
    m.astype("<f4").tofile(os.path.join(out, name + ".mel.f32"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kit", required=True, help="holds mel_filters.npz")
    ap.add_argument("--shared", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--espeak", default="")
    ap.add_argument("--corpus", default="")
    ap.add_argument("--render", type=int, default=0)
    ap.add_argument("--passage", default="", help="s16le passage; eval.json beside --corpus")
    ap.add_argument("--ids", default="")
    ap.add_argument("--seed", type=int, default=39)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    melf = Mel(os.path.join(a.kit, "mel_filters.npz"), "cpu")

    # mel.py against openai-whisper: jfk's first window as transcribe() fed it.
    with wave.open(os.path.join(a.shared, "audio", "jfk.wav")) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
        jfk = np.frombuffer(w.readframes(w.getnframes()), "<i2")
    ref = np.fromfile(os.path.join(a.shared, "whisper-kit", "reference", "tensors", "jfk.mel.f32"), "<f4")
    x = torch.from_numpy(jfk.astype(np.float32) / 32768)
    wav = torch.zeros(1, NSAMPLES)
    wav[0, :len(x)] = x
    got = melf(wav, torch.tensor([len(x)]))[0].numpy().reshape(-1)
    d = float(np.abs(got - ref).max())
    print(f"jfk: mel.py against openai-whisper's reference: max |diff| {d:.3g} (max |ref| {np.abs(ref).max():.3g})")
    if d > 1e-4:
        raise SystemExit("mel.py differs from openai-whisper's log-mel")

    if a.render:
        import render
        items = [json.loads(l) for l in open(os.path.join(a.corpus, "train.jsonl"))]
        rnd = random.Random(a.seed)
        render._espeak_init(a.espeak)
        for k in range(a.render):
            it = rnd.choice(items)
            job = (it["spoken"],) + render.voice_params(rnd)
            pcm, _ = render.render_one(job)
            write(a.out, f"render{k}", pcm, trainer_mel(melf, pcm))
            print(f"render{k}: {job[1]} speed {job[2]} pitch {job[3]}: {len(pcm) / 16000:.2f} s: {it['spoken']}")
    if a.ids:
        ev = {e["id"]: e for e in json.load(open(os.path.join(a.corpus, "eval.json")))["sentences"]}
        passage = np.fromfile(a.passage, "<i2")
        for i in a.ids.split(","):
            e = ev[i]
            pcm = passage[e["start"]:e["end"]]
            write(a.out, i, pcm, trainer_mel(melf, pcm))
            print(f"{i}: {len(pcm) / 16000:.2f} s: {e['spoken']}")


if __name__ == "__main__":
    main()
