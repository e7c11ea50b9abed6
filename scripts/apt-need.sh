#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install, from the Debian archive apt is set up with, those of the packages
# named that are not installed; nothing (and no apt-get update) when all are.
#
# Usage: scripts/apt-need.sh [--root DIR] PACKAGE...
#   --root DIR  in the Debian root DIR (chroot), not on this machine
# As root, or through sudo. Prints what it installs on stderr; apt-get's
# own output goes there too, so stdout stays the caller's.
set -euo pipefail
root=
if [ "${1:-}" = --root ]; then
  root=${2:?--root needs a folder}
  shift 2
fi
run=()
[ -z "$root" ] || run=(chroot "$root")
[ "$(id -u)" -eq 0 ] || run=(sudo "${run[@]}")
missing=()
for p in "$@"; do
  # shellcheck disable=SC2016 # dpkg-query's own ${Status}
  "${run[@]}" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0
echo "apt-need: installing${root:+ in $root}: ${missing[*]}" >&2
"${run[@]}" apt-get update -q >&2
"${run[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
  "${missing[@]}" >&2
