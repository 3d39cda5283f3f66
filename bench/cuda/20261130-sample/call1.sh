#!/bin/bash
# Issue #33, branch sample, first call: the Sample pass on main 6c12e1d profiled on the H200 (HARK_CUDA_PROFILE=1
# with hark bench llm --temp 0.7, and Nsight Compute on the four sample kernels). Run from the repository root with
# $K holding hark0.xz (main's hark) and data.tar.xz (the SmolLM2 tokenizer).
set -u
K=${K:-.gpu/sample}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s)
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT /w/shared && cd /w
xz -dc $K/hark0.xz > hark0 && chmod +x hark0
tar -C /w/shared -xJf $K/data.tar.xz
TOK=/w/shared/llm-kit/tokenizers/smollm2
./hark0 bench llm --backend cpu --dir /w/m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16 > $OUT/write.log 2>&1
F=/w/m/smollm2-135m-shape-v1-L30-q8_0.gguf
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  echo "== profile, temp 0.7 chained at $(el) s"
  HARK_CUDA_PROFILE=1 ./hark0 bench llm --backend cuda --model $F -r 1 --pp 0 --tg 128 --chain --temp 0.7 --ctx 4096 2>&1 | grep -v '^samples'
  echo "== ncu at $(el) s"
  HARK_CUDA_PROFILE=1 timeout 240 ncu --clock-control none -k regex:'^sample' --launch-skip 400 --launch-count 8 --set full \
    --import-source no -o $OUT/sample0 -f ./hark0 bench llm --backend cuda --model $F -r 1 --pp 0 --tg 128 --chain --temp 0.7 --ctx 4096 > $OUT/ncu-run.log 2>&1
  echo "ncu exit $?"; tail -3 $OUT/ncu-run.log
  ncu -i $OUT/sample0.ncu-rep --page details > $OUT/ncu-details.txt 2>&1
  grep -E '^  sample|Duration|Registers Per|Achieved Occupancy|Shared Memory Config|Stall|Issue Slots Busy' $OUT/ncu-details.txt | head -80
  ncu -i $OUT/sample0.ncu-rep --page source --csv --print-source sass -k regex:'^sample$' > $OUT/ncu-sass.csv 2>&1; echo "sass csv $? $(wc -l < $OUT/ncu-sass.csv)"
  xz -9 $OUT/ncu-sass.csv
  echo "== done at $(el) s"; } > $OUT/call1.log 2>&1
cat $OUT/call1.log
