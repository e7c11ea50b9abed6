#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Debian's real Prometheus scrapes memscribe serve's /metrics (docs/fleet.md):
# a generated config on loopback, scraping every second with the server's
# token as its bearer credentials_file (0600); once the target is up, an
# instant query of each process's heap in use, peak, allocations and the
# tree's peak through Prometheus's HTTP API gives `report --format=json`'s
# numbers of tests/programs/rec_agg (two processes). A second job without
# credentials is down, its error the server's 401.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" fleet-prometheus MEMSCRIBE MS_PROGRAMS
# shellcheck source=tests/e2e/fleet_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/fleet_lib.sh"

T=$WORK/agg.mscr
"$MEMSCRIBE" record -q -o "$T" -- "$MS_PROGRAMS/rec_agg" 5 >/dev/null 2>"$WORK/err" ||
    fail "record rec_agg: $(cat "$WORK/err")"
"$MEMSCRIBE" report --format=json "$T" >"$WORK/report.json" 2>/dev/null || fail "report"

"$MEMSCRIBE" serve --url-file "$WORK/url" "$T" >/dev/null 2>"$WORK/serve.err" &
FLEET_PIDS+=("$!")
for _ in $(seq 300); do [ -s "$WORK/url" ] && break; sleep 0.1; done
[ -s "$WORK/url" ] || fail "serve wrote no address: $(cat "$WORK/serve.err")"
url=$(cat "$WORK/url")
base=${url%%/\?token=*}
(umask 077 && printf '%s' "${url##*token=}" >"$WORK/token")

fleet_prometheus <<YML
  - job_name: memscribe
    authorization:
      credentials_file: $WORK/token
    static_configs:
      - targets: ['${base#http://}']
  - job_name: no-token
    static_configs:
      - targets: ['${base#http://}']
YML

# Both targets scraped once (up, or down with an error), within 60 s.
health=""
for _ in $(seq 120); do
    health=$(curl -s "$API/targets" 2>/dev/null |
        jq -r '[.data.activeTargets[] | select(.lastScrape != "0001-01-01T00:00:00Z")
                | "\(.labels.job)=\(.health)"] | sort | join(" ")' 2>/dev/null || true)
    [ "$health" = "memscribe=up no-token=down" ] && break
    sleep 0.5
done
expect "the targets" "$health" "memscribe=up no-token=down"
err=$(curl -s "$API/targets" | jq -r '.data.activeTargets[] | select(.labels.job == "no-token") | .lastError')
case $err in *401*) echo "ok: without the token: $err" ;; *) fail "without the token: '$err', not a 401" ;; esac

# usage: query PROMQL: its samples, "pid value" (pid "" for none), sorted.
query() {
    curl -s --data-urlencode "query=$1" "$API/query" |
        jq -r '.data.result[] | "\(.metric.pid // "") \(.value[1])"' | sort
}
for m in heap_in_use_bytes:leaked_bytes heap_peak_bytes:peak_bytes allocations_total:allocations \
    temporary_allocations_total:temporary; do
    expect "Prometheus's memscribe_${m%%:*}" "$(query "memscribe_${m%%:*}{job=\"memscribe\"}")" \
        "$(jq -r --arg k "${m#*:}" '.processes[] | "\(.pid) \(.[$k])"' "$WORK/report.json" | sort)"
done
expect "Prometheus's memscribe_tree_heap_peak_bytes" "$(query 'memscribe_tree_heap_peak_bytes{job="memscribe"}')" \
    " $(jq -r '.total.peak_bytes' "$WORK/report.json")"
echo "ok: Prometheus scraped /metrics with the bearer token and holds report's numbers"
