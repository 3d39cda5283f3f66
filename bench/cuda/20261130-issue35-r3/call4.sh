#!/bin/bash
# Fourth GPU call for issue 35, third round: attention_mma_tc's 4-wide f32 tile loads re-blocked after call 3
# (two quads a thread at a time, a warp over 8 keys × 4 quads). The tensor-core and end-to-end msltest tests in
# normal, permuted-block and NaN-poisoned runs and with HARK_CUDA_NATIVE=0, the encoder's timings and profile,
# pp512, and Nsight Compute on the encoder's attention. Run from a folder holding hark.xz, msltest.test.xz,
# data.tar.xz, wq8.xz.
set -u
K=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared/whisper-kit/models && cd /w
for b in hark msltest.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
tar -C /w/shared -xJf $K/data.tar.xz
xz -dc $K/wq8.xz > shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin
export HARK_TESTDATA=/w/shared PATH=$PATH:/usr/local/cuda/bin
TOK=/w/shared/llm-kit/tokenizers/smollm2
( ./hark bench llm --backend cpu --dir /w/m --type q8_0,q4_0,f16 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8; ls -la /w/m ) > $OUT/write.log 2>&1 &
W=$!
CH='Conv1DTensorCores|MatMulTensorCores|AttentionTensorCores|AttentionKernel|E2EStories|E2EWhisperJFK'
{ nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.sm,clocks.mem --format=csv
  for mode in normal permuted poison nonative; do
    case $mode in normal) E="";; permuted) E="HARK_CUDA_PERMUTE=20261130";; poison) E="HARK_CUDA_POISON=1";; nonative) E="HARK_CUDA_NATIVE=0";; esac
    T=MatMulMMA=16,AttnMMA=1; [ $mode = nonative ] && T=
    echo "== msltest $mode ($E, HARK_MSLTEST_TUNE=$T) at $(el) s"
    env $E HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_TUNE=$T timeout 150 ./msltest.test -test.run "^Test($CH)\$" -test.v -test.count=1 > $OUT/msltest-$mode.v.log 2>&1; echo "exit $?"
    grep -E '^(--- |ok|FAIL|PASS|panic)|Error|expected|actual|attention_mma_tc_f32 ' $OUT/msltest-$mode.v.log | head -30
  done; echo "== tests done at $(el) s"; } > $OUT/tests.log 2>&1
(cd $OUT && tar -czf msltest-logs.tgz msltest-*.v.log && rm msltest-*.v.log)
wait $W
M=/w/m/smollm2-135m-shape-v1-L30
{ echo "== whisper at $(el) s"; ./hark bench whisper --backend cuda -r 5 2>&1
  echo "== whisper again at $(el) s"; ./hark bench whisper --backend cuda -r 5 2>&1
  echo "== whisper profile at $(el) s"; HARK_CUDA_PROFILE=1 ./hark bench whisper --backend cuda -r 2 2>&1
  for f in q8_0 q4_0 f16; do echo "== hark $f pp512 at $(el) s"; ./hark bench llm --backend cuda --model $M-$f.gguf -r 5 --pp 512 --tg 0 2>&1; done
  echo "== done at $(el) s"; } > $OUT/timed.log 2>&1
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
{ echo "== ncu ($NCU) at $(el) s"; HARK_CUDA_GRAPHS=0 timeout 90 $NCU --clock-control none -k regex:'^hark_attention_mma_tc_f32$' --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
    ./hark bench whisper --backend cuda -r 1 2>&1; echo "exit $? at $(el) s"; } > $OUT/ncu.log 2>&1
cat $OUT/tests.log | grep -vE 'attention_mma_tc_f32 .*aligned=false'
grep -vE '^  (rope|embed|mat_vec|argmax|copy|softmax|silu|rms)' $OUT/timed.log | grep -vE '^(samples|load average|\| model|\| ---)' | tail -40
grep -E '^  hark_|Duration|Registers Per|Spilling Requests  |Achieved Occupancy|Issued Warp|Warp Cycles Per Issued|exit' $OUT/ncu.log | head -20
echo "== end at $(el) s"
