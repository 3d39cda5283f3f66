#!/bin/bash
# Second GPU call for issue 35, second part: call.sh on the batched-load kernel, with TestGPUCopyBandwidth left out
# of the cuda package's GPU tests (49 s in call 1).
GPUTESTS='^TestGPU(Errors|StoriesReplay|SharedByTwoModels)$' exec bash "$(dirname "$0")/call.sh"
