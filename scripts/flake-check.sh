#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run the whole ctest suite N times on a busy machine and list every test
# that failed in any run, with its message: the check that the README's
# test command passes every time, not just on a quiet machine.
#
# Usage: scripts/flake-check.sh [--spinners K] [--build DIR] [--no-build] [--out DIR]
#                               [--tests REGEX] [--resume] N
#   N             how many whole runs of the suite (ctest -j2, as scripts/test.sh)
#   --spinners K  CPU-bound processes running beside the suite (default 2:
#                 one per core of the 2-core machines CI runs on)
#   --build DIR   the sanitized test build (default build-test, as test.sh)
#   --no-build    use DIR as it is (default: set up and build it as test.sh)
#   --out DIR     where each run's log and JUnit file go (default: a new
#                 folder under /tmp, printed)
#   --tests REGEX only the tests whose names match (ctest -R), to chase one
#   --resume      go on with the runs --out DIR already holds (a check cut
#                 short: five runs take over three hours): those that
#                 finished count among the N, and must be of this commit
#                 (scripts/flake-runs/COMMIT/ keeps a series' finished runs
#                 across sessions: copy it to DIR, in a worktree at COMMIT)
# Prints, per run, its time, load average and failures; then each test that
# failed in any run, the runs it failed in and the last lines of its output
# that say why. Exits 0 when every run passed every test, 1 otherwise, 2 on
# a usage error. The fuzzer (test.sh's last step) is not run: it does not
# depend on timing.
set -euo pipefail

{
spinners=2 build='' do_build=1 out='' n='' only='' resume=0
while [ $# -gt 0 ]; do
  case $1 in
    --spinners) spinners=${2:?--spinners needs a number}; shift ;;
    --build) build=${2:?--build needs a folder}; shift ;;
    --no-build) do_build=0 ;;
    --tests) only=${2:?--tests needs a regular expression}; shift ;;
    --out) out=${2:?--out needs a folder}; shift ;;
    --resume) resume=1 ;;
    -h|--help) awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"; exit 0 ;;
    -*) echo "flake-check: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) [ -z "$n" ] || { echo "flake-check: one N only (see --help)" >&2; exit 2; }; n=$1 ;;
  esac
  shift
done
case $n in
  '' | *[!0-9]* | 0) echo "flake-check: N must be a whole number of runs, 1 or more (see --help)" >&2; exit 2 ;;
esac
case $spinners in
  '' | *[!0-9]*) echo "flake-check: --spinners needs a whole number" >&2; exit 2 ;;
esac
[ "$resume" -eq 0 ] || [ -n "$out" ] || { echo "flake-check: --resume needs --out DIR" >&2; exit 2; }

repo=$(cd "$(dirname "$0")/.." && pwd)
# Folders named on the command line are the caller's; the build's default
# is the repository's.
case $build in '') build=$repo/build-test ;; /*) ;; *) build=$PWD/$build ;; esac
[ -z "$out" ] || mkdir -p "$out"
[ -z "$out" ] || out=$(cd "$out" && pwd)
cd "$repo"
say() { echo "flake-check: $*" >&2; }
if [ "$do_build" -eq 1 ]; then
  bash scripts/setup.sh --test
  bash scripts/build.sh "$build" -DCMAKE_BUILD_TYPE=Debug -DMEMSCRIBE_SANITIZE=ON \
    -DMEMSCRIBE_WERROR=ON -DMEMSCRIBE_TESTS=ON
fi
[ -f "$build/CTestTestfile.cmake" ] || { say "$build: no test build there (drop --no-build)"; exit 1; }
build=$(cd "$build" && pwd)
[ -n "$out" ] || out=$(mktemp -d /tmp/flake-check.XXXXXX)
mkdir -p "$out"
out=$(cd "$out" && pwd)
# The commit the runs are of (the build's sources'): a resumed check goes on
# with the same code.
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
commit=$(git -C "${src:-$repo}" rev-parse HEAD)$(git -C "${src:-$repo}" diff --quiet HEAD || echo '+changes')
if [ "$resume" -eq 1 ] && [ -f "$out/commit" ] && [ "$(cat "$out/commit")" != "$commit" ]; then
  say "$out holds runs of $(cat "$out/commit"), this is $commit: start a new --out"
  exit 1
fi
echo "$commit" >"$out/commit"

# The spinners: plain busy loops, stopped with ctest however this script
# ends. They stay in this script's session: where the kernel groups the
# scheduling by session (autogroup, /proc/sys/kernel/sched_autogroup_enabled),
# a spinner in a session of its own (setsid) got a third of the CPUs to
# itself and the whole suite the last third, not two busy loops among the
# suite's processes. Job control gives each its own process group (to kill
# it whole), in the same session.
set -m
spin_pids=() ctest_pid=''
stop_children() {
  local p
  for p in "${spin_pids[@]}" $ctest_pid; do kill -- "-$p" 2>/dev/null || true; done
}
trap stop_children EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for ((i = 0; i < spinners; i++)); do
  bash -c 'while :; do :; done' &
  spin_pids+=("$!")
done
say "$n runs of the suite in $build beside $spinners spinners; logs in $out"

# failed_tests JUNIT: one line per failed test, "NAME<TAB>why", why being the
# last lines of its output that say FAIL or error (else its last line).
failed_tests() {
  python3 - "$1" <<'PY'
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
for tc in root.iter("testcase"):
    if tc.get("status") not in ("fail", "failed") and tc.find("failure") is None:
        continue
    text = "\n".join(e.text or "" for e in tc if e.tag in ("system-out", "failure"))
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    why = [l for l in lines if "FAIL" in l or "rror" in l or "Timeout" in l][-3:] or lines[-1:]
    print("%s\t%s" % (tc.get("name"), " | ".join(why)[:600] or "(no output)"))
PY
}

declare -A failed_in why
runs_failed=0 secs=()
for ((r = 1; r <= n; r++)); do
  # a finished run of the check resumed: its time and verdict as written
  if [ "$resume" -eq 1 ] && [ -f "$out/run-$r.done" ]; then
    read -r s rc load <"$out/run-$r.done"
    secs+=("$s")
    say "run $r of $n (done before): $((s / 60))m$(printf '%02d' $((s % 60)))s, load $load:" \
      "$(grep -E '^[0-9]+% tests passed' "$out/run-$r.log" || echo "ctest exit $rc")"
  else
    t=$SECONDS
    rc=0
    # In the background, waited for: a signal to this script stops it at once.
    (cd "$build" && exec ctest --output-on-failure -j2 --timeout 600 \
      --output-junit "$out/run-$r.xml" ${only:+-R "$only"}) >"$out/run-$r.log" 2>&1 &
    ctest_pid=$!
    wait "$ctest_pid" || rc=$?
    ctest_pid=''
    secs+=($((SECONDS - t)))
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    echo "${secs[-1]} $rc $load" >"$out/run-$r.done"
    summary=$(grep -E '^[0-9]+% tests passed' "$out/run-$r.log" || echo "no summary (ctest exit $rc)")
    say "run $r of $n: $((secs[-1] / 60))m$(printf '%02d' $((secs[-1] % 60)))s, load $load: $summary"
  fi
  [ "$rc" -eq 0 ] && continue
  runs_failed=$((runs_failed + 1))
  list=$([ -s "$out/run-$r.xml" ] && failed_tests "$out/run-$r.xml" || true)
  [ -n "$list" ] || list=$(printf 'ctest\texit %s, no failed test named (see %s)' "$rc" "$out/run-$r.log")
  while IFS=$'\t' read -r name msg; do
    say "  failed: $name: $msg"
    failed_in[$name]="${failed_in[$name]:-}${failed_in[$name]:+, }$r"
    why[$name]="${why[$name]:-}    run $r: $msg"$'\n'
  done <<<"$list"
done

total=0
for s in "${secs[@]}"; do total=$((total + s)); done
mapfile -t sorted < <(printf '%s\n' "${secs[@]}" | sort -n)
median=${sorted[$((${#sorted[@]} / 2))]}
echo "flake-check: $n runs beside $spinners spinners, suite time median $((median / 60))m$(printf '%02d' $((median % 60)))s" \
  "(each: $(printf '%ss ' "${secs[@]}")), logs in $out"
if [ "$runs_failed" -eq 0 ]; then
  echo "flake-check: 0 failures in $n runs"
  exit 0
fi
echo "flake-check: $runs_failed of $n runs failed; the tests that failed:"
for name in $(printf '%s\n' "${!failed_in[@]}" | sort); do
  echo "  $name (runs ${failed_in[$name]})"
  printf '%s' "${why[$name]}"
done
exit 1
}
