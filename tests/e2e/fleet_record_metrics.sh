#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record --metrics (docs/metrics.md): Debian's real Prometheus scrapes a
# program while it runs: tests/programs/fleet_phases, of three phases, each
# waiting for the test: it holds 1 MiB from phase_one(), then frees it and
# holds 3 MiB from phase_two(), then frees that and exits. Prometheus scrapes the recorder's
# server every second with the token file record made (0600) as its bearer
# credentials_file, and --metrics-label service=fleet-test on every series;
# through its HTTP API each phase's site holds its exact bytes, and the
# site of the phase before is absent (it left the top: stale, not
# lingering). Without the token the server answers 401; user nobody can
# read neither the token file nor the metrics nor the profiles.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" fleet-record-metrics MEMSCRIBE MS_PROGRAMS
# shellcheck source=tests/e2e/fleet_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/fleet_lib.sh"


mport=$(fleet_port)
"$MEMSCRIBE" record -q -o "$WORK/t.mscr" --metrics "127.0.0.1:$mport" --metrics-token-file "$WORK/token" \
    --metrics-label service=fleet-test -- "$MS_PROGRAMS/fleet_phases" "$WORK" >/dev/null 2>"$WORK/record.err" &
FLEET_PIDS+=("$!")
for _ in $(seq 300); do [ -s "$WORK/token" ] && break; sleep 0.1; done
[ -s "$WORK/token" ] || fail "record made no token file: $(cat "$WORK/record.err")"
expect "the token file's mode" "$(stat -c %a "$WORK/token")" 600
expect "without the token" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mport/metrics")" 401
# Another user (nobody, as root only): not the token file, not the
# metrics, not the profiles.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    chmod 755 "$WORK"
    as_nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
    "${as_nobody[@]}" cat "$WORK/token" >/dev/null 2>&1 && fail "user nobody read the token file"
    for path in metrics debug/pprof/heap; do
        expect "as nobody, /$path" \
            "$("${as_nobody[@]}" curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mport/$path")" 401
    done
else
    echo "skipped: user nobody's tries (need root and setpriv)"
fi

fleet_prometheus <<YML
  - job_name: memscribe
    authorization:
      credentials_file: $WORK/token
    static_configs:
      - targets: ['127.0.0.1:$mport']
YML

# usage: sites: each memscribe_site_heap_in_use_bytes sample now, "site
# value", sorted.
sites() {
    curl -s --data-urlencode 'query=memscribe_site_heap_in_use_bytes{service="fleet-test"}' "$API/query" 2>/dev/null |
        jq -r '.data.result[] | "\(.metric.site | sub(" \\(.*$"; "")) \(.value[1])"' 2>/dev/null | sort || true
}
# usage: phase WANT: wait (at most 60 s) until the program's phase sites
# are WANT ("phase_one 1048576", ...), other sites left out.
phase() {
    local got=""
    for _ in $(seq 120); do
        got=$(sites | grep '^phase_' || true)
        [ "$got" = "$1" ] && break
        sleep 0.5
    done
    expect "Prometheus's phase sites" "$got" "$1"
}
phase "phase_one 1048576"
touch "$WORK/go1"
phase "phase_two 3145728"
touch "$WORK/go2"
wait "${FLEET_PIDS[0]}" || fail "record: $(cat "$WORK/record.err")"
grep -q "metrics at http://127.0.0.1:$mport/metrics (the bearer token in $WORK/token)" "$WORK/record.err" ||
    fail "record did not say where the metrics are: $(cat "$WORK/record.err")"
echo "ok: Prometheus followed the program's phases through record --metrics"
