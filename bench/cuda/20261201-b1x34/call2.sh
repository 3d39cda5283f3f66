#!/bin/bash
# Issue #34, branch b1x34, call 2: the branch against main (3d3a2c5) on the Llama-3.2-1B shape, alternated, its
# geometry knobs, and the per-kernel profiles. From the repository root: K=.gpu/b1x34 bash $K/call2.sh, $K holding
# hark.xz (the branch's, -tags hark_nocubin), hark-base.xz (3d3a2c5's, -tags hark_nocubin), ptxfrom.py and ptx.id
# (the size and SHA-256 of the branch's kernels.ptx.gz: ptxfrom.py takes it out of hark, the transfer had no room for
# it), basecubin/ (3d3a2c5's sm_90 cubins and SOURCE) and smollm2.tar.xz. The branch's base module is compiled
# here by ptxas -O3 for sm_90 (as bench/cuda/cubins.sh does) while the files are written, so neither binary JITs;
# $OUT/kernels.sm_90.cubin.xz comes back for the next call.
set -u
K=${K:-.gpu/b1x34}; K=$(cd "$K" && pwd); OUT=${OUT:-/tmp/out}; S=$(date +%s); W=/w
export PATH=$PATH:/usr/local/cuda/bin
el() { echo $(( $(date +%s) - S )); }
mkdir -p $OUT $W/m $W/tok $W/cubin && cd $W
cp $K/basecubin/sm80.sm_90.cubin.xz $K/basecubin/sm90a.sm_90a.cubin.xz $W/cubin/
xz -dc $K/hark.xz > hark && xz -dc $K/hark-base.xz > hark-base && chmod +x hark hark-base
python3 $K/ptxfrom.py hark $W/kernels.ptx.gz $(cat $K/ptx.id) || exit 1
( gzip -dc $W/kernels.ptx.gz > $W/k.ptx && /usr/bin/time -f "ptxas -O3 sm_90: %e s" ptxas -arch=sm_90 -O3 $W/k.ptx -o $W/k.cubin &&
  xz -T4 -6 -c $W/k.cubin > $W/cubin/kernels.sm_90.cubin.xz &&
  { echo "kernels $(sha256sum $W/kernels.ptx.gz | cut -d' ' -f1)"; grep -v '^kernels ' $K/basecubin/SOURCE; } > $W/cubin/SOURCE &&
  cp $W/cubin/kernels.sm_90.cubin.xz $OUT/ && ls -la $W/k.cubin $W/cubin && echo "ptxas done at $(el) s" ) > $OUT/ptxas.log 2>&1 &
PT=$!
tar -C $W/tok -xJf $K/smollm2.tar.xz
{ nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem --format=csv,noheader
  ./hark-base bench llm --backend cpu --shape llama-1b --dir $W/m --type q8_0,q4_0 --tokenizer $W/tok/smollm2 --pp 8 --tg 0 -r 1 -t 14
  ls -la $W/m; echo "write done at $(el) s"; } > $OUT/write.log 2>&1
wait $PT; cat $OUT/ptxas.log
B1=$W/m/llama-1b-shape-v1-L16
# run BIN label env... -- bench args: base reads 3d3a2c5's cubins, the branch its own
hb() {
  local b=$1 l=$2; shift 2; local e=(); while [ "$1" != -- ]; do e+=("$1"); shift; done; shift
  [ $(el) -lt ${LIMIT:-200} ] || { echo "SKIP $l at $(el) s"; return; }
  local d=$W/cubin; [ $b = hark-base ] && d=$K/basecubin
  echo "== $l at $(el) s"
  env HARK_CUDA_CUBIN_DIR=$d "${e[@]}" ./$b bench llm --backend cuda "$@" 2>&1 | grep -E '^\| llama|^samples|^cuda|preparing|ready|rror'
}
T=(-r 3 --pp 0 --tg 128)
Q8ON=MatVecQ8KQ8_0=2048
{ for r in 1 2; do
    hb hark-base "1B q8_0 main, round $r" X=1 -- --model $B1-q8_0.gguf "${T[@]}"
    hb hark "1B q8_0 b1x34 8-bit ($Q8ON), round $r" HARK_CUDA_TUNE=$Q8ON -- --model $B1-q8_0.gguf "${T[@]}"
    hb hark "1B q8_0 b1x34 float (default), round $r" X=1 -- --model $B1-q8_0.gguf "${T[@]}"
    hb hark "1B q4_0 b1x34, round $r" X=1 -- --model $B1-q4_0.gguf "${T[@]}"
    hb hark-base "1B q4_0 main, round $r" X=1 -- --model $B1-q4_0.gguf "${T[@]}"
  done
  for v in MatVecQ8Groups=2 MatVecQ8Groups=8 MatVecQ8Groups=16 MatVecQ8SIMDGroups=4,MatVecQ8Rows=1 \
      MatVecQ8SIMDGroups=4,MatVecQ8Rows=4 MatVecQ8SIMDGroups=8,MatVecQ8Rows=1 MatVecQ8SIMDGroups=8,MatVecQ8Rows=2 \
      MatVecQ8SIMDGroups=8,MatVecQ8Rows=4 MatVecQ8SIMDGroups=8,MatVecQ8Rows=2,MatVecQ8Groups=2; do
    hb hark "1B q8_0 8-bit, $v" HARK_CUDA_TUNE=$Q8ON,$v -- --model $B1-q8_0.gguf "${T[@]}"
    hb hark "1B q4_0, $v" HARK_CUDA_TUNE=$v -- --model $B1-q4_0.gguf "${T[@]}"
  done
  hb hark "1B q8_0 8-bit, uncapped grid (MatVecQ8Groups=65536)" HARK_CUDA_TUNE=$Q8ON,MatVecQ8Groups=65536 -- --model $B1-q8_0.gguf "${T[@]}"
  hb hark "1B q4_0, uncapped grid" HARK_CUDA_TUNE=MatVecQ8Groups=65536 -- --model $B1-q4_0.gguf "${T[@]}"
  for r in 3; do
    hb hark "1B q8_0 b1x34 8-bit, round $r" HARK_CUDA_TUNE=$Q8ON -- --model $B1-q8_0.gguf "${T[@]}"
    hb hark-base "1B q8_0 main, round $r" X=1 -- --model $B1-q8_0.gguf "${T[@]}"
    hb hark-base "1B q4_0 main, round $r" X=1 -- --model $B1-q4_0.gguf "${T[@]}"
    hb hark "1B q4_0 b1x34, round $r" X=1 -- --model $B1-q4_0.gguf "${T[@]}"
  done; } > $OUT/timed.log 2>&1
for e in hark:q8_0:HARK_CUDA_TUNE=$Q8ON hark:q4_0:X=1 hark-base:q8_0:X=1; do b=${e%%:*}; r=${e#*:}; f=${r%%:*}; v=${r#*:}
  d=$W/cubin; [ $b = hark-base ] && d=$K/basecubin
  echo "== $b 1B $f profile (graphs off), $v at $(el) s"
  env HARK_CUDA_CUBIN_DIR=$d $v HARK_CUDA_PROFILE=1 HARK_CUDA_GRAPHS=0 ./$b bench llm --backend cuda --model $B1-$f.gguf -r 1 --pp 0 --tg 64 2>&1 | grep -vE '^samples'
done > $OUT/profile.log
echo "== end at $(el) s"; tail -2 $OUT/write.log
grep -E '^==|tg128' $OUT/timed.log | sed -E 's/\| llama 1.1B (Q8_0|Q4_0) \| [^|]*\|[^|]*\| CUDA \| [0-9]+ \| tg128 \|/   /'
grep -E '^==|ms of kernels|us/launch' $OUT/profile.log
