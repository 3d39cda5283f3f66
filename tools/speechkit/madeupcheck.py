"""Checks the made-up terms' training windows (madeup.py, examples.py) on
sentences rendered here: every window that holds a made-up term's utterance
has that term in its glossary prompt, and its target writes the term (never
its "sounds like" words) wherever the window keeps the whole term.

  python3 madeupcheck.py --espeak ROOT --corpus DIR --kit ASSETS [--n 600] [--windows 20000]

numpy, scipy and torch (examples.py imports it); tiktoken optional (tok.py).
"""
import argparse
import json
import os
import random
import tempfile

from curriculum import mix
from examples import Data, plain
from render import render_all
from tok import SOT, SOT_PREV, Tok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--espeak", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--kit", required=True)
    ap.add_argument("--n", type=int, default=600, help="sentences rendered (half with a made-up term)")
    ap.add_argument("--windows", type=int, default=20000)
    a = ap.parse_args()
    items = [json.loads(l) for l in open(os.path.join(a.corpus, "train.jsonl"))]
    made = [it for it in items if it.get("madeup")][:a.n // 2]
    other = [it for it in items if not it.get("madeup")][:a.n - len(made)]
    items = made + other
    vocab = [l.split("=")[0].strip() for l in open(os.path.join(a.corpus, "vocabulary.txt")) if "=" in l]
    tok = Tok(os.path.join(a.kit, "gpt2.tiktoken"))
    with tempfile.TemporaryDirectory() as d:
        audio, lens, starts, owner = render_all(a.espeak, items, 39, 1, 2, d)
    data = Data(items, lens, starts, owner, tok, vocab)
    assert data.made, "the corpus has made-up terms"
    rnd = random.Random(1)
    m = mix(1.0)
    seen = whole = 0
    for _ in range(a.windows):
        place, content, seq, start, ctc, hit = data.example(rnd, m)
        ms = [items[owner[u]] for u, *_ in place if items[owner[u]].get("madeup")]
        if not ms:
            continue
        seen += 1
        assert hit, "a window with a made-up term counts as a glossary hit"
        assert seq[0] == SOT_PREV, "it has a prompt"
        prompt = tok.decode(seq[1:seq.index(SOT)])
        body = tok.decode([t for t in seq[start:] if t < 50256])
        for it in ms:
            assert it["term"] in prompt, (prompt, it["term"])
            # the words of the term's sounds, run through plain(), never appear in the target
            snd, bw = [plain(w) for w in it["sounds"].split()], [plain(w) for w in body.split()]
            assert all(bw[i:i + len(snd)] != snd for i in range(len(bw))), (body, it)
            if it["term"] in body:
                whole += 1
    assert seen > 0 and whole > 0
    print(f"madeupcheck.py: {a.windows} windows at the full mix over {len(items)} rendered sentences "
          f"({len(made)} with a made-up term): {seen} hold a made-up term's utterance, every one with the "
          f"term in its glossary prompt and none with its sounds in the target; the term written {whole} times")


if __name__ == "__main__":
    main()
