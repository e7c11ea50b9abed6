#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's two commands on a fresh Debian 12 machine: make a minimal
# Debian 12 root with debootstrap, copy in the committed tree (not the
# working tree) and ../shared, run the main job there, check that it wrote
# the trace and the HTML report, then run the test command in the same root,
# then install the main job's .debs with apt, use them and purge them
# (scripts/package-check.sh).
# Prints how long each step took; exits non-zero if either command fails.
#
# Usage: scripts/fresh-check.sh [--keep] [--no-cache] [--rev REV] [--dir DIR]
#   --keep      leave the root on disk afterwards (its path is printed)
#   --no-cache  do not reuse the host's downloaded packages
#   --rev REV   the commit to check (default HEAD)
#   --dir DIR   where to make the root (default: a new folder under /var/tmp)
# Needs root (debootstrap, chroot, mount); installs debootstrap if missing.
#
# Everything is mounted inside a private mount namespace (unshare), so no
# mount can outlive the check or leak into the host, whatever way it ends
# (failure, Ctrl-C, a kill); the trap also unmounts explicitly and stops any
# process left running in the root before the root is removed. Packages come
# from the project's own setup scripts; only the downloads are shared with
# the host (apt's archive folder bind-mounted into the root).
set -euo pipefail

# One block, read whole before it runs: bash reads a script as it goes, and
# an edit of this file during a check would otherwise break the check.
{
keep=0 cache=1 rev=HEAD dir=
while [ $# -gt 0 ]; do
  case $1 in
    --keep) keep=1 ;;
    --no-cache) cache=0 ;;
    --rev) rev=${2:?--rev needs a commit}; shift ;;
    --dir) dir=${2:?--dir needs a folder}; shift ;;
    -h|--help) awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"; exit 0 ;;
    *) echo "fresh-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

repo=$(cd "$(dirname "$0")/.." && pwd)
shared=$(cd "$repo/.." && pwd)/shared
say() { echo "fresh-check: $*" >&2; }
die() { say "$*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot and mount need it)"
# Pinned now: commits made while the root is being built are not checked.
commit=$(git -C "$repo" rev-parse --verify -q "$rev^{commit}") || die "$repo: no commit '$rev'"
rev=$commit
if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
  say "note: the working tree has uncommitted changes; checking the committed $rev only"
fi

# The Debian archive this machine's apt is configured with: every source
# whose suite is bookworm or bookworm-*, from sources.list(.d) in either
# syntax. The root gets the suites debootstrap and a fresh installation
# write, bookworm and bookworm-updates, but not bookworm-security: its i386
# index has been served here with a size mismatch for hours at a time, and
# with it wine32 (32-bit Windows programs, which every test run must run)
# does not install (docs/windows.md, "32-bit programs").
debian_sources() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    # One-line style: deb [options] URI SUITE COMPONENTS...
    sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$f" |
      awk '$1 == "deb" && ($3 == "bookworm" || $3 ~ /^bookworm-/) { print $2, $3 }'
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    # deb822 stanzas, separated by blank lines.
    awk 'function flush() { if (types ~ /(^| )deb( |$)/ && enabled != "no")
                              for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++)
                                if (s[j] == "bookworm" || s[j] ~ /^bookworm-/) print u[i], s[j]
                            types = ""; enabled = ""; nu = 0; ns = 0 }
         /^[ \t]*#/ { next }
         /^[ \t]*$/ { flush(); next }
         tolower($1) == "types:" { types = $0; sub(/^[^:]*:[ \t]*/, "", types) }
         tolower($1) == "enabled:" { enabled = tolower($2) }
         tolower($1) == "uris:" { for (i = 2; i <= NF; i++) u[++nu] = $i }
         tolower($1) == "suites:" { for (i = 2; i <= NF; i++) s[++ns] = $i }
         END { flush() }' "$f"
  done
}
mapfile -t sources < <(debian_sources | awk '$2 !~ /-security$/ && !seen[$0]++')
[ ${#sources[@]} -gt 0 ] || die "no Debian 12 (bookworm) source in /etc/apt/sources.list{,.d}"
mirror=
for s in "${sources[@]}"; do
  [ "${s#* }" = bookworm ] && { mirror=${s%% *}; break; }
done
[ -n "$mirror" ] || die "no source for the suite bookworm itself in /etc/apt (only: ${sources[*]})"

if ! command -v debootstrap >/dev/null; then
  say "installing debootstrap"
  apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >&2
fi

if [ -z "$dir" ]; then
  dir=$(mktemp -d /var/tmp/memscribe-fresh.XXXXXX)
else
  mkdir -p "$dir"
  [ -z "$(ls -A "$dir")" ] || die "$dir: not empty (the root must be made fresh)"
fi
# mktemp makes it 0700; as the root's / it must be 0755, or programs run as
# another user in it (the tests' setpriv --reuid=nobody) find no libc.
chmod 0755 "$dir"
root=$(cd "$dir" && pwd)

# Stop whatever still runs in the root (a test's server, a daemonised
# child), then remove the root unless asked to keep it. --one-file-system:
# never descend into anything that might still be mounted there.
cleanup() {
  local rc=$? p _
  trap - EXIT INT TERM
  for _ in 1 2 3; do
    for p in /proc/[0-9]*; do
      [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && kill -9 "${p#/proc/}" 2>/dev/null
    done
    sleep 0.2
  done
  if grep -q " $root/" /proc/self/mountinfo; then
    say "mounts remain under $root; leaving it on disk"
  elif [ "$keep" -eq 1 ]; then
    say "root kept at $root"
  else
    rm -rf --one-file-system "$root"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

t_start=$SECONDS
elapsed() { local t=$((SECONDS - $1)); printf '%dm%02ds' $((t / 60)) $((t % 60)); }

say "debootstrap --variant=minbase bookworm $root $mirror"
t=$SECONDS
cache_args=()
[ "$cache" -eq 1 ] && cache_args=(--cache-dir=/var/cache/apt/archives)
debootstrap --variant=minbase "${cache_args[@]}" bookworm "$root" "$mirror" > "$root.debootstrap.log" 2>&1 ||
  { tail -20 "$root.debootstrap.log" >&2; rm -f "$root.debootstrap.log"; die "debootstrap failed"; }
rm -f "$root.debootstrap.log"
t_debootstrap=$(elapsed "$t")

for s in "${sources[@]}"; do echo "deb ${s% *} ${s#* } main"; done > "$root/etc/apt/sources.list"
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# What Debian's installer writes and debootstrap does not: without it
# "localhost" has no address, and chromedriver's clients (selenium) cannot
# reach it.
[ -e "$root/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' \
  > "$root/etc/hosts"
# The network's own certificate authorities (an egress proxy's: the npm
# registry is reached through it), as a machine on this network has them in
# /usr/local/share/ca-certificates; the root's ca-certificates package adds
# them to its bundle when setup installs it, as resolv.conf gives it names.
if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
fi
mkdir -p "$root/work/memscribe"
git -C "$repo" archive --format=tar "$rev" | tar -x -C "$root/work/memscribe"
if [ -d "$shared" ]; then
  cp -r "$shared" "$root/work/shared"
else
  say "note: no $shared beside the repository; the root gets none"
fi
say "root ready in $t_debootstrap: $(git -C "$repo" rev-parse --short "$rev") in /work/memscribe, apt sources: ${sources[*]}"

# The two commands, in a private mount namespace. Each step's output goes to
# the terminal and to a log beside the root (kept on failure).
cat > "$root/work/steps.sh" <<'STEPS'
set -euo pipefail
root=$1 cache=$2 root_dev=$3 i386=$4
umount_all() {
  local m
  for m in $(awk -v r="$root" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
}
trap umount_all EXIT
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
# The root's own /dev, never the host's (root-dev.sh says why).
bash "$root_dev" "$root"
if [ "$cache" -eq 1 ]; then
  mount --bind /var/cache/apt/archives "$root/var/cache/apt/archives"
fi
in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    CI="${CI:-}" MEMSCRIBE_FUZZ_SECONDS="${MEMSCRIBE_FUZZ_SECONDS:-60}" \
    MEMSCRIBE_REQUIRE_WINE32="$i386" MEMSCRIBE_REQUIRE_VIEWERS=1 \
    bash -c "cd /work/memscribe && $1"
}
step() {  # step NAME COMMAND: run it, timed, output also to NAME.log
  local t=$SECONDS rc=0
  echo "fresh-check: == $1: $2" >&2
  in_root "$2" 2>&1 | tee "$root/work/$1.log" || rc=$?
  echo "$1 $((SECONDS - t)) $rc" >> "$root/work/times"
  return "$rc"
}
step demo "bash scripts/demo.sh"
# The main job must leave its traces and reports, the Windows demo's (64
# and, where the kernel runs 32-bit programs, 32-bit: this root takes
# wine32) beside the Linux one's, and build without warnings.
win32=()
[ "$i386" = 1 ] && win32=(demo-out/demo-win32.mscr)
for f in demo-out/demo.mscr demo-out/report.html demo-out/demo-win.mscr demo-out/report-win.html \
         "${win32[@]}"; do
  [ -s "$root/work/memscribe/$f" ] || { echo "fresh-check: the main job wrote no $f" >&2; exit 1; }
done
if grep -n ': warning: ' "$root/work/demo.log" >&2; then
  echo "fresh-check: the main job's build printed warnings (above)" >&2
  exit 1
fi
# The demo runs before the tests install libc6-dbg: its rows must still end
# at the demo's code, not in libc's or the loader's nameless frames
# (docs/symbols.md, the entry class).
if grep -nE '< (libc\.so|ld-linux)[^ ]*\+0x[0-9a-f]+$' "$root/work/demo.log" >&2; then
  echo "fresh-check: the main job's rows end in a nameless libc frame (above)" >&2
  exit 1
fi
# The test build has -Werror: a warning there fails the step by itself.
step test "bash scripts/test.sh"
# The .debs of the main job's build: lintian, installed with apt, the demo
# recorded and reported by /usr/bin/memscribe, purged, nothing left.
step package "bash scripts/package-check.sh build"
# The root's /dev is its own: replacing /dev/stdout there by a regular
# file, as a careless command run as root does, leaves the host's alone.
in_root 'rm -f /dev/stdout && echo planted > /dev/stdout && [ -f /dev/stdout ]' ||
  { echo "fresh-check: could not replace /dev/stdout in the root" >&2; exit 1; }
STEPS

rc=0
host_stdout=$(readlink /dev/stdout || echo "not a link")
# The root shares this kernel: 32-bit Windows is required of it only where
# the kernel runs 32-bit programs (scripts/runs-i386.sh).
i386=0
if bash "$repo/scripts/runs-i386.sh"; then
  i386=1
else
  say "this kernel runs no 32-bit x86 programs: 32-bit Windows is not required of the root"
fi
unshare --mount --propagation private -- bash "$root/work/steps.sh" "$root" "$cache" \
  "$repo/scripts/root-dev.sh" "$i386" || rc=$?
if [ "$(readlink /dev/stdout || echo "not a link")" != "$host_stdout" ]; then
  say "the host's /dev/stdout changed during the check (was '$host_stdout', now" \
    "'$(readlink /dev/stdout || stat -c %F /dev/stdout)'): the root's /dev is not its own"
  rc=1
else
  say "the host's /dev/stdout is untouched ($host_stdout) after the root's was replaced"
fi

say "times: debootstrap and copy $t_debootstrap"
if [ -f "$root/work/times" ]; then
  while read -r name secs code; do
    say "  $name: $((secs / 60))m$(printf '%02d' $((secs % 60)))s, exit $code"
  done < "$root/work/times"
fi
say "total $(elapsed "$t_start")"
if [ "$rc" -ne 0 ]; then
  for log in demo test package; do
    [ -f "$root/work/$log.log" ] && cp "$root/work/$log.log" "$root.$log.log" &&
      say "the $log step's output is kept in $root.$log.log"
  done
  die "FAILED (exit $rc)"
fi
say "both README commands and the .debs passed on a fresh Debian 12 root"
exit
}
