#!/bin/bash
# alternates pool passHold settings through speed-cpu.sh (2 rounds each block)
for r in 1 2 3; do for h in 1ms 50us; do
  echo "=== block $r passhold $h"
  HARK_EXP_PASSHOLD=$h bash bench/serve/speed-cpu.sh /tmp/hark-exp 2 4 2>&1 | grep -E "^== (medians|round)|samples.*chained|^run 1"
done; done
