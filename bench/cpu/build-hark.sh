#!/usr/bin/env bash
# Builds Hark at a commit for the CPU benchmarks (CGO_ENABLED=0 -trimpath -ldflags="-s -w", the CUDA backend's
# embedded PTX and cubins emptied, the CLI trimmed to transcribe, quantize and bench) and writes it xz-compressed:
#   bench/cpu/build-hark.sh COMMIT OUT.xz      (run from the repository root; bench/cpu/prep.sh and the dated
#   folders' scripts call it)
set -eu
C=$1; OUTXZ=$2; SRC=$(mktemp -d); trap 'rm -rf "$SRC"' EXIT
git archive "$C" | tar -x -C "$SRC"
for f in "$SRC"/cuda/*.ptx.gz; do gzip -n -c </dev/null >"$f"; done; rm -f "$SRC"/cuda/cubin/*.cubin "$SRC"/cuda/cubin/*.cubin.xz
python3 - "$SRC/cli/root.go" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
for c in ["newStreamCmd(nil),", "newChatCmd(nil),", "newGenerateCmd(nil),", "newServeCmd(nil),", "newUICmd(nil),",
          "newDictateCmd(nil),", "newMeetingCmd(nil),", "newModelsCmd(),", "newInspectCmd(nil),", "newTokenizeCmd(nil),"]:
    assert "\t\t" + c + "\n" in s, c
    s = s.replace("\t\t" + c + "\n", "")
open(p, "w").write(s)
PY
(cd "$SRC" && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$SRC/hark" .)
xz -T2 -9e -c "$SRC/hark" > "$OUTXZ"
sha256sum "$SRC/hark" | sed "s|$SRC/||"
