#!/usr/bin/env bash
# A CPU profile's flat time by category (seconds and % of the profile), per decoded token when TOKENS is given:
# the q8_0 products, attention, the Sample pass, the pool's waiting (spin), the model's load (packing, file), the
# server's own work (serve, net/http, JSON, tokenizer), the Go runtime, the rest. Usage: profcat.sh HARK PROFILE [TOKENS]
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.26.8+auto}
go tool pprof -top -nodefraction=0 -nodecount=100000 "$1" "$2" 2>/dev/null | awk -v tok=${3:-0} '
	/^ +[0-9.]+(s|ms) / { v = $1; u = v; sub(/[0-9.]+/, "", u); v += 0; if (u == "ms") v /= 1000; f = $6
		c = "other"
		if (f ~ /dotQ8|packedVNNI|packedRows|packedQ8|rowTask|mulArgs|quantQ8_0Row|q8Block|quantizeActs|MatMul|matProduct|gemm|Gemm/) c = "products"
		else if (f ~ /keyScores|addValues|[aA]ttn|softmax|Softmax|rope|Rope|paged|Paged|storeRow|halfRow/) c = "attention"
		else if (f ~ /[sS]ample|draw|indexMasses|argmax|Argmax|topK|TopK/) c = "sample"
		else if (f ~ /spinPause|Pool\)\.(await|wait|loop|run|drain|Fence|fence)|holdTimer|osyield|Gosched/) c = "spin"
		else if (f ~ /packTask|flip16|Pack|mapfile|gguf|Load|OpenFile|releasePages|unpack/) c = "load"
		else if (f ~ /serve\.|net\/http|encoding\/json|bufio|tokenizer|chat\.|gonja|TextOut|net\.|syscall|internal\/poll/) c = "serve"
		else if (f ~ /^runtime\.|internal\/runtime/) c = "runtime"
		s[c] += v; tot += v }
	END { for (c in s) printf "%-10s %8.2f s %5.1f%%%s\n", c, s[c], 100 * s[c] / tot, tok ? sprintf("  %.3f ms a token", 1000 * s[c] / tok) : ""
		printf "%-10s %8.2f s\n", "total", tot }' | sort -k2 -n -r
