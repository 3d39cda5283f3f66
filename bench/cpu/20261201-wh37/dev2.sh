#!/bin/bash
# wh37 on the 2-core dev VM: main 78e82cd ("base") and wh37 ("new"), both bench/cpu/build-hark.sh builds, transcribe
# the 204.2-s excerpt with the kit q8_0 model at 2 threads, alternating, ROUNDS rounds; wall and user CPU of each
# process, and whether the text equals the kit reference's (excerpt-expected.txt).
#   bench/cpu/20261201-wh37/dev2.sh BASE_BIN NEW_BIN Q8 EXCERPT_FLAC EXPECTED_TXT [ROUNDS]
set -u
B=$1; N=$2; M=$3; A=$4; E=$5; R=${6:-3}; T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
check() { python3 - "$1" "$E" <<'PY'
import re,sys
got=' '.join(re.sub(r'^\[[^]]*\]','',l) for l in open(sys.argv[1]).read().splitlines())
got=' '.join(got.split()); exp=' '.join(open(sys.argv[2]).read().split())
print('OK' if got==exp else 'BAD(%d vs %d chars)'%(len(got),len(exp)))
PY
}
for r in $(seq $R); do for b in base new; do bin=$B; [ $b = new ] && bin=$N
  l=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -f "%e %U" -o $T/time $bin transcribe --backend cpu --model $M --beam 1 --threads 2 --format txt $A > $T/out.txt 2>/dev/null
  echo "RESULT $b round $r load $l wall/user $(cat $T/time) $(check $T/out.txt)"
done; done
