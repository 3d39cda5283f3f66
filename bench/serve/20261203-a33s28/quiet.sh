# Source: quiet [MAXWAIT_S] waits (up to MAXWAIT_S, default 600) until the CPUs were at least 90% idle over 2 s,
# and prints the idle share it found (status 1: not found in time); busy_since/busy_share measure the other processes' share during a sample.
idle_now() { awk '/^cpu /{print $5+$6, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }
quiet() {
	local max=${1:-600} t0=$SECONDS a b
	while :; do
		a=($(idle_now)); sleep 2; b=($(idle_now))
		local idle=$(( 100 * (b[0]-a[0]) / (b[1]-a[1] + 1) ))
		if [ $idle -ge 90 ]; then echo "idle ${idle}% after $((SECONDS - t0)) s"; return 0; fi
		if [ $((SECONDS - t0)) -ge "$max" ]; then echo "idle ${idle}% after $((SECONDS - t0)) s"; return 1; fi
	done
}
# busy_start; ...; busy_end PID... prints the CPU seconds the whole machine spent busy during the sample and the share
# of it the named processes (and their threads) did not spend: what other processes took.
busy_start() { B0=($(idle_now)); P0=$(date +%s%N); }
proc_cpu() { local s=0 p; for p in "$@"; do [ -r /proc/$p/stat ] && s=$((s + $(awk '{print $14+$15}' /proc/$p/stat))); done; echo $s; }
# foreign CMD...: runs CMD (output through), then prints "foreign N%": the share of both CPUs' time during CMD spent by
# processes other than CMD's (waited-for descendants) and the server $srv. Jiffies (1/100 s) of /proc/stat.
busy_j() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
total_j() { awk '/^cpu /{print $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }
own_j() { awk '{print $16+$17}' /proc/$$/stat; }
srv_j() { if [ -n "${srv:-}" ] && [ -r /proc/$srv/stat ]; then awk '{print $14+$15}' /proc/$srv/stat; else echo 0; fi; }
foreign() {
	local b0 t0 o0 s0 b1 t1 o1 s1 out
	b0=$(busy_j); t0=$(total_j); o0=$(own_j); s0=$(srv_j)
	out=$("$@")
	b1=$(busy_j); t1=$(total_j); o1=$(own_j); s1=$(srv_j)
	echo "$out foreign $(( 100 * ((b1 - b0) - (o1 - o0) - (s1 - s0)) / (t1 - t0 + 1) ))%"
}
