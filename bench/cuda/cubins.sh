#!/bin/bash
# Makes cuda/cubin/ on a GPU machine (ptxas from its CUDA toolkit; no Go needed), from the repository root of the
# checkout the device tool carries: every module's embedded PTX (cuda/kernels*.ptx.xz: xz) compiled by ptxas
# -O3 for the architectures cuda/cubin.go's cubinTargets lists, xz -9e'd, and SOURCE ("MODULE SHA-256" of each
# module's .ptx.xz as embedded, then "pdl": the cubins for sm_90 and newer are made from the PTX's programmatic-
# dependent-launch form, which $PTXPDL writes: build it here, `CGO_ENABLED=0 go build -o .gpu/NAME/ptxpdl
# ./cuda/ptxpdl/ptxpdl`, carry it and set PTXPDL=.gpu/NAME/ptxpdl). Writes $OUT/cubin/ (copy it over cuda/cubin/ and
# commit; TestCubinGuard checks it) and $OUT/cubins.log (ptxas's version, times and sizes). MODULES="sm80" (say)
# compiles only those modules: SOURCE then names only them (complete it from the committed one for the others).
set -eu
OUT=${OUT:-/tmp/out}; T=$(mktemp -d); export PATH=$PATH:/usr/local/cuda/bin
[ -x "${PTXPDL:-}" ] || { echo "cubins.sh: set PTXPDL to the ptxpdl binary (cuda/ptxpdl/ptxpdl, built for linux/amd64)" >&2; exit 2; }
mkdir -p "$OUT/cubin"
{ ptxas --version | tail -2
  declare -A arch=([kernels]="sm_75 sm_80 sm_86 sm_89 sm_90" [sm80]="sm_80 sm_86 sm_89 sm_90" [sm90a]="sm_90a")
  declare -A file=([kernels]=kernels.ptx.xz [sm80]=kernels_sm80.ptx.xz [sm90a]=kernels_sm90a.ptx.xz)
  : > "$OUT/cubin/SOURCE"
  for m in ${MODULES:-kernels sm80 sm90a}; do
    xz -dc "cuda/${file[$m]}" > "$T/$m.ptx"
    "$PTXPDL" < "$T/$m.ptx" > "$T/$m.pdl.ptx"
    echo "$m $(sha256sum "cuda/${file[$m]}" | cut -d' ' -f1) pdl" >> "$OUT/cubin/SOURCE"
    for a in ${arch[$m]}; do
      src=$m.ptx; [ "${a:3:2}" -ge 90 ] && src=$m.pdl.ptx
      ( /usr/bin/time -f "ptxas $m $a ($src): %e s" ptxas -arch=$a -O3 "$T/$src" -o "$T/$m.$a.cubin" &&
        xz -9e -T1 -c "$T/$m.$a.cubin" > "$OUT/cubin/$m.$a.cubin.xz" &&
        echo "$m.$a: $(stat -c %s "$T/$m.$a.cubin") bytes, xz $(stat -c %s "$OUT/cubin/$m.$a.cubin.xz")" ) &
    done
  done
  wait
  cat "$OUT/cubin/SOURCE"; du -sb "$OUT/cubin"; } > "$OUT/cubins.log" 2>&1
cat "$OUT/cubins.log"
