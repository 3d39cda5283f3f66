#!/bin/bash
# wdec34 call 3 (a fresh machine): (1) Nsight Compute on the cross-attention's attention_ticket_f32 (1,500 f32 keys,
# 6 heads of 64: msltest's TestAttentionMergeChunks, whose first two ticket launches are 47 chunks, then 48 with
# AttnTicketRound 8) and on the self-attention's rope_attention_ticket_f32 (TestRopeAttentionKernel, device
# tuning): where a warp's time goes; (2) the LLM direction of AttnTicketRound (the cuda family's decode attention
# takes it too): hark bench llm, SmolLM2 shape q8_0, tg128 at depth 0 and 300, AttnTicketRound 1 and 8 alternated.
# $K holds msltest.test.xz, hark-wdec34.xz, data.tar.xz (the shared llm-kit tokenizer).
set -u
K=$(cd "$K" && pwd); R=$(pwd); OUT=${OUT:-/tmp/out}; W=${W:-/w/wdec34}; S=$(date +%s); mkdir -p $OUT $W/shared
el() { echo $(( $(date +%s) - S )); }
cd $W && xz -dc $K/msltest.test.xz > msltest.test && xz -dc $K/hark-wdec34.xz > hark && chmod +x msltest.test hark && tar -xJf $K/data.tar.xz -C shared
export HARK_TESTDATA=$W/shared HARK_CUDA_CUBIN_DIR=$R/cuda/cubin
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1); echo "ncu: $NCU"
{ echo "== ncu cross at $(el) s"
  HARK_MSLTEST_DEVICE=cuda timeout 120 $NCU --set full --import-source no -k regex:attention_ticket_f32 -c 2 -o $OUT/cross -f \
    ./msltest.test -test.run '^TestAttentionMergeChunks$' -test.count=1 2>&1 | tail -5
  echo "== ncu self at $(el) s"
  HARK_MSLTEST_DEVICE=cuda HARK_MSLTEST_DEVICE_TUNING=1 timeout 120 $NCU --set full -k regex:'rope_attention_(ticket_)?f32' -c 2 -o $OUT/self -f \
    ./msltest.test -test.run '^TestRopeAttentionKernel$' -test.count=1 2>&1 | tail -5
  for r in cross self; do
    $NCU -i $OUT/$r.ncu-rep --page details > $OUT/$r-details.txt 2>&1
    $NCU -i $OUT/$r.ncu-rep --page source --print-source sass --csv > $OUT/$r-sass.csv 2>&1 || echo "no source page"
  done
  echo "== done at $(el) s"; } > $OUT/ncu.log 2>&1
cat $OUT/ncu.log
{ for r in 1 2; do for d in 0 300; do for t in 1 8; do
    echo "== round $r depth $d AttnTicketRound=$t at $(el) s"
    HARK_CUDA_TUNE=AttnTicketRound=$t ./hark bench llm --backend cuda --type q8_0 --pp 0 --tg 128 --depth $d -r 3 --dir $W/llm \
      --tokenizer $W/shared/llm-kit/tokenizers/smollm2 2>&1 | grep -E 'tg|launches'
  done; done; done
  echo "== done at $(el) s"; } > $OUT/llm.log 2>&1
cat $OUT/llm.log
