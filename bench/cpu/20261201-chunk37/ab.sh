#!/bin/sh
# ab.sh DIR MODEL ROUNDS BIN... : pp$PP (512) + tg$TG (128) -t $T (2) -r $R (3) per binary, the
# order rotating each round; GNU time's user/sys/wall after each run.
# Binaries (built on the dev machine, not committed): hark-base = main
# 201c7ca; hark-base-c64 = the same with New's chunk default set to 64 (a
# local patch, as the lead built his); hark-new-c64 = chunk37 with that patch.
dir=$1 model=$2 rounds=$3; shift 3
r=0
while [ $r -lt "$rounds" ]; do
  set -- "$@" "$1"; shift          # rotate the order
  for b in "$@"; do
    echo "== round $r $b $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
    /usr/bin/time -f "TIME $b user %U sys %S wall %e maxrss_kb %M" \
      "$dir/$b" bench llm --backend cpu --model "$model" --pp "${PP:-512}" --tg "${TG:-128}" -t "${T:-2}" -r "${R:-3}" 2>&1 | grep -E "samples|TIME"
  done
  r=$((r+1))
done
