#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe on another CPU, from this x86-64 Debian 12 machine (issue 66,
# docs/platforms.md): make an arm64 Debian 12 root (debootstrap, the
# emulator qemu-user-static through binfmt_misc), install there the
# libraries memscribe links and the tools its tests use, cross-build the
# tree and its tests with clang and lld against that root, and run a named
# subset of the suite inside the root, every program emulated.
#
# Usage: scripts/cross-check.sh arm64 [--root DIR] [--tests REGEX] [--all] [--vm]
#   arm64          the one other CPU so far (AArch64)
#   --root DIR     the arm64 root (default /var/tmp/memscribe-arm64); made
#                  if it is not there, reused (packages topped up) if it is
#   --tests REGEX  the tests to run (ctest -R; default: the subset below)
#   --all          every test the build has (many need what qemu-user
#                  cannot do: ptrace, Syscall User Dispatch)
#   --vm           then the tests qemu-user cannot run (ptrace: record -p,
#                  --reach; seccomp filters) in a virtual machine with
#                  Debian's arm64 kernel (scripts/arm64-vm.sh); with
#                  --tests, only there
# Needs root (debootstrap, chroot, binfmt_misc, mount). Prints each step's
# time; exits 0 when every test run passed, 1 otherwise, 2 on a usage error.
#
# Why clang: Debian's gcc-aarch64-linux-gnu conflicts with gcc-multilib,
# which the i386 collector needs; clang cross-compiles with the root's own
# gcc start files and libgcc. Why these tests: qemu-user emulates neither
# ptrace between guest processes (record -p, --reach, the flight
# recorder's attach) nor Syscall User Dispatch (--vm-precise), ignores
# MADV_WIPEONFORK (a child forked by a raw clone, not glibc's fork, is not
# told from its parent), and refuses PR_SET_CHILD_SUBREAPER (record says
# so and goes on).
set -euo pipefail

{
arch='' root=/var/tmp/memscribe-arm64 tests='' all=0 vm=0
while [ $# -gt 0 ]; do
  case $1 in
    arm64) arch=arm64 ;;
    --root) root=${2:?--root needs a folder}; shift ;;
    --tests) tests=${2:?--tests needs a regular expression}; shift ;;
    --all) all=1 ;;
    --vm) vm=1 ;;
    -h|--help) awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"; exit 0 ;;
    *) echo "cross-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ "$arch" = arm64 ] || { echo "cross-check: name the CPU: arm64 (see --help)" >&2; exit 2; }

repo=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "cross-check: $*" >&2; }
die() { say "$*"; exit 1; }
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot, binfmt_misc and mount need it)"
t_start=$SECONDS
elapsed() { local t=$((SECONDS - $1)); printf '%dm%02ds' $((t / 60)) $((t % 60)); }

# The default subset: the exact-number tests that need no ptrace, no
# Syscall User Dispatch and no browser in the root: the unit tests,
# records of threads, C++, exec and fork, the own unwinder against
# libunwind on real programs, the analyses and the golden traces. Grown as
# the port goes on.
SUBSET='^(unit\.test_(ana_(json|model|window|pmodel|plan|names|aggregate|argv|supp|stacks|check)|fmt_.*|rec_(stream|session|agg)|util.*)|e2e\.(record_(calls|cxx|threads|procs|short|same_sites)|unwind_verify\.small|vm_precise_refused|dump_golden|dump_errors|ana_(threads|temporary))$)'
# The tests that need a kernel of their own: ptrace between processes
# (record -p, --reach) and seccomp filters.
VM_SUBSET='^(unit\.test_rec_(seccomp|reach)|e2e\.(record_(attach|attach_killed|attach_seccomp|seccomp|procs)|rec_reach(_attach|_request)?|diff_reach))$'
vm_tests=$VM_SUBSET
if [ "$vm" -eq 1 ] && [ -n "$tests" ]; then
  vm_tests=$tests tests=''
else
  [ -n "$tests" ] || tests=$SUBSET
fi
[ "$all" -eq 0 ] || tests=.

# Host side: the emulator, debootstrap, the cross compiler and linker.
host_pkgs=(qemu-user-static binfmt-support debootstrap clang lld)
bash "$repo/scripts/apt-need.sh" "${host_pkgs[@]}"
# binfmt_misc runs arm64 programs through qemu-aarch64-static; its F flag
# opens the emulator once, so it works inside the chroot too.
[ -e /proc/sys/fs/binfmt_misc/status ] ||
  mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
  die "binfmt_misc cannot be mounted here: arm64 programs cannot be run"
update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
grep -q '^flags: .*F' /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null ||
  die "binfmt_misc has no qemu-aarch64 entry with the F flag (update-binfmts --display qemu-aarch64)"

# The root: Debian 12 for arm64 with the build's libraries and the tests'
# tools. A root made before is topped up.
ROOT_PKGS=(build-essential cmake pkg-config libzstd-dev libunwind-dev libdw-dev libelf-dev
           libiberty-dev zlib1g-dev libsqlite3-dev libmicrohttpd-dev libcmocka-dev
           libjemalloc-dev libmimalloc-dev libgoogle-perftools-dev libpng-dev
           jq python3 procps file zstd libc6-dbg git sqlite3)
# What the machine's tests use besides: record_attach's strace, rec_reach's
# oracle (memcheck).
[ "$vm" -eq 0 ] || ROOT_PKGS+=(strace valgrind)
if [ ! -x "$root/usr/bin/apt-get" ]; then
  t=$SECONDS
  say "debootstrap --arch=arm64 --variant=minbase bookworm $root (emulated: several minutes)"
  mkdir -p "$root"
  debootstrap --arch=arm64 --variant=minbase bookworm "$root" http://deb.debian.org/debian \
    >"$root.debootstrap.log" 2>&1 || { tail -20 "$root.debootstrap.log" >&2; die "debootstrap failed"; }
  say "root made in $(elapsed "$t")"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
t=$SECONDS
bash "$repo/scripts/apt-need.sh" --root "$root" "${ROOT_PKGS[@]}"
say "the root's packages are there ($(elapsed "$t"))"

# Cross-build, tests included, into a folder the root sees at the same
# path (the tests name their programs by absolute path).
build=$repo/build-arm64
t=$SECONDS
say "cross-building into $build"
cmake -S "$repo" -B "$build" -DMEMSCRIBE_SYSROOT="$root" \
  -DCMAKE_TOOLCHAIN_FILE="$repo/cmake/aarch64-linux-gnu.cmake" -DCMAKE_BUILD_TYPE=Debug \
  -DMEMSCRIBE_TESTS=ON >"$build.log" 2>&1 ||
  { tail -30 "$build.log" >&2; die "cmake failed (all of it in $build.log)"; }
cmake --build "$build" -j2 >>"$build.log" 2>&1 ||
  { grep -E "error|Error" "$build.log" | tail -30 >&2; die "the cross-build failed ($build.log)"; }
say "built in $(elapsed "$t")"

# Run the tests in the root, in a mount namespace of their own: the
# repository bind-mounted at its own path, /proc, the root's own /dev
# (root-dev.sh) and a /tmp.
rc=0
if [ -n "$tests" ]; then
  t=$SECONDS
  say "running the tests matching $tests in the arm64 root"
  # shellcheck disable=SC2016 # the inner script's own variables, from its arguments
  unshare --mount --propagation private bash -c '
    set -e
    root=$1 repo=$2 build=$3 tests=$4
    mkdir -p "$root$repo" "$root/proc" "$root/dev" "$root/tmp"
    mount --bind "$repo" "$root$repo"
    mount -t proc proc "$root/proc"
    bash "$repo/scripts/root-dev.sh" "$root"
    mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
    chroot "$root" /bin/sh -c "cd \"$build\" && ctest -R \"$tests\" -j2 --timeout 1200 --output-on-failure"
  ' cross-check "$root" "$repo" "$build" "$tests" || rc=$?
  say "tests ran in $(elapsed "$t")"
fi
if [ "$vm" -eq 1 ]; then
  t=$SECONDS
  say "running the tests matching $vm_tests in an arm64 virtual machine"
  bash "$repo/scripts/arm64-vm.sh" "$root" "$build" "$vm_tests" || rc=1
  say "the machine's tests ran in $(elapsed "$t")"
fi
say "all of it in $(elapsed "$t_start")"
[ "$rc" -eq 0 ] || exit 1
}
