# callgrind instruction counts of the Sample dispatch (toggle on (*Exec).sample), 51 draws (b.N 1 then 50)
cd /work/a33s31/engine/cpu
cg() { # name binary bench
	GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/tmp/a33s31/cg/$1.out "--toggle-collect=*Exec).sample" $2 -test.run xxx -test.bench "$3" -test.benchtime 50x > /tmp/a33s31/cg/$1.log 2>&1
	echo "$1 $3 $(grep -o 'Collected : [0-9]*' /tmp/a33s31/cg/$1.log | awk '{printf "%d instructions, %.0f a draw", $3, $3/51}')"
}
for sd in 0.3 3; do
	cg main-chat-sd$sd /tmp/a33s31/cpu-main.vg "SampleNoTopK/n=49152/sd=$sd/top-p=1\$"
	for c in greedy chat topk40; do cg new-$c-sd$sd /tmp/a33s31/cpu-new2.vg "SampleSettings/sd=$sd/$c\$"; done
done
