#!/usr/bin/env bash
# Whisper half of the CPU measurement against whisper.cpp (issue 12), run on the device machine from the repository root:
#   bench/cpu/whisper.sh DIR OUT [SECONDS]
# DIR holds hark-new.gz (CGO_ENABLED=0 build of this branch), model.xz (the kit's ggml-kit-tiny.en-q8_0.bin),
# excerpt.flac (the long-form file cut at 204.2 s: sox FILE excerpt.wav trim 0 204.2), excerpt-expected.txt (the kit
# reference's text of the segments starting before 204.2 s), peersrc.tar.xz and build-peers.sh. Logs go to OUT.
# Hark and whisper-cli alternate, 5 runs each per thread count; wall time from process start to exit; a run whose text
# (whitespace collapsed) differs from the expected text is marked BAD and not counted. Rows below 16 threads are pinned
# to the first T CPUs with taskset (both tools). Thread counts go 16, 2, 8, 4, 1; none starts after SECONDS (default
# 600) from the script's start.
set -u
D=$(cd "$1" && pwd); O=$2; LIMIT=${3:-600}; START=$(date +%s); W=/tmp/w; mkdir -p $W/out
exec > >(tee -a "$O/whisper.log") 2>&1
echo "== machine"; date -u; nproc; lscpu | grep -E 'Model name|Core|Thread' ; ldconfig -p | grep -i openblas | head -2
gzip -dc "$D/hark-new.gz" > $W/hark && chmod +x $W/hark && xz -dc "$D/model.xz" > $W/model.bin && cp "$D/excerpt.flac" $W/
tar -C $W -xJf "$D/peersrc.tar.xz"
echo "== build whisper.cpp"; s=$(date +%s)
bash "$D/build-peers.sh" build $W/peersrc $W/peers --cpu whisper || { echo "peer build failed"; exit 1; }
echo "built in $(( $(date +%s) - s )) s"
pin() { python3 -c "import os,sys;print(','.join(map(str,sorted(os.sched_getaffinity(0))[:int(sys.argv[1])])))" "$1"; }
check() { python3 - "$1" "$D/excerpt-expected.txt" <<'PY'
import re,sys
got=' '.join(re.sub(r'^\[[^]]*\]','',l) for l in open(sys.argv[1]).read().splitlines())
got=' '.join(got.split()); exp=' '.join(open(sys.argv[2]).read().split())
print('OK' if got==exp else 'BAD(%d vs %d chars; first diff at %d)'%(len(got),len(exp),next((i for i,(a,b) in enumerate(zip(got,exp)) if a!=b),min(len(got),len(exp)))))
PY
}
TIMEFORMAT=%R
for T in 16 2 8 4 1; do
  [ $(( $(date +%s) - START )) -lt $LIMIT ] || { echo "== stopped before T=$T: time limit"; break; }
  P=(); [ $T -lt 16 ] && P=(taskset -c "$(pin $T)")
  for r in 1 2 3 4 5; do
    t=$( { time "${P[@]}" $W/hark transcribe --backend cpu --model $W/model.bin --beam 1 --threads $T $W/excerpt.flac > $W/out/h$T-$r.txt 2>$W/out/h$T-$r.err; } 2>&1 )
    echo "RESULT hark T=$T run=$r ${t}s $(check $W/out/h$T-$r.txt)"
    t=$( { time "${P[@]}" $W/peers/bin/whisper-cli -m $W/model.bin -f $W/excerpt.flac -t $T -bs 1 -np > $W/out/w$T-$r.txt 2>$W/out/w$T-$r.err; } 2>&1 )
    echo "RESULT whisper.cpp T=$T run=$r ${t}s $(check $W/out/w$T-$r.txt)"
  done
done
cp $W/out/h16-1.txt $W/out/w16-1.txt $W/out/h16-1.err $W/out/w16-1.err "$O/" 2>/dev/null
echo "== done"; date -u
