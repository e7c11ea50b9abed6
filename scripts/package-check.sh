#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The .debs as a user gets them (docs/install.md, "The fresh-root check"):
# build them (scripts/package.sh), hold them to lintian (no error), install
# them with apt, record and report the demo with /usr/bin/memscribe (the
# Windows demo too, where Wine is), then purge them and fail if anything
# they installed is left. Needs root (or sudo), lintian (setup.sh --test)
# and a main-job build (scripts/demo.sh) in DIR.
# Usage: scripts/package-check.sh [--no-build] [DIR]    (default: build)
#   --no-build  the packages already in DIR/packages, not built again, and
#               lintian only where it is installed (a root made to try them)
set -euo pipefail
cd "$(dirname "$0")/.."
build=1
[ "${1:-}" = --no-build ] && { build=0; shift; }
dir=${1:-build}
say() { echo "package-check: $*" >&2; }
die() { say "$*"; exit 1; }
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo

if [ "$build" -eq 1 ]; then
  mapfile -t debs < <(bash scripts/package.sh "$dir")
else
  mapfile -t debs < <(ls "$dir"/packages/*.deb)
fi
[ ${#debs[@]} -gt 0 ] || die "no package in $dir/packages"
say "packages: ${debs[*]}"
for d in "${debs[@]}"; do
  dpkg-deb -f "$d" Package Version Depends Recommends >&2
done
if [ "$build" -eq 1 ] || command -v lintian >/dev/null; then
  lintian --fail-on error "${debs[@]}" >&2 || die "lintian reports an error (above)"
fi

# What the packages hold, and which of its folders exist before: after the
# purge every file and link must be gone, and every folder that was not there.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for d in "${debs[@]}"; do
  dpkg-deb -c "$d" | awk '{ p = $6; sub(/^\./, "", p); sub(/\/$/, "", p); if (p != "") print substr($1, 1, 1), p }'
done | sort -u > "$work/contents"
while read -r type path; do
  [ "$type" = d ] && [ -d "$path" ] && echo "$path"
done < "$work/contents" > "$work/dirs-before"

pkgs=()
for d in "${debs[@]}"; do pkgs+=("$(dpkg-deb -f "$d" Package)"); done
abs=()
for d in "${debs[@]}"; do abs+=("$(realpath "$d")"); done
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${abs[@]}" >&2
[ -x /usr/bin/memscribe ] || die "no /usr/bin/memscribe after installing ${pkgs[*]}"
/usr/bin/memscribe --version >&2
man -w memscribe-record > /dev/null || die "man finds no memscribe-record page"

/usr/bin/memscribe record -o "$work/demo.mscr" -- ./"$dir"/examples/memtest_demo > /dev/null
/usr/bin/memscribe report --top 3 "$work/demo.mscr" | tee "$work/report.txt" >&2
grep -q "peak heap in use" "$work/report.txt" || die "/usr/bin/memscribe report said no peak"
exe=$dir/windows/x86_64/memtest_demo_win.exe
if [[ " ${pkgs[*]} " == *" memscribe-windows "* ]] && [ -x /usr/lib/wine/wine64 ] && [ -f "$exe" ]; then
  /usr/bin/memscribe record -o "$work/demo-win.mscr" -- "./$exe" > /dev/null
  /usr/bin/memscribe report --top 3 "$work/demo-win.mscr" | grep -q "peak heap in use" ||
    die "/usr/bin/memscribe report of the Windows demo said no peak"
  say "the Windows demo recorded through /usr/lib/memscribe/windows"
fi

DEBIAN_FRONTEND=noninteractive $SUDO apt-get purge -y -q "${pkgs[@]}" >&2
left=0
while read -r type path; do
  if [ "$type" = d ]; then
    if [ -d "$path" ] && ! grep -qxF "$path" "$work/dirs-before"; then
      say "left after the purge: the folder $path"
      left=1
    fi
  elif [ -e "$path" ] || [ -L "$path" ]; then
    say "left after the purge: $path"
    left=1
  fi
done < "$work/contents"
for p in "${pkgs[@]}"; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -qv "not-installed"; then
    say "dpkg still knows $p: $(dpkg-query -W -f='${Status}' "$p")"
    left=1
  fi
done
[ "$left" -eq 0 ] || die "the purge left files behind (above)"
say "installed with apt, recorded and reported from /usr/bin, purged: nothing left"
