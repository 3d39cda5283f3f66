#!/usr/bin/env bash
# Issue #37's table from one run (c37s31c): stages the kit for call.sh in two carry folders, from the repository root
# of a checkout with Go (GOTOOLCHAIN=go1.26.8+auto), xz, ffmpeg and python3:
#   bash bench/cpu/20261203-c37s31c/prep.sh [COMMIT] [OUT]      (COMMIT default HEAD, OUT default .gpu/c37table)
# Needs the peers' git directories, fetched first with the session's `fetch` tool (github:ggml-org/whisper.cpp and
# github:Raudbjorn/ggml-llama.cpp: /work/.mirror/OWNER+NAME/repo; WGIT and LGIT override), and /work/shared (SHARED
# overrides): the kit's ggml-kit-tiny.en-q8_0.bin, the long-form file, its reference text, the SmolLM2 tokenizer.
# OUT/a (the put call, ~24 MB): model.xz (the kit q8_0 file reordered by bench/cpu/q8split.py split, xz -9e),
#        peers-src.tar.xz (build-peers.sh prepare's whisper/ and llama/ trees, less what a CPU build on x86-64 never
#        reads: the other ggml backends and CPU architectures, whisper.cpp's examples for other platforms), build-peers.sh.
# OUT/b (the run call, ~16 MB): hark.xz (bench/cpu/build-hark.sh COMMIT), cpu.test.xz (engine/cpu's test binary at
#        COMMIT, CGO_ENABLED=0 -trimpath -ldflags='-s -w', for TestPackedModelMemory), excerpt.flac (the long-form file
#        cut at 204.2 s: ffmpeg -t 204.2 -c:a flac, sha256 1968d4f5... as rounds 4-7), excerpt-expected.txt (the kit
#        reference's text of the segments starting before 204.2 s, 2,838 characters collapsed), smollm2.tar.xz,
#        table.py. Both hold call.sh. The tree that travels leaves ~24 MiB for a carry, and the model alone is 20 MB,
#        so the kit is two folders and the measurement two calls on one warm machine (call.sh's header).
set -eu
C=${1:-HEAD}; OUT=${2:-.gpu/c37table}; SHARED=${SHARED:-/work/shared}
WGIT=${WGIT:-/work/.mirror/ggml-org+whisper.cpp/repo}; LGIT=${LGIT:-/work/.mirror/Raudbjorn+ggml-llama.cpp/repo}
HERE=bench/cpu/20261203-c37s31c
KIT=$SHARED/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin; LONG=$SHARED/audio/ljspeech-longform-LJ001-0021-0076.wav
REF=$SHARED/whisper-kit/reference/longform/longform-nowords.json; TOK=$SHARED/llm-kit/tokenizers/smollm2
for f in "$KIT" "$LONG" "$REF" "$TOK/tokenizer.json"; do [ -e "$f" ] || { echo "missing $f"; exit 1; }; done
for g in "$WGIT" "$LGIT"; do git --git-dir="$g" rev-parse -q --verify HEAD >/dev/null || { echo "no git directory at $g: fetch it first"; exit 1; }; done
git rev-parse -q --verify "$C^{commit}" >/dev/null || { echo "no commit $C"; exit 1; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
rm -rf "$OUT/a" "$OUT/b"; mkdir -p "$OUT/a" "$OUT/b"
# b: Hark at COMMIT and its engine/cpu test binary
bash bench/cpu/build-hark.sh "$C" "$OUT/b/hark.xz"
git archive "$C" | tar -x -C "$T" --one-top-level=src
(cd "$T/src" && CGO_ENABLED=0 go test -c -trimpath -ldflags="-s -w" -o "$T/cpu.test" ./engine/cpu)
xz -T2 -9e -c "$T/cpu.test" > "$OUT/b/cpu.test.xz"
ffmpeg -loglevel error -y -i "$LONG" -t 204.2 -c:a flac "$OUT/b/excerpt.flac"
python3 - "$REF" "$OUT/b/excerpt-expected.txt" <<'PY'
import json,sys
d=json.load(open(sys.argv[1])); t=''.join(s['text'] for s in d['segments'] if s['start']<204.2)
open(sys.argv[2],'w').write(t); n=len(' '.join(t.split())); assert n==2838, n
PY
tar -C "$(dirname "$TOK")" -cJf "$OUT/b/smollm2.tar.xz" "$(basename "$TOK")"
cp $HERE/table.py "$OUT/b/"
# a: the model and the peers' sources
python3 bench/cpu/q8split.py split "$KIT" "$T/q8s.bin"; xz -T2 -9e -c "$T/q8s.bin" > "$OUT/a/model.xz"; rm "$T/q8s.bin"
bash "$SHARED/tools/peers/build-peers.sh" prepare "$WGIT" "$LGIT" "$T/p" 2>&1 | grep -v '^error: invalid object' || true
for g in "$T/p/whisper/ggml" "$T/p/llama/ggml"; do
  for d in "$g"/src/ggml-*/; do case $(basename "$d") in ggml-cpu|ggml-blas) ;; *) rm -rf "$d" ;; esac; done
  for d in "$g"/src/ggml-cpu/arch/*/; do [ "$(basename "$d")" = x86 ] || rm -rf "$d"; done
done
for d in "$T/p/whisper/examples"/*/; do
  case $(basename "$d") in cli|bench|server|quantize|vad-speech-segments|parakeet-cli|parakeet-quantize|deprecation-warning) ;; *) rm -rf "$d" ;; esac
done
rm -f "$T/p/whisper/examples"/*.wasm "$T/p/whisper/examples"/*.js "$T/p/whisper/examples"/*.sh "$T/p/whisper/examples"/*.py
tar -C "$T/p" --sort=name -cf - whisper llama | xz -T2 -9e > "$OUT/a/peers-src.tar.xz"
cp "$SHARED/tools/peers/build-peers.sh" "$OUT/a/"
for d in a b; do cp $HERE/call.sh "$OUT/$d/"; echo "$(git rev-parse "$C") $(git log -1 --format=%s "$C" | cut -c1-80)" > "$OUT/$d/commit.txt"; done
echo "whisper.cpp $(git --git-dir="$WGIT" rev-parse --short=9 HEAD), llama.cpp fork $(git --git-dir="$LGIT" rev-parse --short=9 HEAD)" | tee -a "$OUT/a/commit.txt"
sha256sum "$OUT"/a/* "$OUT"/b/* | sed "s|$OUT/||" > "$T/sums"; cp "$T/sums" "$OUT/b/SHA256SUMS"
du -sb "$OUT/a" "$OUT/b"
tree=$(git ls-files -z | xargs -0 du -cb | tail -1 | cut -f1) # what travels with every call besides the carry
for d in a b; do s=$(du -sb "$OUT/$d" | cut -f1); [ "$s" -lt $((24 * 1024 * 1024)) ] || { echo "$OUT/$d is $s bytes: over 24 MiB"; exit 1; }
  [ $((s + tree)) -lt $((64 * 1024 * 1024)) ] || { echo "$OUT/$d ($s) and the tree ($tree) pass the 64 MiB a call carries"; exit 1; }; done
echo "tree $tree bytes; each folder with it stays under 64 MiB"
