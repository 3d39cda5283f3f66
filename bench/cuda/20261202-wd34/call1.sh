#!/bin/bash
# Issue #34's Whisper decoder row, round 5 (tuning only), branch wd34, call 1 of 2 on a fresh machine, from the lead's
# checkout root (main 7be6321): K=.gpu/wd34/c1 bash $K/call1.sh. $K holds hark.xz (main, -tags hark_nocubin: it
# reads main's committed cubins, copied to $W/cubin, so nothing JIT-compiles), data.tar.xz (the SmolLM2 tokenizer,
# jfk.wav/.txt) and q8.xz.00 (the kit tiny.en q8_0 model's first xz part; call 2 brings the rest). Writes the
# SmolLM2-shape and 1B-shape q8_0 files on the CPU, then times tg128 of both under the cuda family's default and the
# Whisper sweep's candidates that the LLMs share (HARK_CUDA_TUNE), alternated, 3 rounds.
set -u
R=$(pwd); K=${K:-.gpu/wd34/c1}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=${W:-/w/wd34}
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/shared/whisper-kit/models $W/v && cd $W
xz -dc $K/hark.xz > hark && chmod +x hark
cp $K/q8.xz.00 $W/; rm -rf $W/cubin; cp -r $R/cuda/cubin $W/cubin
tar -C $W/shared -xJf $K/data.tar.xz
export HARK_CUDA_CUBIN_DIR=$W/cubin
TOK=$W/shared/llm-kit/tokenizers/smollm2
{ nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem --format=csv,noheader
  cat $W/cubin/SOURCE
  timeout 60 ./hark bench llm --backend cpu --dir m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16
  timeout 90 ./hark bench llm --backend cpu --shape llama-1b --dir m --type q8_0 --tokenizer $TOK --pp 8 --tg 0 -r 1 -t 16
  ls -la m; echo "write done at $(el) s"; } > $OUT/call1-write.log 2>&1
SM=m/smollm2-135m-shape-v1-L30-q8_0.gguf; B1=m/llama-1b-shape-v1-L16-q8_0.gguf
hl() { # label model tune: tg128 t/s (mean of -r 3) and samples
  [ $(el) -lt ${LIMIT:-170} ] || { echo "SKIP $1 ${3:-default}"; return; }
  local o; o=$(env HARK_CUDA_TUNE="$3" timeout 60 ./hark bench llm --backend cuda --model $2 -r 3 --pp 0 --tg 128 2>&1)
  echo "$o" >> $OUT/call1-llm-full.log
  echo "$1 ${3:-default} $(echo "$o" | awk -F'|' '/tg128 \|/{split($8,a," "); print a[1]}') |$(echo "$o" | grep '^samples' | cut -d: -f2)"
}
CS=("" MatVecRows=1 MatVecSIMDGroups=2 MatVecRows=1,MatVecSIMDGroups=2 "" MatVecSIMDGroups=8 MatVecRows=3 NormThreads=128 "" NormThreads=384 NormThreads=64 AttnChunk=64 AttnMaxChunks=32)
CB=("" NormThreads=128 NormThreads=384 "" NormThreads=64 AttnChunk=64 AttnMaxChunks=32)
{ for r in 1 2 3; do
    for c in "${CS[@]}"; do hl "SmolLM2-q8_0 r$r" $SM "$c"; done
    for c in "${CB[@]}"; do hl "1B-q8_0 r$r" $B1 "$c"; done
  done; echo "end at $(el) s"; } > $OUT/call1-llm.log 2>&1
xz -9 $OUT/call1-llm-full.log
tail -2 $OUT/call1-write.log
awk '$1!="end" && $1!="SKIP"{k=$1" "$3; n[k]++; s[k]+=$4} END{for(k in n) printf "%-50s %7.1f tok/s (%d runs)\n", k, s[k]/n[k], n[k]}' $OUT/call1-llm.log | sort
tail -1 $OUT/call1-llm.log
