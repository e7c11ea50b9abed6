#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configure and build into a build directory. Usage: build.sh DIR [cmake args...]
# cmake's configure chatter is kept out of the way, but if configuring fails
# its whole output is shown: the lines that name a missing package ("No
# package 'sqlite3' found") go to stdout, before the error on stderr.
set -euo pipefail
dir=$1; shift
mkdir -p "$dir"
log=$dir/configure.log
if ! cmake -S "$(dirname "$0")/.." -B "$dir" "$@" > "$log" 2>&1; then
  cat "$log" >&2
  echo "build.sh: configuring $dir failed (output above, also in $log)" >&2
  exit 1
fi
cmake --build "$dir" -j"$(nproc)"
