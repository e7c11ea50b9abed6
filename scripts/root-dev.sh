#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Give a Debian root its own /dev (scripts/fresh-check.sh, cross-check.sh):
# a tmpfs with the device nodes a program expects, the std* and fd links,
# and a pty instance of its own. Not the host's /dev bound in, nor devtmpfs
# (one instance for the whole kernel): a test that replaces /dev/stdout in
# the root (as `gcc -o /dev/stdout >file` does) must not replace the
# host's. Run inside the caller's private mount namespace (unshare), which
# takes the mounts away when it ends.
# Usage: scripts/root-dev.sh ROOT
set -euo pipefail
root=${1:?usage: root-dev.sh ROOT}
mount -t tmpfs -o mode=0755,nosuid,size=64m dev "$root/dev"
mknod -m 0666 "$root/dev/null" c 1 3
mknod -m 0666 "$root/dev/zero" c 1 5
mknod -m 0666 "$root/dev/full" c 1 7
mknod -m 0666 "$root/dev/random" c 1 8
mknod -m 0666 "$root/dev/urandom" c 1 9
mknod -m 0666 "$root/dev/tty" c 5 0
ln -s /proc/self/fd "$root/dev/fd"
ln -s /proc/self/fd/0 "$root/dev/stdin"
ln -s /proc/self/fd/1 "$root/dev/stdout"
ln -s /proc/self/fd/2 "$root/dev/stderr"
ln -s /proc/kcore "$root/dev/core"
mkdir -m 0755 "$root/dev/pts" "$root/dev/mqueue"
mkdir -m 1777 "$root/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,gid=5 devpts "$root/dev/pts"
ln -s pts/ptmx "$root/dev/ptmx"
mount -t tmpfs -o mode=1777,nosuid,nodev shm "$root/dev/shm"
