#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A program that blocks every signal, installs and reads back its own
# SIGSYS handler, raises SIGSYS, maps memory in a signal handler, forks and
# execs runs exactly as untraced under --vm-precise.
source "$(dirname "$0")/record_lib.sh"

# Argument "32": the -m32 build, traced by the i386 collector.
bits=${1:-}
[ -z "$bits" ] || need_m32
"$MS_PROGRAMS/vm_signals$bits" > "$WORK/plain"; plain_rc=$?
"$MEMSCRIBE" record -q --vm-precise -o "$WORK/t.mscr" -- "$MS_PROGRAMS/vm_signals$bits" > "$WORK/traced"
traced_rc=$?
[ "$plain_rc" -eq "$traced_rc" ] || fail "exit status $traced_rc traced, $plain_rc untraced"
diff -u "$WORK/plain" "$WORK/traced" || fail "output differs when traced"
grep -q "SIGSYS handled 1, SIGUSR1 handled 1" "$WORK/traced" || fail "handlers did not run"
# Dispatch was on: libc's own mappings are in the trace.
# (Through a file: grep -q would end the pipe early and pipefail would count
# dump's SIGPIPE.)
"$MEMSCRIBE" dump "$WORK/t.mscr" > "$WORK/dump" || fail "dump failed"
grep -q "origin=libc" "$WORK/dump" || fail "no libc-internal mapping recorded"
echo "vm_signals: same output and status traced and untraced"
