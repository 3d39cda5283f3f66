"""Previous-text prompts as a long-form transcription feeds them back.

Hark, openai-whisper and whisper.cpp all condition a window on the tokens
of the segments before it, timestamps included: each segment is its start
timestamp, its text, its end timestamp, the times relative to the window
that decoded it (so they start again from 0 at each 30-s window). Trained
only on plain-text prompts, the sixth session's model read such a prompt
as noise and derailed from the second window of every long-form
transcription on (bench/speechkit/20261202-s24/README.md).
"""

WINDOW = 30.0


def timed_previous(rnd, texts, enc, ts):
    """The tokens of texts as consecutive long-form segments: enc(" " + text)
    between ts(start) and ts(end), about 0.3 s a word, with pauses between
    segments and a new window (times from 0 again) when one would pass 30 s."""
    out, t = [], rnd.uniform(0.0, 1.0)
    for s in texts:
        d = 0.3 * max(1, len(s.split())) + rnd.uniform(0.2, 0.8)
        if t + d > WINDOW:
            t = rnd.uniform(0.0, 1.0)
            d = min(d, WINDOW - t)
        out += [ts(t)] + enc(" " + s) + [ts(t + d)]
        t += d + rnd.uniform(0.1, 1.2)
    return out


def _check():
    """Checks timed_previous's layout with a stand-in encoder (one token a
    word) and openai-whisper's timestamp tokens (50363 + t/0.02)."""
    import random

    ts0 = 50363

    def ts(sec):
        return ts0 + int(round(min(max(sec, 0.0), WINDOW) / 0.02))

    def enc(s):
        return [hash(w) % 50000 for w in s.split()]

    rnd = random.Random(1)
    restarts = 0
    for trial in range(200):
        texts = [" ".join("w%d" % rnd.randint(0, 99) for _ in range(rnd.randint(1, 40))) for _ in range(rnd.randint(1, 6))]
        toks = timed_previous(rnd, texts, enc, ts)
        i, last_end = 0, -1
        for s in texts:
            start, body = toks[i], enc(" " + s)
            assert start >= ts0, (trial, "a segment starts with its timestamp")
            assert toks[i + 1:i + 1 + len(body)] == body, (trial, "then its text")
            end = toks[i + 1 + len(body)]
            assert ts0 <= start <= end <= ts0 + 1500, (trial, "its end timestamp, within the window")
            if start < last_end:
                restarts += 1  # times start again: the next window
            last_end = end
            i += len(body) + 2
        assert i == len(toks), (trial, "nothing else")
    assert restarts > 0, "some prompts span two windows"
    print("prompt.py: timed_previous checked on 200 random prompts")


if __name__ == "__main__":
    _check()
