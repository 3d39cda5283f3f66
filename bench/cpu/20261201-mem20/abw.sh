#!/bin/sh
# abw.sh DIR ROUNDS BIN... : hark bench whisper (kit tiny.en q8_0, the first window of jfk.wav; encoder ms a window
# over -r 5 encodes, each after the last: the worst case for the scratch given back after each encode) -t $T (2) per
# binary, the order rotating each round; GNU time's user/sys/wall after each run. Run from the repository root.
dir=$1 rounds=$2; shift 2
kit=${HARK_TESTDATA:-../shared}/whisper-kit
r=0
while [ $r -lt "$rounds" ]; do
  set -- "$@" "$1"; shift          # rotate the order
  for b in "$@"; do
    echo "== round $r $b $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
    /usr/bin/time -f "TIME $b user %U sys %S wall %e maxrss_kb %M" "$dir/$b" bench whisper --backend cpu -t "${T:-2}" -r 5 --tokens 16 \
      --model "$kit/models/ggml-kit-tiny.en-q8_0.bin" --audio "$kit/../audio/jfk.wav" 2>&1 | grep -E "encode|decode|window|TIME"
  done
  r=$((r+1))
done
