#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record --push-metrics and metrics --push (docs/metrics.md, "Push"):
# Debian's real prometheus-pushgateway on a loopback port receives a
# program's metrics at the end of its recording (and every --push-every
# while it runs) under the job asked, the host as instance, with
# --metrics-label's label; read back from the gateway, each process's heap
# in use and allocations are report's; a running program pushes again and
# again at --push-every 200ms; record --check's verdicts go with the last
# push (memscribe_check_value, _limit, _passed: check --format=json's). A
# gateway that is not there fails the push: said, and record's exit
# status 1.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" fleet-push MEMSCRIBE MS_PROGRAMS
need prometheus-pushgateway
# shellcheck source=tests/e2e/fleet_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/fleet_lib.sh"

port=$(fleet_port)
prometheus-pushgateway --web.listen-address="127.0.0.1:$port" >"$WORK/pgw.log" 2>&1 &
FLEET_PIDS+=("$!")
GW=http://127.0.0.1:$port
for _ in $(seq 100); do curl -sf "$GW/-/ready" >/dev/null 2>&1 && break; sleep 0.2; done
curl -sf "$GW/-/ready" >/dev/null || fail "the Pushgateway did not start: $(cat "$WORK/pgw.log")"

"$MEMSCRIBE" record -q -o "$WORK/t.mscr" --push-metrics "$GW" --push-job ci --push-every 200ms \
    --metrics-label build=42 -- "$MS_PROGRAMS/rec_agg" 5 >/dev/null 2>"$WORK/record.err" ||
    fail "record --push-metrics: $(cat "$WORK/record.err")"
curl -s "$GW/metrics" >"$WORK/gw.txt"
host=$(hostname)
got=$(awk -v host="$host" '
    $1 ~ /^memscribe_(heap_in_use_bytes|allocations_total)\{/ && index($1, "job=\"ci\"") &&
    index($1, "instance=\"" host "\"") && index($1, "build=\"42\"") {
        name = $1; sub(/\{.*/, "", name); pid = $1; sub(/.*pid="/, "", pid); sub(/".*/, "", pid)
        print pid, name, $2 }' "$WORK/gw.txt" | sort)
want=$("$MEMSCRIBE" report --format=json "$WORK/t.mscr" |
    jq -r '.processes[] | "\(.pid) memscribe_allocations_total \(.allocations)\n\(.pid) memscribe_heap_in_use_bytes \(.leaked_bytes)"' | sort)
expect "the Pushgateway's series (pid, metric, value)" "$got" "$want"

# --push-every: a program that runs until the gateway has counted three
# more PUTs (a condition, not a clock: pushes every 200 ms while it runs),
# the pushes of a trace still being written saying nothing on stderr (the
# notes are comments of the metrics).
puts() {
    curl -s "$GW/metrics" | awk '/^pushgateway_http_requests_total\{code="200",handler="push",method="put"\}/ { print $2 }'
}
before=$(puts)
"$MEMSCRIBE" record -q -o "$WORK/s.mscr" --push-metrics "$GW" --push-job every --push-every 200ms \
    -- sh -c "until [ -e '$WORK/go' ]; do sleep 0.05; done" >/dev/null 2>"$WORK/record.err" &
rec=$!
for _ in $(seq 600); do [ $(($(puts) - ${before:-0})) -ge 3 ] && break; sleep 0.1; done
pushes=$(($(puts) - ${before:-0}))
touch "$WORK/go"
wait "$rec" || fail "record --push-every: $(cat "$WORK/record.err")"
[ "$pushes" -ge 3 ] || fail "--push-every 200ms: $pushes pushes in 60 s while the program ran"
echo "ok: --push-every 200ms: $pushes pushes while the program ran"
expect "the pushes' words on stderr" "$(cat "$WORK/record.err")" ""

# metrics --push of any trace, under a job and instance of its own.
"$MEMSCRIBE" metrics --push "$GW" --job nightly --instance run-7 "$WORK/t.mscr" 2>"$WORK/err" ||
    fail "metrics --push: $(cat "$WORK/err")"
# (read whole first: grep -q ending the pipe early would fail curl's write)
curl -s "$GW/metrics" >"$WORK/gw.txt"
grep -q '^memscribe_tree_heap_peak_bytes{instance="run-7",job="nightly"} ' "$WORK/gw.txt" ||
    fail "metrics --push: no tree peak under job nightly, instance run-7"
echo "ok: metrics --push under its job and instance"

# record --check: the last push carries each check's value, limit and
# verdict, as check --format=json gives them (a leak check that fails, a
# peak check that passes: record's exit status 1).
rc=0
"$MEMSCRIBE" record -q -o "$WORK/c.mscr" --check max-leaked=0 --check max-peak=64M \
    --push-metrics "$GW" --push-job gate -- "$MS_PROGRAMS/rec_agg" 1 >/dev/null 2>"$WORK/record.err" || rc=$?
expect "record --check with a leak: exit status" "$rc" 1
got=$(curl -s "$GW/metrics" | awk '$1 ~ /^memscribe_check_[a-z]+\{/ && index($1, "job=\"gate\"") {
        name = $1; sub(/\{.*/, "", name); sub(/memscribe_check_/, "", name)
        check = $1; sub(/.*check="/, "", check); sub(/".*/, "", check)
        measure = $1; sub(/.*measure="/, "", measure); sub(/".*/, "", measure)
        printf "%s %s %s %.0f\n", check, measure, name, $2 }' | sort)   # the gateway writes 6.7108864e+07
want=$({ "$MEMSCRIBE" check --max-leaked 0 --max-peak 64M --format=json "$WORK/c.mscr" 2>/dev/null || true; } |
    jq -r '.checks[] | (.check | split(" ")[0]) as $c |
        "\($c) \(.measure) value \(.value)", "\($c) \(.measure) limit \(.limit)",
        "\($c) \(.measure) passed \(if .passed then 1 else 0 end)"' | sort)
expect "the pushed verdicts (check, measure, series, value) against check --format=json" "$got" "$want"
grep -q ' passed 0$' <<<"$got" && grep -q '^max-peak .* passed 1$' <<<"$got" ||
    fail "the verdicts: one failed check and one passed wanted: $got"

# No gateway there.
gone=$(fleet_port)
rc=0
"$MEMSCRIBE" record -q -o "$WORK/u.mscr" --push-metrics "http://127.0.0.1:$gone" -- "$MS_PROGRAMS/rec_agg" 1 \
    >/dev/null 2>"$WORK/record.err" || rc=$?
expect "record with no gateway there: exit status" "$rc" 1
grep -q "the last push to http://127.0.0.1:$gone failed" "$WORK/record.err" ||
    fail "no word of the failed push: $(cat "$WORK/record.err")"
echo "ok: pushes to the Pushgateway"
