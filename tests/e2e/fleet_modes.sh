#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The metrics server in each way of recording (docs/metrics.md, "Each
# way of recording"), on tests/programs/fleet_phases (1 MiB held from
# phase_one(), then 3 MiB from phase_two(), each phase waiting for the
# test): /metrics through the bearer header gives each phase's site its
# exact bytes, and the site of the phase before is gone, when
#   - the program runs without the wrapper (LD_PRELOAD, MEMSCRIBE_OUTPUT,
#     MEMSCRIBE_METRICS, MEMSCRIBE_METRICS_TOKEN_FILE,
#     MEMSCRIBE_METRICS_LABELS): the recorder the collector starts serves
#     them, with the labels, and ends with the program; a value it cannot take (no token file, a port
#     another server holds) is said on the program's stderr, and the
#     program runs untraced and unharmed;
#   - record -p attaches to the running program (phase_two, allocated
#     after the attach), its token file one of the user's (64 characters);
#   - record --keep-last keeps segments (the metrics are the whole run's).
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" fleet-modes MEMSCRIBE MS_PROGRAMS MS_BUILD
# shellcheck source=tests/e2e/fleet_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/fleet_lib.sh"
PHASES=$MS_PROGRAMS/fleet_phases
COLLECTOR=$MS_BUILD/lib/memscribe/libmemscribe.so

# usage: sites PORT TOKEN_FILE [LABELS]: the phase sites /metrics gives
# now, "site value" sorted, from series carrying LABELS ('service="x"').
sites() {
    curl -s -H "Authorization: Bearer $(cat "$2" 2>/dev/null)" "http://127.0.0.1:$1/metrics" 2>/dev/null |
        grep "^memscribe_site_heap_in_use_bytes{.*${3:-}" |
        sed -n 's/.*site="\(phase_[a-z]*\)[^"]*".* \([0-9]*\)$/\1 \2/p' | sort || true
}
# usage: phase WHAT PORT TOKEN_FILE WANT [LABELS]: wait (at most 60 s)
# until the phase sites are WANT.
phase() {
    local got=""
    for _ in $(seq 300); do
        got=$(sites "$2" "$3" "${5:-}")
        [ "$got" = "$4" ] && break
        sleep 0.2
    done
    expect "$1: the phase sites" "$got" "$4"
}
# usage: pid_of DIR: the pid fleet_phases wrote (waits at most 30 s).
pid_of() {
    for _ in $(seq 300); do [ -s "$1/pid" ] && break; sleep 0.1; done
    [ -s "$1/pid" ] || fail "fleet_phases wrote no pid in $1"
    cat "$1/pid"
}

# ---- Without the wrapper.
mkdir "$WORK/nw"
port=$(fleet_port)
env LD_PRELOAD="$COLLECTOR" MEMSCRIBE_OUTPUT="$WORK/nw.mscr" MEMSCRIBE_METRICS="127.0.0.1:$port" \
    MEMSCRIBE_METRICS_TOKEN_FILE="$WORK/nw/token" MEMSCRIBE_METRICS_LABELS=service=nowrap,version=1.2 \
    "$PHASES" "$WORK/nw" 2>"$WORK/nw.err" &
nw=$!
FLEET_PIDS+=("$nw")
pid_of "$WORK/nw" >/dev/null
expect "no wrapper: the token file's mode" "$(stat -c %a "$WORK/nw/token")" 600
phase "no wrapper" "$port" "$WORK/nw/token" "phase_one 1048576" 'service="nowrap",version="1.2"'

# A second program asking for the port the first one's server holds, and
# a third with no token file: each says why on its stderr and runs
# untraced, exit status 0.
for bad in port token; do
    mkdir "$WORK/$bad"
    touch "$WORK/$bad/go1" "$WORK/$bad/go2"
    tok=$WORK/$bad/token
    [ "$bad" = port ] || tok=""
    rc=0
    env LD_PRELOAD="$COLLECTOR" MEMSCRIBE_OUTPUT="$WORK/$bad.mscr" MEMSCRIBE_METRICS="127.0.0.1:$port" \
        MEMSCRIBE_METRICS_TOKEN_FILE="$tok" "$PHASES" "$WORK/$bad" 2>"$WORK/$bad.err" || rc=$?
    expect "no wrapper, a bad $bad: the program's exit status" "$rc" 0
    want="cannot listen on 127.0.0.1 port $port"
    [ "$bad" = port ] || want="MEMSCRIBE_METRICS wants MEMSCRIBE_METRICS_TOKEN_FILE too"
    grep -q "^memscribe: record: .*$want.*; fleet_phases runs untraced$" "$WORK/$bad.err" ||
        fail "no wrapper, a bad $bad: the program's stderr: $(cat "$WORK/$bad.err")"
    [ ! -e "$WORK/$bad.mscr" ] || fail "no wrapper, a bad $bad: a trace was made"
done
echo "ok: no wrapper: a port taken and a missing token file said, the program untraced"

touch "$WORK/nw/go1"
phase "no wrapper" "$port" "$WORK/nw/token" "phase_two 3145728" 'service="nowrap"'
touch "$WORK/nw/go2"
wait "$nw" || fail "no wrapper: fleet_phases failed: $(cat "$WORK/nw.err")"
[ ! -s "$WORK/nw.err" ] || fail "no wrapper: the program's stderr: $(cat "$WORK/nw.err")"
# The recorder and its server end with the program (its server, started
# with the socket's name in its environment, once kept it waiting for ever).
for _ in $(seq 300); do pgrep -f "record --serve .*$WORK/nw.mscr" >/dev/null || break; sleep 0.2; done
pgrep -f -a "$WORK/nw" && fail "no wrapper: the recorder or its server outlived the program by 60 s"
"$MEMSCRIBE" report "$WORK/nw.mscr" >/dev/null 2>"$WORK/nw.report" || fail "no wrapper: report"
grep -q "incomplete\|cut short" "$WORK/nw.report" && fail "no wrapper: the trace is cut short: $(cat "$WORK/nw.report")"

# ---- record -p: phase_two is allocated after the attach; the token
# file is the user's own, of the longest token taken (64 characters).
mkdir "$WORK/p"
(umask 077 && printf '%s\n' "$(printf 'aB3._~+/=-%.0s' 1 2 3 4 5 6)abcd" >"$WORK/p/token")
expect "the user's token's length" "$(head -1 "$WORK/p/token" | tr -d '\n' | wc -c)" 64
"$PHASES" "$WORK/p" &
FLEET_PIDS+=("$!")
pid=$(pid_of "$WORK/p")
port=$(fleet_port)
"$MEMSCRIBE" record -q -p "$pid" -o "$WORK/p.mscr" --metrics "127.0.0.1:$port" \
    --metrics-token-file "$WORK/p/token" 2>"$WORK/p.err" &
rp=$!
FLEET_PIDS+=("$rp")
for _ in $(seq 300); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$WORK/p/token" 2>/dev/null)" \
        "http://127.0.0.1:$port/metrics")" = 200 ] && break
    sleep 0.1
done
touch "$WORK/p/go1"
phase "record -p" "$port" "$WORK/p/token" "phase_two 3145728"
touch "$WORK/p/go2"
wait "$rp" || fail "record -p: $(cat "$WORK/p.err")"
# The address serve says for that token (+ / = in it): the URL works as
# given (a query reads a bare + as a space).
"$MEMSCRIBE" serve --url-file "$WORK/p/url" --token-file "$WORK/p/token" "$WORK/p.mscr" >/dev/null 2>&1 &
FLEET_PIDS+=("$!")
for _ in $(seq 300); do [ -s "$WORK/p/url" ] && break; sleep 0.1; done
url=$(cat "$WORK/p/url")
expect "serve's address with the user's token" \
    "$(curl -s -o /dev/null -w '%{http_code}' "${url%%/\?token=*}/api/status?token=${url##*token=}")" 200

# ---- record --keep-last: the served trace is the whole run's.
mkdir "$WORK/k"
port=$(fleet_port)
"$MEMSCRIBE" record -q --keep-last 2s -o "$WORK/k.mscr" --metrics "127.0.0.1:$port" \
    --metrics-token-file "$WORK/k/token" -- "$PHASES" "$WORK/k" 2>"$WORK/k.err" &
rk=$!
FLEET_PIDS+=("$rk")
phase "record --keep-last" "$port" "$WORK/k/token" "phase_one 1048576"
touch "$WORK/k/go1"
phase "record --keep-last" "$port" "$WORK/k/token" "phase_two 3145728"
touch "$WORK/k/go2"
wait "$rk" || fail "record --keep-last: $(cat "$WORK/k.err")"
echo "ok: the metrics without the wrapper, with -p and with --keep-last"
