# The issue's script, bench/serve/speed-cpu.sh HARK 2 6, alternated between the new default (100 ms) and
# --stream-interval 20ms, two blocks each, in a session at autogroup nice -20. Usage: HARK=hark setsid bash speed-cpu-blocks.sh
cd "$(dirname "$0")/../../.."
echo -20 > /proc/self/autogroup
for i in 1 2; do
  echo "=== block $i default (100 ms)"; bench/serve/speed-cpu.sh ${HARK:?} 2 6 2>&1 | grep -E "^== (medians|median client|round|20)|samples.*chained|^run 1"
  echo "=== block $i --stream-interval 20ms"; SERVE_ARGS="--stream-interval 20ms" bench/serve/speed-cpu.sh ${HARK:?} 2 6 2>&1 | grep -E "^== (medians|median client|round|20)|samples.*chained|^run 1"
done
