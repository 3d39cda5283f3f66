#!/bin/bash
# Call 2 (g1's machine): the kit model's second third and hark0 (main e5ab622, -tags hark_nocubin). $K holds wq8.xz.2, hark0.xz.
set -u
K=${K:-.gpu/g2}; K=$(cd "$K" && pwd); W=/w/g
cd $W && [ -x pc/bin/whisper-cli ] || { echo "not g1's machine"; exit 3; }
cp $K/wq8.xz.2 . && xz -dc $K/hark0.xz > hark0 && chmod +x hark0 && ls -la
