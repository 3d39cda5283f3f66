#!/bin/bash
# b38s29 call 1 (issue #38 round 5): what a 16-row step's kernels take without the profiler's floor, and which
# product form could cut it. (1) ncu on BenchmarkGPUBatchStep (main's kernels: b38s28's c2 binaries, = main
# 1bc52a4's cuda code; graphs off, HARK_CUDA_GRAPHS=0): every launch's gpu__time_duration (rows=1 then rows=16
# after the same prefill), then the last 16-row step's launches with occupancy, DRAM and SM throughput.
# (2) mvbench.py: the step's 121 products (SmolLM2 shapes, repacked q8_0) as graph replays, main's
# multi-row form (replica) against tensor-core forms, each checked against float64.
set -u
K=${K:-.gpu/b38s29/c1}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); R=$PWD; W=/w/b38s29
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared $W/v && cd $W
tar -xJf $K/bins.tar.xz && chmod +x hark cuda.test
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin CUDA_MODULE_LOADING=EAGER
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
TOK=$W/shared/llm-kit/tokenizers/smollm2; F=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; echo "ncu: $NCU"
  echo "== mvbench at $(el) s"; PYTHONUNBUFFERED=1 timeout 150 python3 $K/mvbench.py $OUT/c1-mvbench.json 2>&1; echo "exit $? at $(el) s"
} > $OUT/c1-mvbench.log 2>&1 &
MV=$!
./hark bench llm --backend cpu --dir $W/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 8 > /dev/null 2>&1
wait $MV
KF='mat_vec|attention_paged|embed|sample|rms_norm|rope_kv|silu'
BE="HARK_BENCH_MODEL=$F HARK_BENCH_MATMUL_ROWS=17 HARK_CUDA_GRAPHS=0"
{ echo "model written at $(el) s"
  echo "== the step without ncu (graphs on), at $(el) s"
  env HARK_BENCH_MODEL=$F HARK_BENCH_MATMUL_ROWS=17 timeout 40 ./cuda.test -test.run '^$' -test.bench 'GPUBatchStep' -test.benchtime 256x 2>&1 | grep -E 'ms/step|FAIL|panic'
  echo "== ncu A: the decode kernels' launches ($KF), gpu__time_duration (rows=1 then rows=16, graphs off) at $(el) s"
  env $BE timeout 170 $NCU --clock-control none --cache-control none -k "regex:$KF" --metrics gpu__time_duration.sum --csv --page raw \
    ./cuda.test -test.run '^$' -test.bench 'GPUBatchStep/rows=(1|16)$' -test.benchtime 1x > $W/v/ncuA.csv 2> $W/v/ncuA.err; echo "exit $? at $(el) s"
  tail -3 $W/v/ncuA.err
  python3 $K/ncusum.py $W/v/ncuA.csv rows=1 rows=16
  set -- $(python3 $K/ncusum.py $W/v/ncuA.csv --skip)
  echo "== ncu B: the last 16-row step's $2 launches from launch $1, detailed, at $(el) s"
  [ $(el) -lt 300 ] && env $BE timeout 150 $NCU --clock-control none --cache-control none -k "regex:$KF" --launch-skip $1 --launch-count $2 \
    --metrics gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,dram__bytes_read.sum,launch__registers_per_thread \
    --csv --page raw ./cuda.test -test.run '^$' -test.bench 'GPUBatchStep/rows=(1|16)$' -test.benchtime 1x > $W/v/ncuB.csv 2> $W/v/ncuB.err; echo "exit $? at $(el) s"
  tail -3 $W/v/ncuB.err
  python3 $K/ncusum.py $W/v/ncuB.csv rows=16-detailed
  echo "== done at $(el) s"; } > $OUT/c1-ncu.log 2>&1
(cd $W/v && xz -6 -T4 ncuA.csv ncuB.csv && tar -cf - ncu*.xz *.err | cat > $OUT/c1-ncu-csv.tar)
grep -v "^check" $OUT/c1-mvbench.log | grep -E "^\||time|exit|weights|Error|error" | head -40; grep "^check" $OUT/c1-mvbench.log | cut -c1-160
grep -vE "^(kernel|products)" $OUT/c1-ncu.log | head -80; grep products $OUT/c1-ncu.log
