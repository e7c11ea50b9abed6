#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what memscribe needs from Debian 12's archive, if it is missing.
#   setup.sh         what the main job needs: build and run memscribe, for
#                    Linux programs and (mingw-w64, Wine) Windows programs
#   setup.sh --test  that, and what the test suite needs on top
# MEMSCRIBE_NO_WINDOWS=1 leaves the Windows half out of the main job (a
# Linux-only machine: no mingw-w64, no Wine, no i386 architecture); the
# tests always need it. Safe to run again: it only calls apt-get when a
# package is absent.
# Every package a build links or a test relies on is named here, including
# libraries that are only dlopen'd: scripts/fresh-check.sh proves the lists
# on a fresh Debian 12 root.
set -euo pipefail

# Build and run: compiler and build tools, and every library memscribe
# links (compression, unwinding, DWARF, demangling; zlib and SQLite for
# `memscribe export`).
PKGS=(build-essential cmake pkg-config libzstd-dev libunwind-dev libdw-dev libelf-dev
      libiberty-dev zlib1g-dev libsqlite3-dev libmicrohttpd-dev)
# The i386 collector for 32-bit programs (lib/memscribe/i386, docs/frag.md).
PKGS+=(gcc-multilib)
# The man pages, made at build time from each command's --help
# (packaging/man.cmake); dpkg-dev's dpkg-shlibdeps finds the .debs'
# Depends (scripts/package.sh; build-essential brings it too), from the
# binaries CPack picks out with file(1).
PKGS+=(help2man dpkg-dev file)
# memscribe replay: the allocators it replays a trace against by name
# (jemalloc, tcmalloc, mimalloc; docs/replay.md).
PKGS+=(libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0)
windows=1
[ "${MEMSCRIBE_NO_WINDOWS:-0}" = 1 ] && [ "${1:-}" != "--test" ] && windows=0
if [ "$windows" = 1 ]; then
  # Windows programs (docs/windows.md): the collector DLL, the launcher and
  # the Windows demo are cross-built with mingw-w64 (x86_64 and i686) and
  # run under Wine; the launcher codes its chunks with zlib, which Debian
  # packages for mingw-w64 (it has no zstd there). 32-bit programs also
  # need wine32, from the i386 architecture (below).
  PKGS+=(gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64 gcc-mingw-w64-i686 g++-mingw-w64-i686
         wine64 libz-mingw-w64-dev)
fi
if [ "${1:-}" = "--test" ]; then
  # Unit framework, the fuzzer's compiler, the real tools we compare with.
  PKGS+=(libcmocka-dev clang valgrind heaptrack)
  # libFuzzer and the sanitizer runtimes clang links the fuzzer with
  # (clang only recommends them).
  PKGS+=(libclang-rt-14-dev)
  # Analysis e2e tests read the JSON output with jq; the heaptrack export's
  # test decompresses the .zst file it draws as heaptrack_gui does (zstd).
  PKGS+=(jq zstd)
  # memscribe export: the readers of each format (ms_print comes with
  # valgrind; `go tool pprof`; dh_view.html in chromium; the sqlite3 shell),
  # and GNU time for peak-RSS checks.
  PKGS+=(massif-visualizer golang-go chromium sqlite3 time)
  # memscribe metrics and serve's /metrics: promtool checks the text, a real
  # Prometheus scrapes it (tests/e2e/fleet_*.sh; started by the test on a
  # loopback port; where systemd runs, Debian also starts its own service on
  # :9090: `systemctl disable --now prometheus` if it is not wanted).
  # record --push-metrics: a real Pushgateway takes the pushes.
  PKGS+=(prometheus prometheus-pushgateway)
  # memscribe serve's page driven in a browser (tests/e2e/serve_*.sh), and curl for its rules.
  PKGS+=(chromium-driver python3-selenium curl)
  # plot, flamegraph, html: SVGs checked by a real XML parser, DOMs read by
  # python3; python3 also serves the debuginfod test's files.
  PKGS+=(libxml2-utils python3)
  # memscribe check --junit: its JUnit XML read back by a JUnit reader.
  PKGS+=(python3-junitparser)
  # glibc's debug info: the tests assert symbolized frames inside libc
  # (qsort, __libc_start_main); valgrind recommends it too.
  PKGS+=(libc6-dbg)
  # The style checks (scripts/check-style.sh, a ctest test): C layout and
  # shell scripts.
  PKGS+=(clang-format shellcheck)
  # The symbolizer dlopens libdebuginfod when DEBUGINFOD_URLS is set; its
  # test serves a binary over HTTP and needs the library present.
  PKGS+=(libdebuginfod1)
  # Symbols from PDBs (tests/windows/run_pdb.sh): clang (above) links the test
  # program with lld, which writes the PDB.
  PKGS+=(lld)
  # The unwinder checked against libunwind on real programs: cc1 -O2 on
  # libpng's example pngtest.c (tests/e2e/unwind_verify.sh); g++ comes with
  # build-essential, sqlite3 and python3 are above.
  PKGS+=(libpng-dev)
  # record -p (tests/e2e/record_attach.sh): a program strace traces is
  # refused; pgrep finds the program a recorder started.
  PKGS+=(strace procps)
  # Programs linked against jemalloc, mimalloc and tcmalloc as their malloc,
  # traced with their own APIs and operator new (tests/e2e/record_allocators.sh):
  # their headers and link libraries.
  PKGS+=(libjemalloc-dev libmimalloc-dev libgoogle-perftools-dev)
  # The zoo of real programs traced as untraced (tests/e2e/record_zoo.sh):
  # git and perl beside the bfd tools, make, g++, python3 and sqlite3 above
  # (clang brings the LLVM gold plugin the bfd tools load).
  PKGS+=(git perl)
  # Each export opened in its viewer, on a screen (tests/e2e/export_view_*.sh,
  # issue 46): heaptrack_gui and massif-visualizer (above) under Xvfb, read
  # through AT-SPI (at-spi2-core, python3-gi's Atspi), screenshots with xwd;
  # dh_view.html, pprof's web UI (its graph drawn by graphviz's dot) and
  # speedscope in Chromium driven by chromedriver and python3-selenium.
  PKGS+=(heaptrack-gui xvfb x11-apps x11-utils dbus at-spi2-core python3-gi gir1.2-atspi-2.0
         chromium-driver python3-selenium graphviz)
  # speedscope, a front-end asset from npm, pinned (SPEEDSCOPE_VERSION below);
  # npm itself from Debian where no npm is installed.
  command -v npm >/dev/null || PKGS+=(npm)
  # The packaging tests and the fresh-root check's package step
  # (tests/install.cmake, scripts/package-check.sh): lintian holds the .debs,
  # man renders each page, bash-completion runs the completion.
  PKGS+=(lintian man-db bash-completion)
elif [ $# -gt 0 ]; then
  echo "usage: setup.sh [--test]" >&2
  exit 2
fi

bash "$(dirname "$0")/apt-need.sh" "${PKGS[@]}"

# speedscope's built files (tests/e2e/export_view_speedscope.sh serves them
# from 127.0.0.1), from the npm registry at a pinned version, into a folder
# of their own; again only when that version is not there.
SPEEDSCOPE_VERSION=1.25.0
SPEEDSCOPE_DIR=/usr/local/share/memscribe-test
if [ "${1:-}" = "--test" ] &&
   ! grep -qs "\"version\": \"$SPEEDSCOPE_VERSION\"" "$SPEEDSCOPE_DIR/node_modules/speedscope/package.json"; then
  echo "setup: installing speedscope@$SPEEDSCOPE_VERSION from npm into $SPEEDSCOPE_DIR" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO mkdir -p "$SPEEDSCOPE_DIR"
  # npm trusts the system's certificate bundle, as apt and curl do (node's
  # own list lacks a local authority, such as a proxy's).
  cafile=()
  [ -s /etc/ssl/certs/ca-certificates.crt ] && cafile=(--cafile /etc/ssl/certs/ca-certificates.crt)
  $SUDO npm install --no-audit --no-fund --no-save "${cafile[@]}" --prefix "$SPEEDSCOPE_DIR" \
    "speedscope@$SPEEDSCOPE_VERSION" >&2
fi

# 32-bit Windows programs (docs/windows.md): wine32 from the i386 architecture.
# Adding an architecture is system-wide (dpkg --add-architecture i386).
# Debian's i386 index of the security suite has been served here with a size
# mismatch for hours at a time, and then wine32 will not install (a root with
# the suites debootstrap writes, bookworm and bookworm-updates, takes it:
# scripts/fresh-check.sh). One try: retrying a minute later did not help.
# If it fails, remove the architecture again (or every later apt-get update
# fails) and say plainly what will not work; never fail the Linux half
# (ctest reports windows.*_i686 as skipped, with why).
# A kernel that runs no 32-bit x86 program (scripts/runs-i386.sh) could not
# run wine32 either: then it is not installed, and the tests say why they
# skip.
i386=0
bash "$(dirname "$0")/runs-i386.sh" && i386=1
if [ "$windows" = 1 ] && [ "$i386" = 0 ]; then
  echo "setup: this machine runs no 32-bit x86 programs (the kernel refuses their exec):" \
       "wine32 is not installed, and 32-bit programs cannot be traced here" >&2
fi
if [ "$windows" = 1 ] && [ "$i386" = 1 ] &&
   ! dpkg-query -W -f='${Status}' wine32:i386 2>/dev/null | grep -q "install ok installed"; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO dpkg --add-architecture i386
  if ! { $SUDO apt-get update -q >&2 &&
         DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
           wine32:i386 >&2; }; then
    $SUDO dpkg --remove-architecture i386 || true
    $SUDO apt-get update -q >&2 || true
    echo "setup: WARNING: wine32:i386 is not installed (the i386 package index would not" \
         "download or resolve): 32-bit Windows programs cannot be traced here, and their" \
         "tests will be SKIPPED; 64-bit Windows and every Linux program are unaffected" >&2
  fi
fi
