#!/bin/bash
# Fifth GPU call for issue 35, third round: call4.sh's tests and timings on the final tree's binaries
# (attention_mma_tc back to call 2's kernel, the aligned K/V test cases kept). Run from a folder holding hark.xz,
# msltest.test.xz, data.tar.xz, wq8.xz (call5.sh ran as a copy of call4.sh with this header).
exec bash "$(dirname "$0")/call4.sh"
