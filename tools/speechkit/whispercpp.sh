#!/usr/bin/env bash
# whispercpp.sh WHISPER_CLI MODEL OUT.json [EVALDIR]
#
# whisper.cpp's greedy tokens for the 200 evaluation sentences, the reference
# TestHarkMatchesWhisperCpp holds Hark's q8_0 decode to: each sentence is cut
# from EVALDIR/passage.flac (default testdata/speechkit) at eval.json's sample
# range into a 16-bit WAV (the same samples Hark reads) and decoded by
# whisper-cli with MODEL, greedy and text-only as Hark's test decodes:
#   -bs 1 -bo 1   one beam, one candidate (greedy)
#   -nf           no temperature fallback (nor its entropy/log-prob checks)
#   -nt           <|notimestamps|>: no timestamp token is sampled
#   -sns          the non-speech tokens suppressed (openai's default, Hark's)
#   -nth 1        never drop a window as silence (Hark's decode has no such skip)
#   -l en -t 2    English; 2 threads (CPU)
# OUT.json: the whisper.cpp commit ($WHISPER_CPP_COMMIT), the command, MODEL's
# sha256, and per sentence its id, text and text tokens (below EOT).
# whisper.cpp is built for measurement only (/work/shared/tools/peers/
# build-peers.sh build SRC OUT --cpu whisper); never commit its code or binaries.
# Needs ffmpeg and python3 (standard library).
set -euo pipefail
cli=$1 model=$2 out=$3 dir=${4:-testdata/speechkit}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ffmpeg -nostdin -v error -i "$dir/passage.flac" -f s16le -ac 1 -ar 16000 "$tmp/passage.pcm"
python3 - "$dir/eval.json" "$tmp" <<'PY'
import json, sys, wave
ev = json.load(open(sys.argv[1]))
pcm = open(sys.argv[2] + "/passage.pcm", "rb").read()
for s in ev["sentences"]:
    with wave.open(f"{sys.argv[2]}/{s['id']}.wav", "wb") as w:
        w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000)
        w.writeframes(pcm[2 * s["start"]:2 * s["end"]])
PY
flags=(-l en -t 2 -bs 1 -bo 1 -nf -nt -sns -nth 1 -ojf -np)
files=()
for f in "$tmp"/e*.wav; do files+=(-f "$f"); done
"$cli" -m "$model" "${flags[@]}" "${files[@]}" > "$tmp/stdout.txt" 2> "$tmp/stderr.txt" || { cat "$tmp/stderr.txt" >&2; exit 1; }
python3 - "$dir/eval.json" "$tmp" "$model" "$out" "${flags[*]}" <<'PY'
import hashlib, json, os, sys
ev, tmp, model, out, flags = sys.argv[1:6]
EOT = 50256  # English-only vocabulary: text tokens are below it
res = {"whisper_cpp": os.environ.get("WHISPER_CPP_COMMIT", "unknown"),
       "command": f"whisper-cli -m {os.path.basename(model)} {flags} -f SENTENCE.wav",
       "model_sha256": hashlib.sha256(open(model, "rb").read()).hexdigest(),
       "sentences": []}
for s in json.load(open(ev))["sentences"]:
    j = json.load(open(f"{tmp}/{s['id']}.wav.json"))
    toks = [t["id"] for seg in j["transcription"] for t in seg["tokens"] if t["id"] < EOT]
    text = "".join(seg["text"] for seg in j["transcription"]).strip()
    res["sentences"].append({"id": s["id"], "text": text, "tokens": toks})
with open(out, "w") as f:
    json.dump(res, f, separators=(",", ":"))
    f.write("\n")
print(f"{len(res['sentences'])} sentences -> {out}")
PY
