"""Term recall of `hark transcribe --vocabulary` on the whisper kit's clips.

For each of the kit's 30 short clips, the vocabulary is the clip's rare
words and names (words of 8+ letters, capitalised words not starting the
text; at most 5). It transcribes each clip greedily without vocabulary,
with the glossary prompt, and with the logit bias alone, and counts the
terms that come out spelt right. --snr adds seeded white noise first.

  go build -o /tmp/hark . && python3 tools/vocab-recall/recall.py --hark /tmp/hark [--snr 10]

Standard library only; writes its temporary files under --work.
"""
import argparse, glob, json, math, os, random, re, struct, subprocess, wave

ap = argparse.ArgumentParser()
ap.add_argument("--hark", required=True)
ap.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared"))
ap.add_argument("--snr", type=float, default=None, help="add white noise at this SNR (dB)")
ap.add_argument("--work", default="/tmp/vocab-recall")
a = ap.parse_args()
os.makedirs(a.work, exist_ok=True)
model = os.path.join(a.shared, "whisper-kit/models/ggml-kit-tiny.en-f16.bin")
conds = {
    "none": None,
    "prompt": ["--vocabulary-tokens", "112"],
    "bias2": ["--vocabulary-tokens", "0", "--vocabulary-bias", "2"],
    "bias5": ["--vocabulary-tokens", "0", "--vocabulary-bias", "5"],
}


def terms_of(text):
    words = re.findall(r"[A-Za-z][A-Za-z'-]+", text)
    out = []
    for i, w in enumerate(words):
        if (len(w) >= 8 or (i > 0 and w[0].isupper() and not w.isupper())) and w not in out:
            out.append(w)
    return out[:5]


def noisy(src, dst, snr):
    r = random.Random(1)
    with wave.open(src) as w:
        p, data = w.getparams(), w.readframes(w.getnframes())
    x = struct.unpack("<%dh" % (len(data) // 2), data)
    sd = math.sqrt(sum(v * v for v in x) / len(x) / 10 ** (snr / 10))
    y = [max(-32768, min(32767, int(v + r.gauss(0, sd)))) for v in x]
    with wave.open(dst, "wb") as w:
        w.setparams(p)
        w.writeframes(struct.pack("<%dh" % len(y), *y))


total = {c: [0, 0] for c in conds}
for ref in sorted(glob.glob(os.path.join(a.shared, "whisper-kit/reference/transcribe/*.json"))):
    name = os.path.basename(ref)[:-5]
    terms = terms_of(json.load(open(ref))["text"].strip())
    if not terms:
        continue
    vf = os.path.join(a.work, name + ".txt")
    open(vf, "w").write("\n".join(terms) + "\n")
    wav = os.path.join(a.shared, "audio", name + ".wav")
    if a.snr is not None:
        wav, src = os.path.join(a.work, f"{name}.snr{a.snr:g}.wav"), wav
        noisy(src, wav, a.snr)
    row = []
    for c, extra in conds.items():
        args = [a.hark, "transcribe", "--model", model, "--beam", "1"]
        if extra:
            args += ["--vocabulary", vf] + extra
        p = subprocess.run(args + [wav], capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(p.stderr)
        found = sum(bool(re.search(r"\b" + re.escape(t) + r"\b", p.stdout)) for t in terms)
        total[c][0] += found
        total[c][1] += len(terms)
        row.append(f"{c} {found}/{len(terms)}")
    print(name, *row, flush=True)
for c, (f, n) in total.items():
    print(f"{c}: term recall {f}/{n} = {f / n:.1%}" + (f" at {a.snr:g} dB SNR" if a.snr is not None else ""))
