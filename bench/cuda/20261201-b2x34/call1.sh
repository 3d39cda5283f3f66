#!/bin/bash
# Issue #34 round 15, branch b2x34, call 1 (one fresh machine): split-k for the 1B shape's 2048-row products. From the
# repository root of the lead's checkout (main eecefd8, whose sm80/sm90a cubins are reused: those modules did not
# change): K=.gpu/b2x34 bash $K/call1.sh, $K holding hark.xz and msltest.test.xz (the branch's, CGO_ENABLED=0 -trimpath
# -ldflags='-s -w' -tags hark_nocubin), ptxfrom.py and ptx.id (round 14's: the branch's kernels.ptx.gz taken out of its
# hark by size and SHA-256) and data.tar.xz (stories260K, its golden file, the SmolLM2 tokenizer). main's own hark did
# not fit the transfer (the checkout is 39 MiB of its 64): the peer is the same binary with split-k off
# (HARK_CUDA_TUNE=MatVecQ8SplitRows=1000000: main's launches, kernels and geometry, plus one constant), alternated.
# The branch's PTX is compiled here by ptxas -O3 for sm_90 while the files are written, so nothing JITs. Order (LIMIT
# skips what is left): tests (normal), two alternated rounds, tests permuted and poisoned, SmolLM2, the graphs-off
# profiles, extras.
set -u
R=$(pwd); K=${K:-.gpu/b2x34}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/b2x34
export PATH=$PATH:/usr/local/cuda/bin
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/shared $W/m $W/cubin $W/v && cd $W
for f in hark msltest.test; do xz -dc $K/$f.xz > $f && chmod +x $f; done
python3 $K/ptxfrom.py hark $W/kernels.ptx.gz $(cat $K/ptx.id) || exit 1
tar -C $W/shared -xJf $K/data.tar.xz
cp $R/cuda/cubin/sm80.sm_90.cubin.xz $R/cuda/cubin/sm90a.sm_90a.cubin.xz $W/cubin/
( gzip -dc kernels.ptx.gz > k.ptx
  SP=; ptxas --help 2>&1 | grep -q -- --split-compile && SP=--split-compile=0
  /usr/bin/time -f "ptxas -O3 sm_90 $SP: %e s" ptxas -arch=sm_90 -O3 $SP k.ptx -o k.cubin ||
    /usr/bin/time -f "ptxas -O3 sm_90: %e s" ptxas -arch=sm_90 -O3 k.ptx -o k.cubin
  xz -T8 -2 -c k.cubin > cubin/kernels.sm_90.cubin.xz
  { echo "kernels $(sha256sum kernels.ptx.gz | cut -d' ' -f1)"; grep -v '^kernels ' $R/cuda/cubin/SOURCE; } > cubin/SOURCE
  ls -la k.cubin cubin; echo "ptxas done at $(el) s" ) > $OUT/ptxas.log 2>&1 &
PT=$!
TOK=$W/shared/llm-kit/tokenizers/smollm2
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  ./hark bench llm --backend cpu --shape llama-1b --dir m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 12
  ./hark bench llm --backend cpu --dir m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 12
  ls -la m; echo "write done at $(el) s"; } > $OUT/write.log 2>&1
B1=$W/m/llama-1b-shape-v1-L16; SM=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf; TG=(-r 3 --pp 0 --tg 128)
hb() { # binary, label, env... -- bench args
  local b=$1 l=$2; shift 2; local e=(); while [ "$1" != -- ]; do e+=("$1"); shift; done; shift
  [ $(el) -lt ${LIMIT:-110} ] || { echo "SKIP $l at $(el) s"; return; }
  local d=$W/cubin
  echo "== $l at $(el) s"
  env HARK_CUDA_CUBIN_DIR=$d "${e[@]}" ./$b bench llm --backend cuda "$@" 2>&1 | grep -E '^\| |^samples|^cuda|preparing|rror|us/launch|ms of kernels'
}
T='^Test(MatVecQ8Activations|RopeAttentionMatVecQ8Activations|RopeAttentionMatVecKernel|MatVecAllTypes|FusedMatVecAllTypes|RepackedWeights|Aligned16Loads|MatVecGELUOut|MatVecTuning|E2EStories)$'
tests() { for m in "$@"; do
  case $m in normal) E="X=1";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
  env $E HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$W/cubin HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 \
    timeout 60 ./msltest.test -test.run "$T" -test.v -test.count=1 > v/msl-$m.v.log 2>&1
  echo "-- msltest $m ($E): exit $? at $(el) s, passed $(grep -c -- '--- PASS' v/msl-$m.v.log)"
  grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)|JIT|compil' v/msl-$m.v.log | head -5
done; }
wait $PT; cat $OUT/ptxas.log
tests normal > $OUT/tests.log 2>&1
OFF=HARK_CUDA_TUNE=MatVecQ8SplitRows=1000000
{ for r in 1 2; do
    hb hark "1B q8_0 split-k off (main's geometry), round $r" $OFF -- --model $B1-q8_0.gguf "${TG[@]}"
    hb hark "1B q8_0 b2x34, round $r" X=1 -- --model $B1-q8_0.gguf "${TG[@]}"
    hb hark "1B q4_0 split-k off (main's geometry), round $r" $OFF -- --model $B1-q4_0.gguf "${TG[@]}"
    hb hark "1B q4_0 b2x34, round $r" X=1 -- --model $B1-q4_0.gguf "${TG[@]}"
  done; } > $OUT/timed.log 2>&1
tests permuted poison >> $OUT/tests.log 2>&1
{ hb hark "SmolLM2 q8_0 b2x34" X=1 -- --model $SM "${TG[@]}"
  hb hark "SmolLM2 q8_0 split-k off" $OFF -- --model $SM "${TG[@]}"
  for f in q8_0 q4_0; do hb hark "1B $f b2x34 profile (graphs off)" HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 -- --model $B1-$f.gguf -r 1 --pp 0 --tg 64; done
  hb hark "1B q8_0 b2x34 4 rows a pass" HARK_CUDA_TUNE=MatVecQ8SplitRows=4 -- --model $B1-q8_0.gguf "${TG[@]}"
  hb hark "1B q8_0 split-k off profile (graphs off)" $OFF HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 -- --model $B1-q8_0.gguf -r 1 --pp 0 --tg 64; } >> $OUT/timed.log 2>&1
echo "== end at $(el) s" >> $OUT/timed.log
(cd v && tar -czf $OUT/test-logs.tgz *.v.log)
tail -2 $OUT/write.log; cat $OUT/tests.log; grep -E '^==|^SKIP|tg128|ms of kernels' $OUT/timed.log | cut -c1-200
