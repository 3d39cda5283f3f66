# Sourced by clients.sh and semispace.sh (node33): serve_up HARK MODEL.gguf PORT
# starts hark serve (CPU, 2 threads) on the model under the name
# smollm2-shape-q8_0 in a temporary models folder, stops it on exit, and
# returns once it answers, after a header line; load prints the load average.
load() { cut -d' ' -f1 /proc/loadavg; }
serve_up() {
	local hark=$1 f=$2 port=$3
	dir=$(mktemp -d); mkdir "$dir/models"; ln -s "$f" "$dir/models/smollm2-shape-q8_0.gguf"
	"$hark" serve --models-dir "$dir/models" --backend cpu --threads 2 --addr 127.0.0.1:"$port" > "$dir/serve.log" 2>&1 &
	srv=$!
	trap 'kill $srv 2>/dev/null || true; rm -rf "$dir"' EXIT
	for _ in $(seq 100); do curl -sf http://127.0.0.1:"$port"/v1/models > /dev/null && break; sleep 0.2; done
	echo "== $(date -u +%FT%TZ) $(nproc) cores, $hark"
}
