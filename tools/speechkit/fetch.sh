#!/bin/sh
# Downloads and extracts the Debian packages speechkit uses (README.md lists
# them) into $1, replaces libpcaudio by the stub, and builds the corpus into $2.
set -eu
root=$1; corpus=$2; here=$(cd "$(dirname "$0")" && pwd)
shared=${HARK_TESTDATA:-$here/../../../shared}
tmp=$(mktemp -d)
(cd "$tmp" && apt-get download espeak-ng libespeak-ng1 espeak-ng-data libsonic0 fortunes fortunes-min wordnet-base)
mkdir -p "$root"
for f in "$tmp"/*.deb; do dpkg-deb -x "$f" "$root"; done
lib=$root/usr/lib/x86_64-linux-gnu
gcc -shared -fPIC -O2 -Wl,-soname,libpcaudio.so.0 -o "$lib/libpcaudio.so.0" "$here/stub/pcaudio.c"
ls "$tmp" > "$root/PACKAGES"
rm -rf "$tmp"
python3 "$here/corpus.py" --root "$root" --shared "$shared" --out "$corpus"
cp "$here/vocabulary.txt" "$corpus/"
