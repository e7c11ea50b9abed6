#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The layer rule can fail: compiled with the include paths the build gives
# LAYER_DIR's target, an #include of HEADER must fail for want of the file
# when WANT is "refused", and compile when WANT is "allowed".
# Usage: check.sh CC PUBLIC_INCLUDE LAYER_DIR HEADER refused|allowed
set -euo pipefail
cc=$1 public=$2 layers=$3 header=$4 want=$5
src=$(mktemp --suffix=.c)
trap 'rm -f "$src"' EXIT
printf '#include "%s"\nint ms_layer_probe;\n' "$header" >"$src"
if err=$("$cc" -std=c11 -D_GNU_SOURCE -fsyntax-only -I"$public" -I"$layers" "$src" 2>&1); then
    got=allowed
elif grep -q "No such file or directory" <<<"$err"; then
    got=refused
else
    echo "$header: failed for another reason:" >&2
    echo "$err" >&2
    exit 1
fi
if [ "$got" != "$want" ]; then
    echo "$header seen from $layers: $got, want $want" >&2
    exit 1
fi
echo "$header from $(basename "$layers"): $got"
