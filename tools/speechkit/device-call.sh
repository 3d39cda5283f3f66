#!/bin/bash
# One device call: unpack (a warm machine keeps /tmp/w), train, bring back the results.
set -o pipefail
N=$1; STOP=$2; D=$(pwd)/.gpu/speech; W=/tmp/w
mkdir -p $W/es $W/c $W/out$N
[ -f $W/passage.pcm ] || { tar -C $W/es -xJf $D/es.tar.xz && tar -C $W/c -xJf $D/c.tar.xz && xz -dc $D/passage.pcm.xz > $W/passage.pcm; }
cp $D/*.py $W/
ls -la $W $W/cache 2>/dev/null | head -5 > $OUT/machine.txt
nvidia-smi -L >> $OUT/machine.txt; python3 -c 'import torch,numpy,scipy,tiktoken;print(torch.__version__,numpy.__version__,scipy.__version__,tiktoken.__version__)' >> $OUT/machine.txt
# SEED=1: the first call starts from the committed model (seed.py; the run's own checkpoint of an earlier session
# is gone), not from scratch; a carried $D/ckpt-in.pt wins, and later calls resume from $W/state.pt.
# LR: the schedule's peak learning rate (train.py --lr; 1.5e-3 unless set; the fifth session ran 5e-4 from the seed)
# PSTART: the curriculum's least progress (train.py --progress-start; 0 unless set; the sixth session ran 0.4 from
# the seed: the full mix from step 0)
CK=$D/ckpt-in.pt
if [ "${SEED:-}" = 1 ] && [ ! -e $CK ]; then
  CK=$W/ckpt-seed.pt; [ -e $CK ] || python3 $W/seed.py --model $D/../../testdata/speechkit/ggml-speechkit-q8_0.bin \
    --total ${TOTAL:-1350} --out $CK | tee $OUT/seed.log
fi
cd $W
PYTHONUNBUFFERED=1 python3 train.py --kit $D --espeak $W/es --corpus $W/c --eval-pcm $W/passage.pcm \
  --ckpt $CK --state $W/state.pt --out $W/out$N --cache $W/cache \
  --total ${TOTAL:-1350} --stop-at $STOP --reserve ${RESERVE:-45} --lr ${LR:-1.5e-3} --progress-start ${PSTART:-0} --batch 256 --copies ${COPIES:-1} 2>&1 | tee $OUT/stdout.log
cd $W/out$N && split -b 12M ckpt.pt $OUT/ckpt.pt.part. && cp ggml-speechkit-q8_0.bin pytorch-eval.json $OUT/ \
  && sha256sum ckpt.pt ggml-speechkit-f16.bin ggml-speechkit-q8_0.bin pytorch-eval.json > $OUT/sha256.txt
ls -la $OUT
