#!/bin/bash
# Call 2 of 3 (p1's machine): the kit model's second third. $K holds wq8.xz.2.
set -u
K=${K:-.gpu/p2}; K=$(cd "$K" && pwd); cd /w/p && cp $K/wq8.xz.2 . && ls -la
