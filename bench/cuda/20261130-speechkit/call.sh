#!/bin/bash
# speechkit's smoke call on the H200 (issue #39; README.md beside this file):
# from the checkout's root, with the carried folder $K (default .gpu/speechkit)
# holding es.tar.xz, c.tar.xz, passage.pcm.xz, the kit's gpt2.tiktoken and
# mel_filters.npz, and tools/speechkit's *.py. Renders 4,000 corpus sentences
# on the 16 cores, trains the real shape (128 wide, 6+4 layers, batch 256) for
# the rest of about 60 s with the curriculum compressed into 30 s (so the last
# steps run the full mix: long-form windows, prompts, augmentation), exports
# both whisper.cpp files and evaluates 8 sentences.
set -o pipefail
K=${K:-.gpu/speechkit}; D=$(pwd)/$K; W=/tmp/sk
mkdir -p $W/es $W/c $W/out
s=$(date +%s.%N)
tar -C $W/es -xJf $D/es.tar.xz && tar -C $W/c -xJf $D/c.tar.xz && xz -dc $D/passage.pcm.xz > $W/passage.pcm || exit 1
python3 -c "import sys; print(f'unpacked in {float(sys.argv[2]) - float(sys.argv[1]):.1f} s')" $s $(date +%s.%N) | tee $OUT/machine.txt
nvidia-smi -L >> $OUT/machine.txt; nproc >> $OUT/machine.txt
python3 -c 'import torch,numpy,scipy,tiktoken;print(torch.__version__,numpy.__version__,scipy.__version__,tiktoken.__version__)' >> $OUT/machine.txt 2>&1
cd $D && PYTHONUNBUFFERED=1 python3 train.py --kit $D --espeak $W/es --corpus $W/c --eval-pcm $W/passage.pcm \
  --ckpt $W/none.pt --out $W/out --cache /dev/shm/skcache --limit 4000 --copies 1 --procs 16 \
  --total 30 --stop-at 66 --reserve 20 --batch 256 --eval-limit 8 --watch 1000 2>&1 | tee $OUT/train-stdout.log
cd $W/out && cp pytorch-eval.json ggml-speechkit-q8_0.bin $OUT/ && sha256sum ckpt.pt ggml-speechkit-f16.bin ggml-speechkit-q8_0.bin pytorch-eval.json > $OUT/sha256.txt
ls -la $W/out >> $OUT/machine.txt
