#!/bin/sh
# summarize.sh LOG: per binary, the median of every pp512 (and tg128) sample
# and of the user CPU seconds a run, over all rounds of ab.sh's log (PP=32:
# the pp32 samples of a run with ab.sh's PP=32).
awk -v ppat="pp${PP:-512}" '
/^== round/ { b = $4 }
$0 ~ ppat ".*t/s:" { for (i = 8; i <= NF; i++) pp[b] = pp[b] " " $i }
/tg128.*t\/s:/ { for (i = 8; i <= NF; i++) tg[b] = tg[b] " " $i }
/^TIME/ { us[b] = us[b] " " $4 }
END { for (b in pp) print b, "pp512", pp[b], "|tg128", tg[b], "|user", us[b] }' "$1" |
while read -r b rest; do
  med() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {if (NR==0) {print "-"; exit}; if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2, "(n=" NR ")"}'; }
  pp=$(echo "$rest" | sed 's/.*pp512 //; s/|tg128.*//' | med)
  tg=$(echo "$rest" | sed 's/.*|tg128 //; s/|user.*//' | med)
  us=$(echo "$rest" | sed 's/.*|user //' | med)
  echo "$b: pp${PP:-512} median $pp; tg128 median $tg; user CPU a run median $us"
done
