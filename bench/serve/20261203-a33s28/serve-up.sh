#!/usr/bin/env bash
# Source from a script: starts HARK's server on the SmolLM2-shaped q8_0 file (written once under $DIR by hark bench llm)
# at $PORT with $SERVE_ARGS; sets $f (the model file) and $srv (the server's pid). Needs: hark, DIR, PORT.
mkdir -p "$DIR"
if ! ls "$DIR"/m/*q8_0.gguf > /dev/null 2>&1; then
	"$hark" bench llm --backend cpu --dir "$DIR/m" --type q8_0 -t 2 -r 1 --pp 0 --tg 16 > /dev/null 2>&1
fi
f=$(ls "$DIR"/m/*q8_0.gguf); mkdir -p "$DIR/models"; ln -sf "$f" "$DIR/models/smollm2-shape-q8_0.gguf"
${SERVE_PREFIX:-} "$hark" serve --models-dir "$DIR/models" --backend cpu --threads 2 --addr 127.0.0.1:$PORT ${SERVE_ARGS:-} > "$DIR/serve-$PORT.log" 2>&1 &
srv=$!
for _ in $(seq 100); do curl -sf http://127.0.0.1:$PORT/v1/models > /dev/null && break; sleep 0.2; done
