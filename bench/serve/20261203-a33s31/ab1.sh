cd /work/a33s31
export DIR=/tmp/a33s31 HARK_TESTDATA=/work/shared
h=bench/serve/20261203-a33s29
echo "== $(date -u +%T) start, load $(cut -d' ' -f1-3 /proc/loadavg)"
BENCH_B=1 AUTOGROUP_NICE=-20 setsid $h/abbin.sh /tmp/a33s31/hark /tmp/a33s31/hark-new 12 > /tmp/a33s31/ab/abbin1-loaded.log 2>&1
echo "== $(date -u +%T) abbin1, load $(cut -d' ' -f1-3 /proc/loadavg)"
BENCH_B=1 AUTOGROUP_NICE=-20 setsid $h/abbin.sh /tmp/a33s31/hark-new /tmp/a33s31/hark 12 > /tmp/a33s31/ab/abbin2-loaded.log 2>&1
echo "== $(date -u +%T) abbin2, load $(cut -d' ' -f1-3 /proc/loadavg)"
