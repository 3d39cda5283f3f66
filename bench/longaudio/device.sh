#!/usr/bin/env bash
# The 4-hour run of run.sh on the device machine's CPU (run by the `run`
# tool from the repository root, with build/bin/longaudio carried:
# hark.xz = CGO_ENABLED=0 go build -trimpath -ldflags='-s -w', xz'd;
# model.xz = ggml-kit-tiny.en-q8_0.bin, xz'd; in.mp3 = run.sh's input).
# Peak RSS from /usr/bin/time -v, or getrusage when it is missing.
set -uo pipefail
d=build/bin/longaudio
w=/tmp/longaudio
mkdir -p "$w"
xz -dc "$d/hark.xz" >"$w/hark" && chmod +x "$w/hark"
xz -dc "$d/model.xz" >"$w/model.bin"
echo "== $(date -u +%FT%TZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "model sha256 $(sha256sum "$w/model.bin" | cut -d' ' -f1), input $(stat -c %s "$d/in.mp3") bytes"
cmd=("$w/hark" transcribe --backend cpu --beam 1 --no-fallback --threads "${THREADS:-2}" --model "$w/model.bin" "$d/in.mp3")
echo "== ${cmd[*]}"
if [ -x /usr/bin/time ]; then
  /usr/bin/time -v "${cmd[@]}" >"$w/out.txt"
else
  python3 - "${cmd[@]}" <<'PY'
import resource, subprocess, sys, time
t = time.time()
r = subprocess.run(sys.argv[1:], stdout=open("/tmp/longaudio/out.txt", "w"))
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"exit {r.returncode}; wall {time.time()-t:.1f} s; user {u.ru_utime:.1f} s; sys {u.ru_stime:.1f} s")
print(f"Maximum resident set size (kbytes): {u.ru_maxrss}")
PY
fi
echo "transcript: $(wc -w <"$w/out.txt") words; start and end:"
head -c 300 "$w/out.txt"; echo; echo ...; tail -c 300 "$w/out.txt"; echo
