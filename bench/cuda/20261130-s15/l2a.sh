#!/bin/bash
# Lead's second call of the fifteenth session (H200): issue #34's 1B row. llama.cpp (the fork on whisper.cpp's ggml,
# build-peers.sh --cuda llama) built in this call (l1.sh's build failed: the source tarball unpacks into whisper/ and
# llama/ at its root), then Hark (main fe29910 with fold34 merged again, the same hark as l1.sh) folded and with
# HARK_CUDA_TUNE=AttnFoldO=1, and llama-bench, alternating on the same Llama-3.2-1B-shaped q8_0 and q4_0 files, and
# the SmolLM2 q8_0 file as a check against the anchor. $K holds hark.xz, data.tar.xz, peers-src.tar.xz, build-peers.sh.
set -u
K=${K:-.gpu/l2a}; K=$(cd "$K" && pwd); R=$(cd "$(dirname "$0")/../../.." && pwd); [ -n "${K2:-}" ] && K2=$(cd "$K2" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/src && cd $W
export PATH=$PATH:/usr/local/cuda/bin
tar -C $W/src -xJf $K/peers-src.tar.xz
( bash $K/build-peers.sh build $W/src $W/pl --cuda llama > $OUT/build.log 2>&1; echo "build exit $? at $(el) s" >> $OUT/build.log ) &
B=$!
xz -dc $K/hark.xz > hark && chmod +x hark
tar -C $W/shared -xJf $K/data.tar.xz
TOK=$W/shared/llm-kit/tokenizers/smollm2
{ nproc; ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 4
  ./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 4; ls -la $W/m; } > $OUT/write.log 2>&1
wait $B; tail -2 $OUT/build.log
LB=$W/pl/bin/llama-bench; M8=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf; B1=$W/m/llama-1b-shape-v1-L16
{ echo "== timed at $(el) s; $(cat /proc/loadavg)"; nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  for r in 1 2; do for f in q8_0 q4_0; do
    [ $(el) -lt 520 ] || { echo "SKIP $f round $r at $(el) s"; continue; }
    echo "== 1B $f llama-bench, round $r at $(el) s"; $LB -m $B1-$f.gguf -ngl 99 -r 3 -p 512 -n 128 2>&1 | grep -E '^\|'
    echo "== 1B $f hark folded, round $r at $(el) s"; ./hark bench llm --backend cuda --model $B1-$f.gguf -r 3 --pp 0 --tg 128 2>&1 | grep -vE '^  '
    echo "== 1B $f hark AttnFoldO=1, round $r at $(el) s"; HARK_CUDA_TUNE=AttnFoldO=1 ./hark bench llm --backend cuda --model $B1-$f.gguf -r 3 --pp 0 --tg 128 2>&1 | grep -vE '^  '
  done; done
  echo "== SmolLM2 q8_0 llama-bench at $(el) s"; $LB -m $M8 -ngl 99 -r 3 -p 512 -n 128 2>&1 | grep -E '^\|'
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
[ -x $LB ] && { ldd $LB > $OUT/llama-bench-ldd.txt 2>&1; ls -la $LB >> $OUT/llama-bench-ldd.txt; xz -T16 -6 -c $LB > $OUT/llama-bench-cuda.xz; ls -la $OUT/llama-bench-cuda.xz >> $OUT/llama-bench-ldd.txt; }
cat $OUT/write.log | tail -4; cat $OUT/timed.log $OUT/llama-bench-ldd.txt
# then issue #37's dec37 measurement on the quiet CPU (after the build), if its folder came along
[ -d ${K2:-/nonexistent} ] && K=$K2 bash $R/bench/cpu/20261130-s15/dec37.sh
