#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configure and build into a build directory. Usage: build.sh DIR [cmake args...]
set -euo pipefail
dir=$1; shift
cmake -S "$(dirname "$0")/.." -B "$dir" "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
