#!/usr/bin/env bash
# Stages the two carry folders for bench/cpu/run.sh (run from the repository root; OUT becomes OUT/w and OUT/l):
#   bench/cpu/prep.sh OUT PEERS KIT_Q8 EXCERPT_FLAC EXPECTED_TXT SMOLLM2_DIR
# PEERS holds peers-w.tar.xz and peers-l.tar.xz (build-peers.sh prepare's trees, trimmed as run.sh says).
# The Hark binary is HEAD built by bench/cpu/build-hark.sh (CGO_ENABLED=0 -trimpath -ldflags="-s -w", the CUDA backend's
# embedded PTX and cubins emptied, the CLI registering only transcribe, quantize and bench: the code those commands run
# is unchanged, and the binary then fits the transfer).
set -eu
OUT=$1; PEERS=$2; KIT=$3; FLAC=$4; EXP=$5; TOK=$6
ROOT=$(pwd); SRC=$(mktemp -d); trap 'rm -rf "$SRC"' EXIT
mkdir -p "$OUT/w" "$OUT/l"
bash bench/cpu/build-hark.sh HEAD "$OUT/l/hark.xz" # the whisper part reuses it on the same machine (see run.sh)
CGO_ENABLED=0 go test -c -trimpath -ldflags="-s -w" -o "$SRC/cpu.test" ./engine/cpu
xz -T2 -9e -c "$SRC/cpu.test" > "$OUT/l/cpu.test.xz"
[ -f "$OUT/w/model.xz" ] || { python3 bench/cpu/q8split.py split "$KIT" "$SRC/q8s.bin" && xz -T2 -9e -c "$SRC/q8s.bin" > "$OUT/w/model.xz"; }
cp "$FLAC" "$OUT/w/excerpt.flac"; cp "$EXP" "$OUT/w/excerpt-expected.txt"; cp "$PEERS/peers-w.tar.xz" "$OUT/w/"
cp "$PEERS/peers-l.tar.xz" "$PEERS/peers-w.tar.xz" "$OUT/l/"; tar -C "$(dirname "$TOK")" -cJf "$OUT/l/smollm2.tar.xz" "$(basename "$TOK")"
for d in w l; do cp bench/cpu/run.sh bench/cpu/summarize.py bench/cpu/q8split.py ../shared/tools/peers/build-peers.sh "$OUT/$d/"; done
git log --oneline -1 | tee "$OUT/w/commit.txt" "$OUT/l/commit.txt"
du -sb "$OUT/w" "$OUT/l"
