"""analyze.py STREAM.jsonl OFFLINE.txt EVAL.json: the figures of stream.sh's run.

Lag of a commit (the issue's measure, as BENCHMARKS.md's streaming section
takes it): wall - audio_end of each committed event while the audio played
(wall time since playback started, audio_end the end of the committed text's
audio). Release -> final: the final event's wall time minus the passage's
length (playback ends then). WER by word edit distance on lower-case words
(letters, digits, apostrophes), as internal/shared.WER."""
import json, re, sys

def words(s):
    return re.sub(r"[^a-z0-9']+", " ", s.lower()).split()

def wer(ref, hyp):
    a, b = words(ref), words(hyp)
    d = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        prev, d[0] = d[0], i
        for j in range(1, len(b) + 1):
            cur = d[j]
            d[j] = min(d[j] + 1, d[j - 1] + 1, prev + (a[i - 1] != b[j - 1]))
            prev = cur
    return d[len(b)] / max(1, len(a))

ev = [json.loads(l) for l in open(sys.argv[1])]
offline = open(sys.argv[2]).read()
e = json.load(open(sys.argv[3]))
secs = e["seconds"]
spoken = " ".join(s["spoken"] for s in e["sentences"])
final = [x for x in ev if x["type"] == "final"][-1]
com = [x for x in ev if x["type"] == "committed"]
playing = [x for x in com if x["wall"] <= secs]
lags = sorted(x["wall"] - x["audio_end"] for x in playing)
med = lags[len(lags) // 2] if lags else float("nan")
print(f"passage {secs:.1f} s, {len(words(spoken))} words spoken; {len(com)} commits, {len(playing)} while playing")
print(f"median commit lag (wall - audio_end) while playing: {med:.2f} s (min {lags[0]:.2f}, max {lags[-1]:.2f})")
print(f"release -> final (final event wall - {secs:.1f} s): {final['wall'] - secs:.2f} s")
print(f"final text: {len(words(final['text']))} words; offline transcript: {len(words(offline))} words")
print(f"WER streamed vs offline {wer(offline, final['text']):.4f}; vs spoken: streamed {wer(spoken, final['text']):.4f}, offline {wer(spoken, offline):.4f}")
