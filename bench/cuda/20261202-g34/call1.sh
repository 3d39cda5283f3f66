#!/bin/bash
# Issue #34 round 16, branch g34, call 1: the double-buffered 8-bit-activation mat-vec body (two steps of weight
# loads in flight a lane) against main on the Llama-3.2-1B shape, alternated; knobs; graphs-off profiles; Nsight
# Compute on the products; msltest through CUDA in three modes. From the lead's checkout root (main):
# K=.gpu/g34/c1 bash $K/call1.sh, $K holding hark.xz and msltest.test.xz (g34, -tags hark_nocubin), ptxpdl.xz,
# ptx.id (size and SHA-256 of g34's kernels.ptx.gz, which ../20261201-b1x34/ptxfrom.py takes out of hark) and
# data.tar.xz (stories260K, its golden file, the SmolLM2 tokenizer). One binary for both sides (main's own did not
# fit the transfer): g34's base module is ptxas -O3 sm_90 of its PDL form here ($W/cubin); main's side is the same
# binary reading main's committed sm_90 cubin (the checkout's cuda/cubin, itself ptxas -O3 of main's PDL form), in
# a folder whose SOURCE names g34's PTX hash ($W/mainc): the kernels' entries and constants are the same, only
# matvec_q8.metal's body differs, and both sides launch with PDL.
set -u
R=$(pwd); K=${K:-.gpu/g34/c1}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/g34
export PATH=$PATH:/usr/local/cuda/bin
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/cubin $W/mainc $W/v && cd $W
for f in hark msltest.test ptxpdl; do xz -dc $K/$f.xz > $f && chmod +x $f; done
python3 $R/bench/cuda/20261201-b1x34/ptxfrom.py hark $W/kernels.ptx.gz $(cat $K/ptx.id) || exit 1
tar -C $W/shared -xJf $K/data.tar.xz
H=$(sha256sum kernels.ptx.gz | cut -d' ' -f1)
for d in cubin mainc; do cp $R/cuda/cubin/sm80.sm_90.cubin.xz $R/cuda/cubin/sm90a.sm_90a.cubin.xz $d/
  { echo "kernels $H pdl"; grep -v '^kernels ' $R/cuda/cubin/SOURCE; } > $d/SOURCE; done
cp $R/cuda/cubin/kernels.sm_90.cubin.xz mainc/
( gzip -dc kernels.ptx.gz | ./ptxpdl > k.pdl.ptx
  SP=; ptxas --help 2>&1 | grep -q -- --split-compile && SP=--split-compile=0
  /usr/bin/time -f "ptxas -O3 sm_90 $SP: %e s" ptxas -arch=sm_90 -O3 $SP k.pdl.ptx -o k.cubin
  xz -T8 -2 -c k.cubin > cubin/kernels.sm_90.cubin.xz
  echo "g34:"; cuobjdump --dump-resource-usage k.cubin 2>&1 | grep -A1 -E 'Function hark_(silu_mul_mat_vec|rms_norm_mat_vec|rope_attention_mat_vec_o)_q8_0_q8x_rp\b'
  xz -dc mainc/kernels.sm_90.cubin.xz > main.cubin
  echo "main:"; cuobjdump --dump-resource-usage main.cubin 2>&1 | grep -A1 -E 'Function hark_(silu_mul_mat_vec|rms_norm_mat_vec|rope_attention_mat_vec_o)_q8_0_q8x_rp\b'
  cat cubin/SOURCE; echo "ptxas done at $(el) s" ) > $OUT/ptxas.log 2>&1 &
PT=$!
TOK=$W/shared/llm-kit/tokenizers/smollm2
{ nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem --format=csv,noheader
  ./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 14
  ls -la $W/m; echo "write done at $(el) s"; } > $OUT/write.log 2>&1
wait $PT; cat $OUT/ptxas.log
B1=$W/m/llama-1b-shape-v1-L16
hb() { # cubin-folder label env... -- bench args
  local d=$W/$1 l=$2; shift 2; local e=(); while [ "$1" != -- ]; do e+=("$1"); shift; done; shift
  [ $(el) -lt ${LIMIT:-300} ] || { echo "SKIP $l at $(el) s"; return; }
  echo "== $l at $(el) s"
  env HARK_CUDA_CUBIN_DIR=$d "${e[@]}" ./hark bench llm --backend cuda "$@" 2>&1 | grep -E '^\| |^samples|^cuda|preparing|rror|us/launch|ms of kernels'
}
T=(-r 3 --pp 0 --tg 128)
{ for r in 1 2; do
    hb mainc "1B q8_0 main, round $r" X=1 -- --model $B1-q8_0.gguf "${T[@]}"
    hb cubin "1B q8_0 g34, round $r" X=1 -- --model $B1-q8_0.gguf "${T[@]}"
    hb mainc "1B q4_0 main, round $r" X=1 -- --model $B1-q4_0.gguf "${T[@]}"
    hb cubin "1B q4_0 g34, round $r" X=1 -- --model $B1-q4_0.gguf "${T[@]}"
  done
  for v in MatVecQ8Rows=1 MatVecQ8Rows=4 MatVecQ8Groups=1 MatVecQ8Groups=3; do
    hb cubin "1B q8_0 g34 $v" HARK_CUDA_TUNE=$v -- --model $B1-q8_0.gguf "${T[@]}"
    hb cubin "1B q4_0 g34 $v" HARK_CUDA_TUNE=$v -- --model $B1-q4_0.gguf "${T[@]}"
  done; } > $OUT/timed.log 2>&1
{ for d in mainc cubin; do for f in q8_0 q4_0; do
    hb $d "1B $f $d profile (graphs off)" HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 -- --model $B1-$f.gguf -r 1 --pp 0 --tg 64
  done; done; } > $OUT/profile.log 2>&1
MT='^Test(MatVecQ8Activations|RopeAttentionMatVecQ8Activations|RopeAttentionMatVecKernel|MatVecAllTypes|FusedMatVecAllTypes|RepackedWeights|Aligned16Loads|MatVecGELUOut|MatVecTuning|E2EStories)$'
{ for m in normal permuted poison; do
    case $m in normal) E="X=1";; permuted) E="HARK_CUDA_PERMUTE=20261201";; poison) E="HARK_CUDA_POISON=1";; esac
    env $E HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$W/cubin HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 \
      timeout 90 ./msltest.test -test.run "$MT" -test.v -test.count=1 > v/msl-$m.v.log 2>&1
    echo "-- msltest $m ($E): exit $? at $(el) s, passed $(grep -c -- '--- PASS' v/msl-$m.v.log)"
    grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)|JIT|compil' v/msl-$m.v.log | head -5
  done; } > $OUT/tests.log 2>&1
(cd v && tar -czf $OUT/test-logs.tgz *.v.log)
# Nsight Compute, q8_0: layer 10's QKV, Wo, gate|up and down launches of the first token, each side
NCU="ncu --clock-control none --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis"
{ for d in mainc cubin; do
    [ $(el) -lt 430 ] || break
    echo "== ncu $d at $(el) s"
    HARK_CUDA_CUBIN_DIR=$W/$d HARK_CUDA_GRAPHS=0 timeout 80 $NCU -k 'regex:(silu_mul_mat_vec|rms_norm_mat_vec|rope_attention_mat_vec_o)_q8_0_q8x' \
      -s 40 -c 4 ./hark bench llm --backend cuda --model $B1-q8_0.gguf -r 1 --pp 0 --tg 8 > ncu-$d.log 2>&1
    echo "exit $?"
    grep -E 'hark_|Duration|DRAM Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|L2 Hit|Mem Busy|Max Bandwidth|==PROF==|rror' ncu-$d.log | cut -c1-150
  done; echo "== end at $(el) s"; } > $OUT/ncu.log 2>&1
for d in mainc cubin; do [ -f ncu-$d.log ] && xz -c ncu-$d.log > $OUT/ncu-$d.log.xz; done
tail -1 $OUT/write.log; cat $OUT/tests.log; grep -E '^==|^SKIP|tg128|ms of kernels' $OUT/timed.log $OUT/profile.log | cut -c1-180; grep -E '==|Duration|DRAM Through|Registers|Achieved|exit' $OUT/ncu.log | head -50
