"""Renders the speechkit evaluation set: the 200 evaluation sentences read one
after another as one continuous passage (so the same audio serves the sentence
WER, by each sentence's samples, and the continuous-speech streaming tests).

  python3 evalset.py --espeak ROOT --corpus DIR --out DIR [--seed 39]

Writes eval.json (per sentence: id, text, spoken, term, sounds, voice, start,
end in samples), passage.pcm (s16le mono 16 kHz) and, with ffmpeg, passage.flac.
A quarter of the sentences are in the voice held out of training. The audio is
clean and quiet (peak about -30 dBFS, which keeps the FLAC small); the tests
scale it and add noise from a seed.
"""
import argparse
import json
import os
import random
import subprocess

import numpy as np

import render

PEAK = 1000  # of 32767


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--espeak", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=39)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    items = [json.loads(l) for l in open(os.path.join(a.corpus, "eval.jsonl"))]
    jobs = []
    for i, it in enumerate(items):
        voice = render.HELDOUT if i % 4 == 1 else None
        jobs.append((it["spoken"],) + render.voice_params(rnd, voice))
    render._espeak_init(a.espeak)
    parts, pos, out = [], 0, []
    for it, job in zip(items, jobs):
        audio, starts = render.render_one(job)
        gap = rnd.randint(int(0.35 * 16000), int(0.9 * 16000))
        parts.append(np.zeros(gap, np.int16))
        pos += gap
        y = (audio.astype(np.float32) * (PEAK / max(1, np.abs(audio).max()))).round().astype(np.int16)
        parts.append(y)
        out.append(dict(it, voice=job[1], speed=job[2], pitch=job[3], start=int(pos), end=int(pos + len(y)),
                        words=[int(pos + s) for s in starts]))
        pos += len(y)
    parts.append(np.zeros(16000, np.int16))
    pcm = np.concatenate(parts)
    os.makedirs(a.out, exist_ok=True)
    pcm.astype("<i2").tofile(os.path.join(a.out, "passage.pcm"))
    json.dump({"sample_rate": 16000, "seconds": len(pcm) / 16000, "heldout_voice": render.HELDOUT,
               "sentences": out}, open(os.path.join(a.out, "eval.json"), "w"), indent=0)
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "s16le", "-ar", "16000", "-ac", "1", "-i",
                    os.path.join(a.out, "passage.pcm"), "-compression_level", "12",
                    os.path.join(a.out, "passage.flac")], check=True)
    print(f"{len(out)} sentences, {len(pcm) / 16000:.1f} s")


if __name__ == "__main__":
    main()
