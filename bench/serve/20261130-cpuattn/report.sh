#!/usr/bin/env bash
# perf report of a profile as the profile-*.txt files here: inclusive and
# self shares, the shared object, lines >= 0.3% inclusive; then the shares
# by shared object.
# Usage: report.sh IN.data > OUT.txt
set -euo pipefail
echo "# perf record -e cpu-clock -F 4000 -g; perf report --children (inclusive %, self %, object), lines >= 0.3% inclusive"
perf report -i "$1" --children --stdio --percent-limit 0.3 -g none 2>/dev/null | grep -v '^$' | grep -v '^#' | sed -E 's/^( +\S+ +\S+) +\S+ +/\1  /'
echo "# by shared object (self)"
perf report -i "$1" --no-children --sort dso --stdio -g none 2>/dev/null | grep -v '^$' | grep -v '^#' | sed 's/^/# dso /'
