#!/bin/bash
# Issue #38, nineteenth session, branch grid38, call 2 of the last pair (call3.sh follows at once on the same warm
# machine; main's and the branch's binaries together do not fit the 64 MB a call carries beside the checkout): the two
# hark binaries, main 3d3a2c5's (base/) and the branch's (new/: the step's draws in one Sample dispatch,
# attention_paged's CUDA entry bounded at 256 threads). Writes the SmolLM2-shape q8_0 file (kept in /w/grid38/m for
# call3.sh); the branch's PTX differs from the checkout's cubins, so its first process JIT-compiles it (~60 s: a
# one-token hark bench llm --backend cuda, in the background, which leaves the driver's cache to every later process of
# it, call3's too) while main's server takes its first round; then hark serve --backend cuda --batch-gpu --ctx 8192
# against hark bench serve --concurrency 1,16,1,16 alternates new, base, new. From the checkout's root with $K holding
# base-hark.xz, hark.xz, common.sh and tok.tar.xz (the smollm2 tokenizer):   K=.gpu/grid38a bash .gpu/grid38a/call2.sh
set -u
K=${K:-.gpu/grid38a}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD
. $K/common.sh
mkdir -p $OUT $W/shared $W/m $W/models $W/base $W/new $W/v && cd $W
xz -T4 -dc $K/base-hark.xz > base/hark; xz -T4 -dc $K/hark.xz > new/hark; chmod +x base/hark new/hark
tar -C $W/shared -xJf $K/tok.tar.xz
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
TOK=$W/shared/llm-kit/tokenizers/smollm2
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  [ -f $F ] || base/hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16; echo "written at $(el) s"; } > $OUT/write.log 2>&1
ln -sf $F $W/models/smollm2-shape-q8_0.gguf
( new/hark bench llm --backend cuda --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 1 -r 1 > $W/v/jit.log 2>&1; echo "JIT run exit $? at $(el) s" >> $W/v/jit.log ) &
JP=$!
{ serve base 18101; } > $OUT/serve.log 2>&1
wait $JP; tail -3 $W/v/jit.log >> $OUT/write.log
{ serve new 18102; serve base 18103; serve new 18104; echo "== done at $(el) s"; } >> $OUT/serve.log 2>&1
(cd $W/v && tar -czf $OUT/serve-logs.tgz hserve-*.log jit.log && rm hserve-*.log)
cat $OUT/write.log $OUT/serve.log
