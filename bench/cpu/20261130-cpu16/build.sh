#!/usr/bin/env bash
# Moved to bench/cpu/build-hark.sh (one definition of the trimmed CPU build); kept so this folder's commands still run.
exec bash "$(dirname "$0")/../build-hark.sh" "$@"
