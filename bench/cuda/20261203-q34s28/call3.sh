#!/bin/bash
# Issue #34 round 19, call 3 (helper q34s28; prepared, NOT run: the helper's device cap was spent): the attention
# writing Wo's x' (Tuning.AttnQ8Out=2: rope_attention_f16_a16_q8o / rope_attention_group_f16_a16_q8o, then
# rope_attention_mat_vec_o_<type>_q8p) on the branch's PTX, JIT-compiled (no cubins: the binary is -tags
# hark_nocubin and no HARK_CUDA_CUBIN_DIR is set, ~75 s the first time, cached after). One binary: AttnQ8Out=1 (the
# default, round 19's MatVecQ8GroupsPre=4) against AttnQ8Out=2. ~190 s of script. From the lead's checkout root:
# K=.gpu/q34s28/c3 bash $K/call3.sh, $K holding hark.xz, msltest.test.xz (the branch, -tags hark_nocubin) and
# data.tar.xz.
set -u
R=$(pwd); K=${K:-.gpu/q34s28/c3}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w/q34s28c
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v
for f in hark msltest.test; do xz -T4 -dc $K/$f.xz > $W/$f && chmod +x $W/$f; done
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared CUDA_CACHE_MAXSIZE=4294967296; unset HARK_CUDA_CUBIN_DIR
cd $W
TOK=$W/shared/llm-kit/tokenizers/smollm2; B1=$W/m/llama-1b-shape-v1-L16
# the JIT (the driver's cache then serves every later process) beside the q4_0 file's writing
./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
(HARK_CUDA_STARTUP=1 ./hark bench llm --backend cuda --model $B1-q8_0.gguf -r 1 --pp 0 --tg 8 > $OUT/jit.log 2>&1; echo "JIT done at $(el) s" >> $OUT/jit.log) &
./hark bench llm --backend cpu --shape llama-1b --dir $W/m --type q4_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > /dev/null 2>&1
wait; echo "files at $(el) s" >> $OUT/jit.log
MT='^Test(RopeAttentionMatVecQ8Activations|RopeAttentionMatVecKernel|RopeAttentionKernel|MatVecQ8Activations|MatVecQ8PreQuantizedSame|E2EStories)$'
{ for m in normal permuted poison; do
    case $m in normal) E="X=1";; permuted) E="HARK_CUDA_PERMUTE=20261203";; poison) E="HARK_CUDA_POISON=1";; esac
    for f in q8_0 q4_0; do
      echo "$m 1B $f md5 q8o=1 $(env $E ./hark generate --backend cuda --model $B1-$f.gguf --temp 0 --ignore-eos -n 64 'The quick brown fox' 2>/dev/null | md5sum | cut -c1-12) q8o=2 $(env $E HARK_CUDA_TUNE=AttnQ8Out=2 ./hark generate --backend cuda --model $B1-$f.gguf --temp 0 --ignore-eos -n 64 'The quick brown fox' 2>/dev/null | md5sum | cut -c1-12) at $(el) s"
    done
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 120 ./msltest.test -test.run "$MT" -test.v -test.count=1 > v/msl-$m.v.log 2>&1
    echo "-- msltest $m ($E): exit $? at $(el) s, passed $(grep -c -- '--- PASS' v/msl-$m.v.log)"
    grep -E '^(\s*--- (FAIL|SKIP)|FAIL|panic)|JIT|cubin' v/msl-$m.v.log | head -8
  done; } > $OUT/tests.log 2>&1
(cd v && tar -cf - *.v.log | xz -9 > $OUT/test-logs.tar.xz)
{ for r in 1 2 3 4; do for t in q8_0 q4_0; do L="1 2"; [ $((r % 2)) = 0 ] && L="2 1"; for c in $L; do
    [ $(el) -lt 420 ] || { echo "SKIP at $(el) s"; break 3; }
    echo "== 1B $t q8o=$c r$r at $(el) s"
    HARK_CUDA_TUNE=AttnQ8Out=$c ./hark bench llm --backend cuda --model $B1-$t.gguf -r 5 --pp 0 --tg 128 2>&1 | grep -E '^\| .*tg|^samples|rror'
  done; done; done; echo "bench end at $(el) s"; } > $OUT/bench.log 2>&1
M='regex:dram__throughput.avg.pct_of_peak_sustained_elapsed|gpu__time_duration.sum|launch__registers_per_thread|sm__warps_active.avg.pct_of_peak_sustained_active|launch__grid_size'
{ for c in 1 2; do
    [ $(el) -lt 470 ] || { echo "SKIP ncu at $(el) s"; break; }
    echo "== ncu AttnQ8Out=$c at $(el) s"
    HARK_CUDA_TUNE=AttnQ8Out=$c HARK_CUDA_GRAPHS=0 timeout 40 ncu --clock-control none --metrics "$M" -k 'regex:rope_attention' -s 40 -c 4 \
      ./hark bench llm --backend cuda --model $B1-q8_0.gguf -r 1 --pp 0 --tg 4 > v/ncu.log 2>&1; echo "exit $?"
    grep -E '  hark_|gpu__time_duration.sum us|dram__|registers|grid_size|warps_active' v/ncu.log | sed 's/  */ /g' | cut -c1-110
  done; echo "== end at $(el) s"; } > $OUT/ncu.log 2>&1
awk '/^== /{n=$2" "$3" "$4} /tg128 \|/{split($0,a,"|"); split(a[8],b,"±"); c[n]++; s[n]+=b[1]} END{for(k in c) printf "%s %d %.1f\n", k, c[k], s[k]/c[k]}' $OUT/bench.log | sort > $OUT/summary.txt
grep -E 'ready|JIT|tg8|rror|at ' $OUT/jit.log; cat $OUT/tests.log; echo "model type q8o rounds mean"; cat $OUT/summary.txt; grep -c hark_ $OUT/ncu.log
