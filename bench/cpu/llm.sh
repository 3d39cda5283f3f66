#!/usr/bin/env bash
# LLM half of the CPU measurement against llama.cpp (issue 12), run on the device machine from the repository root:
#   bench/cpu/llm.sh DIR OUT
# DIR holds hark-new.gz and hark-base.xz (CGO_ENABLED=0 builds of this branch and of main), peersrc.tar.xz
# (build-peers.sh prepare's tree), build-peers.sh and the SmolLM2 tokenizer folder smollm2/. Logs go to OUT.
# Hark and llama-bench alternate on the same GGUF, same thread count, 5 repetitions each; rows below 16 threads
# are pinned to the first T CPUs with taskset (both tools).
set -u
D=$(cd "$1" && pwd); O=$2; W=/tmp/w; mkdir -p $W/m
exec > >(tee -a "$O/llm.log") 2>&1
echo "== machine"; date -u; uname -r; nproc; lscpu | grep -E 'Model name|Socket|Core|Thread|NUMA node0|Hypervisor|Flags' | cut -c1-200
cat /sys/fs/cgroup/cpu.max 2>/dev/null; ldconfig -p | grep -i openblas | head -3
gzip -dc "$D/hark-new.gz" > $W/hark && xz -dc "$D/hark-base.xz" > $W/hark-base && chmod +x $W/hark $W/hark-base
tar -C $W -xJf "$D/peersrc.tar.xz"
echo "== build llama.cpp"; s=$(date +%s)
bash "$D/build-peers.sh" build $W/peersrc $W/peers --cpu llama || { echo "peer build failed"; exit 1; }
echo "built in $(( $(date +%s) - s )) s"
pin() { python3 -c "import os,sys;print(','.join(map(str,sorted(os.sched_getaffinity(0))[:int(sys.argv[1])])))" "$1"; }
$W/hark bench llm --backend cpu --dir $W/m --type q8_0 --type q4_0 --tokenizer "$D/smollm2" --pp 8 --tg 0 -r 1 -t 16 >/dev/null
ls -la $W/m
Q8=$W/m/smollm2-135m-shape-v1-L30-q8_0.gguf; Q4=$W/m/smollm2-135m-shape-v1-L30-q4_0.gguf
for T in 16 2 8 4 1; do
  P=(); [ $T -lt 16 ] && P=(taskset -c "$(pin $T)")
  for G in $Q8 $( [ $T = 2 ] && echo $Q4 ); do
    echo "== T=$T $(basename $G) hark ${P[*]}"
    "${P[@]}" $W/hark bench llm --backend cpu --model $G -t $T -r 5 --pp 512 --tg 128
    echo "== T=$T $(basename $G) llama-bench ${P[*]}"
    "${P[@]}" $W/peers/bin/llama-bench -m $G -t $T -p 512 -n 128 -r 5
  done
  if [ $T != 1 ] && [ $T != 4 ]; then
    echo "== T=$T q8_0 hark-base (main) tg only ${P[*]}"
    "${P[@]}" $W/hark-base bench llm --backend cpu --model $Q8 -t $T -r 5 --pp 0 --tg 128
  fi
done
for T in 12 15; do
  echo "== T=$T q8_0 hark tg only (pinned), between 8 and 16"
  taskset -c "$(pin $T)" $W/hark bench llm --backend cpu --model $Q8 -t $T -r 5 --pp 0 --tg 128
done
echo "== done"; date -u
