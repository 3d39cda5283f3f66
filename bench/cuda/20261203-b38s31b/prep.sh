#!/bin/bash
# Builds b38s31b's device kit into .gpu/b38s31b/ (run from a checkout's root; the next session's checkout has no
# .gpu/ and no worktrees): the branch's hark and cuda.test from commit BR (the row buckets and the warmed graphs),
# main's hark from MAIN (the branch's base, for the servers alternated against it), all -tags hark_nocubin (the
# cubins come from the checkout's cuda/cubin: the branch changes no PTX), the test data from $HARK_TESTDATA, and
# this folder's call.sh. Then: run with carry [".gpu/b38s31b"], command `K=.gpu/b38s31b bash .gpu/b38s31b/call.sh`.
set -eu
BR=${BR:-ae984764d7ce2b7a8e21e10383d6a9e47c627fca}
MAIN=${MAIN:-f9d45f1070972eaf84f8f6179767ba4b90a41d57}
R=$(pwd); K=${KIT:-$R/.gpu/b38s31b}; T=$(mktemp -d)  # KIT: another kit folder
: "${HARK_TESTDATA:?set HARK_TESTDATA (the shared test data)}"
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.26.8+auto} CGO_ENABLED=0
mkdir -p $K
for c in BR MAIN; do
  git worktree add --detach $T/$c ${!c} > /dev/null
  (cd $T/$c && go build -tags hark_nocubin -trimpath -ldflags='-s -w' -o $T/hark-$c .)
done
(cd $T/BR && go test -c -tags hark_nocubin -trimpath -ldflags='-s -w' -o $T/cuda.test ./cuda)
xz -T2 -9e -c $T/hark-BR > $K/hark.xz
xz -T2 -9e -c $T/hark-MAIN > $K/hark-main.xz
xz -T2 -9e -c $T/cuda.test > $K/cuda.test.xz
tar -C $HARK_TESTDATA -cf - models/stories260K.gguf llm-kit/golden/stories260K.logits_f32.bin \
  llm-kit/golden/stories260K.golden.json llm-kit/tokenizers/smollm2 llm-kit/MANIFEST.json | xz -T2 -6 > $K/data.tar.xz
cp $R/bench/cuda/20261203-b38s31b/call.sh $K/call.sh  # the checkout's (run from its root)
printf 'branch %s\nmain %s\n' "$(git rev-parse $BR)" "$(git rev-parse $MAIN)" > $K/SOURCE.txt
for c in BR MAIN; do git worktree remove --force $T/$c; done
rm -rf $T
du -cb $K/* | tail -1; ls -la $K
