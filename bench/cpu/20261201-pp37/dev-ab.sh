#!/bin/bash
# Issue #37 round 2 (branch pp37) on the 2-core dev machine: pp512 of the SmolLM2-135M-shaped q8_0 file at 2
# threads, main (base), this branch (new) and llama.cpp's llama-bench alternating, ROUNDS rounds of -r 3, with each
# run's user CPU time. From the repository root:
#   bench/cpu/20261201-pp37/dev-ab.sh BASE_HARK NEW_HARK LLAMA_BENCH MODEL ROUNDS > LOG
# (the harks: `CGO_ENABLED=0 go build -trimpath` at 78e82cd and at the branch; llama-bench:
# ../shared/tools/peers/build-peers.sh build SRC PEERS --cpu llama on this machine; MODEL: `hark bench llm --dir D
# --type q8_0` writes it).
set -u
B=$1; N=$2; L=$3; M=$4; R=${5:-5}; T=2
echo "== dev machine"; date -u; nproc; lscpu | grep -E 'Model name|Hypervisor'; cat /proc/loadavg
sha256sum "$B" "$N" "$L" | sed 's|/.*/||'
ut() { /usr/bin/time -f "user %U s" "$@"; }
for r in $(seq "$R"); do
  for h in base new; do
    H=$B; [ $h = new ] && H=$N
    echo "round $r hark-$h: $(ut "$H" bench llm --backend cpu --model "$M" -t $T -r 3 --pp 512 --tg 0 2>&1 | grep -E '^samples|^user' | tr '\n' '|')"
  done
  echo "round $r llama-bench: $(ut "$L" -m "$M" -t $T -r 3 -p 512 -n 0 -o json 2>&1 | python3 -c '
import json,sys
s=sys.stdin.read(); i=s.index("["); j=s.rindex("]")+1
for r in json.loads(s[i:j]): print("pp512 mean %.2f samples t/s: %s"%(r["avg_ts"]," ".join("%.2f"%x for x in r["samples_ts"])),end="|")
print(s[j:].strip())')"
done
echo "== done"; date -u; cat /proc/loadavg
