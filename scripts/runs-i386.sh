#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Does this machine run 32-bit x86 programs? Exit 0 if it does, 1 if the
# kernel refuses their exec (ENOEXEC), 2 if the probe could not be made.
#
# A kernel without IA-32 emulation, or one that has it but turns it off (seen
# here: a 6.18 guest with CONFIG_IA32_EMULATION=y whose exec of any i386
# program fails with "Exec format error"), runs neither the 32-bit tests nor
# wine32. The probe needs no compiler and no i386 package: it writes the
# smallest i386 ELF program that calls exit(42) and runs it. The setup, the
# demo, the fresh-machine check and the tests all ask here.
set -euo pipefail
probe=$(mktemp "${TMPDIR:-/tmp}/memscribe-i386.XXXXXX") || exit 2
trap 'rm -f "$probe"' EXIT
# ELF32 header (52 bytes): little endian, ET_EXEC, EM_386, entry 0x08048054,
# one program header at 52. Then that header (32 bytes): PT_LOAD of the whole
# 96-byte file at 0x08048000, read and execute. Then the code at 0x54:
# mov eax, 1 (exit); mov ebx, 42; int 0x80.
printf '%b' \
  '\x7fELF\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00' \
  '\x02\x00\x03\x00\x01\x00\x00\x00\x54\x80\x04\x08\x34\x00\x00\x00' \
  '\x00\x00\x00\x00\x00\x00\x00\x00\x34\x00\x20\x00\x01\x00\x28\x00' \
  '\x00\x00\x00\x00' \
  '\x01\x00\x00\x00\x00\x00\x00\x00\x00\x80\x04\x08\x00\x80\x04\x08' \
  '\x60\x00\x00\x00\x60\x00\x00\x00\x05\x00\x00\x00\x00\x10\x00\x00' \
  '\xb8\x01\x00\x00\x00\xbb\x2a\x00\x00\x00\xcd\x80' > "$probe"
chmod +x "$probe"
rc=0
"$probe" 2>/dev/null || rc=$?
case $rc in
  42) exit 0 ;;
  126) exit 1 ;;  # bash: the exec failed (ENOEXEC)
  *) echo "runs-i386: the probe $probe exited with $rc" >&2; exit 2 ;;
esac
