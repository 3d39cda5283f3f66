#!/usr/bin/env bash
# Issue 30 item 3: peak RSS of `hark transcribe` on a 4-hour 8-kbps MP3
# (the shared long-form file looped 37 times: 4 h 3 min; 16 kHz
# MPEG-2, as Hark's MP3 decoder does not take MPEG 2.5 at 8 kHz), kit q8_0 model,
# greedy. Usage: bench/longaudio/run.sh LOG [TIMEOUT]  (TIMEOUT as for
# timeout(1), e.g. 50m; the peak RSS is reported even when it stops the run).
set -uo pipefail
cd "$(dirname "$0")/../.."
export GOTOOLCHAIN=go1.26.8+auto
shared=${HARK_TESTDATA:-../shared}
log=${1:?log file}
limit=${2:-0}
mp3=/tmp/hark-4h-8kbps.mp3
{
  echo "== $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  ffmpeg -v error -y -stream_loop 36 -i "$shared/audio/ljspeech-longform-LJ001-0021-0076.wav" \
    -ac 1 -ar 16000 -c:a libmp3lame -b:a 8k "$mp3"
  echo "input: $(stat -c %s "$mp3") bytes, $(ffprobe -v error -show_entries format=duration -of csv=p=0 "$mp3") s"
  go build -o /tmp/hark-4h .
  echo "== /usr/bin/time -v timeout $limit hark transcribe --backend cpu --beam 1 --no-fallback --model ggml-kit-tiny.en-q8_0.bin $mp3"
  /usr/bin/time -v timeout "$limit" nice /tmp/hark-4h transcribe --backend cpu --beam 1 --no-fallback \
    --model "$shared/whisper-kit/models/ggml-kit-tiny.en-q8_0.bin" "$mp3" >/tmp/hark-4h.txt
  echo "exit $? (124: stopped by the timeout)"
  echo "transcript: $(wc -w </tmp/hark-4h.txt) words; first and last lines:"
  head -c 300 /tmp/hark-4h.txt; echo; tail -c 300 /tmp/hark-4h.txt; echo
} >"$log" 2>&1
