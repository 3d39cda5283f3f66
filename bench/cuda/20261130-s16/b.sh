#!/bin/bash
# Call B (on call A's machine, still no GPU process): the test binaries (built with -tags hark_nocubin: they load
# the checkout's cuda/cubin through HARK_CUDA_CUBIN_DIR) and the long-form file, from which `trim` writes the
# shared long-form WAV and the 204.2-s excerpt. $K holds msltest.test.xz, cuda.test.xz, longform.flac.
set -u
K=${K:-.gpu/s16b}; K=$(cd "$K" && pwd); W=/w/s16
cd $W || exit 3
for b in msltest.test cuda.test; do xz -dc $K/$b.xz > $b && chmod +x $b; done
./trim $K/longform.flac shared/audio/ljspeech-longform-LJ001-0021-0076.wav 100000
./trim $K/longform.flac excerpt.wav 204.2
ls -la $W $W/shared/audio
