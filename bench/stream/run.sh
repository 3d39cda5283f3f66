#!/usr/bin/env bash
# Run on the device machine from the repository root as bench/stream/run.sh [LIMIT]: its folder holds new.test.xz and
# old.test.xz (CGO_ENABLED=0 go test -c ./engine/whisper of this branch and of main) and data.tar.xz (shared/: the kit
# q8_0 model, the kit references, the clips, the long-form file cut at 121 s with sox). Logs go to $OUT.
# BenchmarkStream 120 s / 5 s / 30 s (kit q8_0, CPU backend, 2 threads), each in its own
# process pinned to its own 2 physical cores, concurrently; then, if 5+ physical core pairs exist, the kit stream
# test of main (old) and of this branch (new), each pinned to 2 cores, GOMAXPROCS=2, cut at LIMIT.
set -u
D=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/out}; LIMIT=${1:-135}; W=/tmp/w; mkdir -p $W
exec > >(tee -a "$O/run.log") 2>&1
date -u; nproc; lscpu | grep -E 'Model name|Core|Thread|Socket|L3'; uptime
xz -dc $D/new.test.xz > $W/new.test; xz -dc $D/old.test.xz > $W/old.test; chmod +x $W/*.test
tar -C $W -xJf $D/data.tar.xz
export HARK_TESTDATA=$W/shared
# one logical CPU per physical core, in order; pairs of them
mapfile -t P < <(lscpu -p=CPU,CORE,SOCKET | grep -v '^#' | sort -t, -k3,3n -k2,2n -k1,1n | awk -F, '!s[$3","$2]++{print $1}' | paste -d, - - )
echo "pairs: ${P[*]}"
cd $W
run_bench() { # pair name
  GOMAXPROCS=2 timeout $LIMIT taskset -c $1 ./new.test -test.run '^$' -test.bench "BenchmarkStream/$2\$" -test.benchtime 1x -stream.model ggml-kit-tiny.en-q8_0.bin > $O/bench-$2.log 2>&1
  echo "bench $2 rc=$?" >> $O/bench-$2.log
}
run_bench ${P[0]} 120s & 
run_bench ${P[1]} 5s &
run_bench ${P[2]} 30s &
if [ ${#P[@]} -ge 5 ]; then
  for v in old new; do
    i=3; [ $v = new ] && i=4
    ( GOMAXPROCS=2 taskset -c ${P[$i]} ./$v.test -test.run TestKitStreamMatchesOffline -test.v -test.timeout $((LIMIT-3))s -stream.model ggml-kit-tiny.en-q8_0.bin 2>&1 | grep -v 'committed \[' > $O/kit-$v.log; echo "kit $v done $(date -u)" >> $O/kit-$v.log ) &
  done
fi
wait
grep -h "Benchmark\|rc=\|of audio\|decodes:" $O/bench-*.log
grep -h "WER\|PASS\|FAIL\|panic\|done" $O/kit-*.log | head -80
uptime; date -u
