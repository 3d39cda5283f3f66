#!/bin/bash
# wh37 (issue #37, eighteenth session): the one device call of this branch (120 s of device time in all). main 78e82cd
# ("base") against branch wh37 ("new") on the device machine's CPU, both bench/cpu/build-hark.sh builds carried in one
# tar.xz (harks.tar.xz: hark-base, hark-new; the two compress together to 7.5 MB). The kit q8_0 model's transfer
# would need three calls beside the binaries, so this call measures the in-tree speechkit model
# (testdata/speechkit/ggml-speechkit-q8_0.bin: the same vocabulary of 51,864, 4 decoder layers of width 128, 4 heads)
# with `hark bench whisper` on testdata/speechkit/passage.flac, alternating base and new, rows below 16 threads
# pinned to the first T CPUs; then both transcribe jfk.wav (carried) with that model at 16, 8 and 2 threads, whose
# texts must be equal (the branch's results are main's bit for bit except plan.LogSumExp's block order).
# Carry: .gpu/wh37 (harks.tar.xz, jfk.wav, this script). Run: bash .gpu/wh37/call1.sh
set -u
K=$(cd .gpu/wh37 && pwd); OUT=${OUT:-/tmp/out}; W=/tmp/wh37; S=$(date +%s)
mkdir -p $OUT $W && tar -C $W -xJf $K/harks.tar.xz
M=$PWD/testdata/speechkit/ggml-speechkit-q8_0.bin; A=$PWD/testdata/speechkit/passage.flac
pin() { [ "$1" -ge 16 ] || echo "taskset -c 0-$(( $1 - 1 ))"; }
{ echo "== machine"; date -u; nproc; lscpu | grep -E 'Model name|Hypervisor'; cat /proc/loadavg
  sha256sum $W/hark-base $W/hark-new
  for T in 16 8 2; do P=$(pin $T); R=2; [ $T = 2 ] && R=1
    for r in $(seq $R); do for b in base new; do
      echo "== $b T=$T round $r at $(( $(date +%s) - S )) s; load $(cut -d' ' -f1 /proc/loadavg)"
      $P $W/hark-$b bench whisper --backend cpu --model $M --audio $A -t $T --tokens 64 -r 3 2>&1 | grep -E '^\| ggml|^samples'
    done; done
  done
  echo "== texts at $(( $(date +%s) - S )) s"
  for T in 16 8 2; do P=$(pin $T); for b in base new; do
    $P $W/hark-$b transcribe --backend cpu --model $M --beam 1 --threads $T --format txt $K/jfk.wav > $W/$b-$T.txt 2>/dev/null
  done; cmp -s $W/base-$T.txt $W/new-$T.txt && echo "T=$T texts equal ($(wc -c < $W/new-$T.txt) bytes)" || echo "T=$T texts DIFFER"; done
  echo "== done at $(( $(date +%s) - S )) s"
} > $OUT/call1.log 2>&1
cp $W/new-16.txt $OUT/jfk-new-16.txt 2>/dev/null
cat $OUT/call1.log
