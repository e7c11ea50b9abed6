#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run tests of an arm64 build in a virtual machine with Debian 12's own
# arm64 kernel (qemu-system-aarch64, every instruction emulated): what
# qemu-user cannot run, ptrace between processes (record -p, --reach) and
# seccomp filters (docs/platforms.md). scripts/cross-check.sh arm64 --vm
# calls it after making the root and the build.
#
# Usage: scripts/arm64-vm.sh ROOT BUILD REGEX
#   ROOT   the arm64 Debian 12 root (cross-check.sh's): the machine's
#          root file system, shared over virtio-9p, read and written
#   BUILD  the cross-build (under this repository, which the machine sees
#          at the same path)
#   REGEX  the tests to run (ctest -R)
# The kernel and a static busybox come from Debian's arm64 packages,
# downloaded by the root's apt into ROOT.vm/ once; the initramfs loads the
# virtio and 9p modules, mounts the root, runs ctest there and powers off.
# Needs root (mount, chroot). Exits with ctest's status, 1 if the machine
# did not say it.
set -euo pipefail

{
case ${1:-} in -h|--help) awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"; exit 0 ;; esac
[ $# -eq 3 ] || { echo "usage: arm64-vm.sh ROOT BUILD REGEX (see --help)" >&2; exit 2; }
root=$1 build=$2 tests=$3
repo=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "arm64-vm: $*" >&2; }
die() { say "$*"; exit 1; }
[ "$(id -u)" -eq 0 ] || die "must run as root (mount, chroot)"
bash "$repo/scripts/apt-need.sh" qemu-system-arm cpio
vm=$root.vm
mkdir -p "$vm"

# The kernel and busybox, unpacked from the packages of the root's
# archive (the versions its apt lists name).
if [ ! -f "$vm/ready" ]; then
  kpkg=$(chroot "$root" apt-cache depends linux-image-arm64 |
    sed -n 's/^ *Depends: \(linux-image-[0-9].*-arm64\)$/\1/p' | head -1)
  [ -n "$kpkg" ] || die "the root's apt names no linux-image for arm64"
  rm -rf "$vm/debs" "$vm/k" "$vm/bb"
  mkdir -p "$root/tmp/vm-debs" && chmod 777 "$root/tmp/vm-debs" # apt downloads as _apt
  chroot "$root" sh -c "cd /tmp/vm-debs && apt-get download -q $kpkg busybox-static" >/dev/null ||
    die "apt-get download $kpkg busybox-static failed in $root"
  mv "$root/tmp/vm-debs" "$vm/debs"
  dpkg-deb -x "$vm"/debs/linux-image-*.deb "$vm/k"
  dpkg-deb -x "$vm"/debs/busybox-static_*.deb "$vm/bb"
  touch "$vm/ready"
fi
kver=$(basename "$(ls -d "$vm"/k/lib/modules/*)")
kernel=$vm/k/boot/vmlinuz-$kver
[ -f "$kernel" ] || die "no kernel in $vm/k/boot"

# The initramfs: busybox, the modules for virtio-pci and 9p with what they
# depend on (each .ko's modinfo says; no depmod needed), and /init.
init=$(mktemp -d /tmp/arm64-vm.XXXXXX)
trap 'rm -rf "$init"' EXIT
mkdir -p "$init/bin" "$init/m"
cp "$vm/bb/bin/busybox" "$init/bin/busybox"
order=()
add_module() { # add_module NAME: its dependencies first, then it
  local name=$1 ko dep
  case " ${order[*]} " in *" $name "*) return ;; esac
  ko=$(find "$vm/k/lib/modules/$kver" -name "$name.ko" | head -1)
  [ -n "$ko" ] || die "no module $name.ko in $kver"
  for dep in $(grep -a -o 'depends=[a-z0-9_,-]*' "$ko" | head -1 | sed 's/depends=//; s/,/ /g'); do
    add_module "$dep"
  done
  cp "$ko" "$init/m/"
  order+=("$name")
}
for m in virtio_pci 9pnet_virtio 9p; do add_module "$m"; done
echo "${order[*]}" >"$init/modules"
cat >"$init/init" <<'EOF'
#!/bin/busybox sh
# The machine's first process: mount the shared root, run the tests in it
# (/ms-vm-run.sh, written by arm64-vm.sh), power off.
export PATH=/bin
/bin/busybox --install -s /bin
mkdir -p /proc /sys /dev /mnt
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /modules); do insmod "/m/$m.ko" || echo "init: insmod $m failed"; done
if mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=loose root /mnt; then
  mount -t proc proc /mnt/proc
  mount -t sysfs sysfs /mnt/sys
  mount -t devtmpfs devtmpfs /mnt/dev
  mkdir -p /mnt/dev/pts /mnt/dev/shm
  ln -s /proc/self/fd /mnt/dev/fd # what udev would make: bash's <(...) needs it
  ln -s /proc/self/fd/0 /mnt/dev/stdin
  ln -s /proc/self/fd/1 /mnt/dev/stdout
  ln -s /proc/self/fd/2 /mnt/dev/stderr
  mount -t devpts devpts /mnt/dev/pts
  mount -t tmpfs tmpfs /mnt/dev/shm
  mount -t tmpfs -o mode=1777 tmpfs /mnt/tmp
  chroot /mnt /bin/sh /ms-vm-run.sh
  echo $? >/mnt/ms-vm-rc
  sync
else
  echo "init: the root did not mount over 9p"
fi
poweroff -f
EOF
chmod +x "$init/init"
(cd "$init" && find . | cpio -o -H newc --quiet | gzip -1) >"$vm/initrd.gz"

# What the machine runs in the root: the tests, by absolute path.
cat >"$root/ms-vm-run.sh" <<EOF
#!/bin/sh
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
echo "arm64-vm: \$(uname -srm), \$(nproc) CPUs"
cd "$build" && ctest -R '$tests' -j2 --timeout 1800 --output-on-failure
EOF
rm -f "$root/ms-vm-rc"

# The machine: -cpu max (pointer authentication, SVE) with QEMU's cheaper
# pointer signing; the root over virtio-9p, the repository bind-mounted
# into it (in a mount namespace of our own) at its own path.
say "booting Debian's $kver on qemu-system-aarch64 (every instruction emulated)"
# shellcheck disable=SC2016 # the inner script's own variables
unshare --mount --propagation private bash -c '
  set -e
  root=$1 repo=$2 vm=$3 kernel=$4
  mkdir -p "$root$repo"
  mount --bind "$repo" "$root$repo"
  exec qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -smp 2 -m 4096 -nographic \
    -no-reboot -nic none -kernel "$kernel" -initrd "$vm/initrd.gz" \
    -append "console=ttyAMA0 panic=-1 quiet" \
    -fsdev local,id=root,path="$root",security_model=passthrough \
    -device virtio-9p-pci,fsdev=root,mount_tag=root
' arm64-vm "$root" "$repo" "$vm" "$kernel" </dev/null
[ -f "$root/ms-vm-rc" ] || die "the machine ended without the tests' status"
rc=$(cat "$root/ms-vm-rc")
rm -f "$root/ms-vm-rc" "$root/ms-vm-run.sh"
exit "$rc"
}
