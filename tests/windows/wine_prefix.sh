#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ctest fixture for the Windows tests: a fresh WINEPREFIX for this test run
# (setup), and its wineserver stopped afterwards (cleanup).
# Usage: wine_prefix.sh setup|cleanup PREFIX WINE
set -euo pipefail
action=$1 prefix=$2 wine=$3
export WINEPREFIX=$prefix WINEDEBUG=-all
case $action in
setup)
    rm -rf "$prefix"
    mkdir -p "$prefix"
    # first run creates the prefix (~10 s); no display, no Mono/Gecko prompts
    WINEDLLOVERRIDES="mscoree,mshtml=" "$wine" wineboot --init >/dev/null 2>&1
    # the registry files are written when the wineserver exits
    "$(dirname "$wine")/wineserver" -w
    test -f "$prefix/system.reg" || { echo "wine_prefix: $prefix: wineboot made no registry"; exit 1; }
    ;;
cleanup)
    "$(dirname "$wine")/wineserver" -k 2>/dev/null || true
    ;;
esac
