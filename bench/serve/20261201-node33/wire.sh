#!/usr/bin/env bash
# What hark serve writes to a streaming client a token (node33): strace of the
# server's write system calls during one streamed chat of 128 tokens through
# the official client (stream-speed.mjs, run 0 only), then the writes to the
# client's socket counted, their sizes, and their gaps.
# Usage: wire.sh HARK MODEL.gguf > log   (strace must be installed)
set -euo pipefail
hark=$(realpath "$1"); f=$(realpath "$2")
root=$(cd "$(dirname "$0")/../../.." && pwd)
dir=$(mktemp -d); mkdir "$dir/models"; ln -s "$f" "$dir/models/smollm2-shape-q8_0.gguf"
"$hark" serve --models-dir "$dir/models" --backend cpu --threads 2 --addr 127.0.0.1:18144 > "$dir/serve.log" 2>&1 & srv=$!
trap 'kill $srv 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 100); do curl -sf http://127.0.0.1:18144/v1/models > /dev/null && break; sleep 0.2; done
strace -f -tt -e trace=write,writev,sendto,sendmsg -o "$dir/strace.txt" -p $srv & st=$!
sleep 1
node "$root/serve/testdata/openai-client/stream-speed.mjs" http://127.0.0.1:18144 smollm2-shape-q8_0 0 128 | grep '^run'
sleep 0.5; kill -INT $st; wait $st 2>/dev/null || true
# the client's socket: the fd of the largest number of writes
fd=$(grep -oE '(write|writev|sendto|sendmsg)\([0-9]+,' "$dir/strace.txt" | sort | uniq -c | sort -rn | head -1 | grep -oE '[0-9]+,' | tr -d ,)
echo "== system calls that write, by kind and fd (the client's socket: fd $fd)"
grep -oE '(write|writev|sendto|sendmsg)\([0-9]+,' "$dir/strace.txt" | sort | uniq -c | sort -rn
echo "== writes to fd $fd: count, then the first 3 and last 5 (time, bytes)"
grep -E "(write|writev|sendto|sendmsg)\($fd," "$dir/strace.txt" | wc -l
grep -E "(write|writev|sendto|sendmsg)\($fd," "$dir/strace.txt" | awk '{print $2, $NF}' | sed -n '1,3p'
grep -E "(write|writev|sendto|sendmsg)\($fd," "$dir/strace.txt" | awk '{print $2, $NF}' | tail -5
echo "== gaps between consecutive writes to fd $fd (ms): under 1, 1-5, 5 and over"
grep -E "(write|writev|sendto|sendmsg)\($fd," "$dir/strace.txt" | awk '{split($2,a,":"); t=a[1]*3600+a[2]*60+a[3]; if (p) print (t-p)*1000; p=t}' |
	awk '{ if ($1<1) a++; else if ($1<5) b++; else c++ } END {print a+0, b+0, c+0}'
echo "== the first event's bytes on the wire (curl, one token)"
curl -s -N http://127.0.0.1:18144/v1/chat/completions -H 'content-type: application/json' \
	-d '{"model":"smollm2-shape-q8_0","messages":[{"role":"user","content":"Once upon a time"}],"stream":true,"max_tokens":1,"temperature":0.7,"seed":1}' | head -c 600
