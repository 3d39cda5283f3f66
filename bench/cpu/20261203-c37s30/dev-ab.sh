#!/bin/bash
# Issue #37 round 30 (branch c37s30) on the 2-core dev VM: main's hark (A) and this branch's (B) alternated
# (A B, then B A, ...), ROUNDS rounds of `hark bench llm --backend cpu -t THREADS -r REPS`, tg128 (TEST=tg) or
# pp512 (TEST=pp), each run's process CPU time (user+sys, /usr/bin/time) and the load average beside it.
#   [REPS=N] bench/cpu/20261203-c37s30/dev-ab.sh HARK_A HARK_B MODEL ROUNDS TEST [THREADS] > LOG   (REPS: -r, 3)
# (the harks: bench/cpu/build-hark.sh COMMIT OUT.xz, unxz'd; MODEL: `hark bench llm --dir D --type q8_0` writes
# it). ab-summary.py LOG prints medians and per-round ratios.
set -u
A=$1; B=$2; M=$3; R=$4; TEST=$5; T=${6:-2}; REPS=${REPS:-3}
case $TEST in tg) F="--pp 0 --tg 128" ;; pp) F="--pp 512 --tg 0" ;; *) echo "TEST: tg or pp" >&2; exit 2 ;; esac
echo "== dev VM, $TEST, $T threads, -r $REPS"; date -u; nproc; lscpu | grep -E 'Model name|Hypervisor'; cat /proc/loadavg
sha256sum "$A" "$B" | sed 's|/.*/||'
one() { # side binary
  local out; out=$( { /usr/bin/time -f "cpu %U %S" "$2" bench llm --backend cpu --model "$M" -t "$T" -r "$REPS" $F; } 2>&1 | grep -E '^samples|^cpu' | tr '\n' '|')
  echo "round $r $1: $out load $(cut -d' ' -f1 /proc/loadavg)"
}
for r in $(seq "$R"); do
  if [ $((r % 2)) = 1 ]; then one A "$A"; one B "$B"; else one B "$B"; one A "$A"; fi
done
echo "== done"; date -u; cat /proc/loadavg
