#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what memscribe needs from Debian 12's archive, if it is missing.
# Safe to run again: it only calls apt-get when a package is absent.
set -euo pipefail

# Build and run.
PKGS=(build-essential cmake pkg-config libzstd-dev libunwind-dev libdw-dev libelf-dev
      libiberty-dev)
# The i386 collector for 32-bit programs (lib/memscribe/i386, docs/frag.md).
PKGS+=(gcc-multilib)
# Tests: unit framework, fuzzer (clang), the real tools we compare with.
if [ "${1:-}" = "--test" ]; then
  PKGS+=(libcmocka-dev clang valgrind heaptrack)
  # Analysis e2e tests read the JSON output with jq.
  PKGS+=(jq)
  # memscribe export: the readers of each format, and the libraries it links.
  PKGS+=(massif-visualizer golang-go chromium sqlite3 libsqlite3-dev zlib1g-dev time)
  # plot, flamegraph, html: SVGs checked by a real XML parser, DOMs read by python3.
  PKGS+=(libxml2-utils python3)
  # glibc's debug info: the tests assert symbolized frames inside libc
  # (qsort, __libc_start_main); valgrind recommends it too.
  PKGS+=(libc6-dbg)
  # The unwinder checked against libunwind on real programs: cc1 -O2 on
  # libpng's example pngtest.c (tests/e2e/unwind_verify.sh); g++ comes with
  # build-essential, sqlite3 and python3 are above.
  PKGS+=(libpng-dev)
fi

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi
