#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a service's metrics cost (docs/fleet.md, "What it costs"): a
# workload run untraced, under `record --sample 512K` alone, and under
# `record --sample 512K --metrics` with Debian's Prometheus scraping
# /metrics every second, in interleaved rounds (the order rotates), each
# traced run's time over its round's untraced time. Two figures a workload: the wall time (what the
# service's users wait) and the CPU time of everything that ran (the
# program, the recorder, its metrics server and the metrics it answers
# with; Prometheus itself not counted), each as the mean ratio with its
# 95 % confidence interval (Student's t over the rounds) and the median;
# "sampled" is --sample 512K alone, "traced" with --metrics and the scrapes.
# The load average before and after is printed with them.
#
# usage: bench/metrics_cost.sh MEMSCRIBE [-r PAIRS] [-x TIMES] [-- WORKLOAD...]
#   PAIRS     rounds per workload (default 10)
#   TIMES     each workload's size times this (default 1): a service runs
#             for hours, and a run of a second or two is ruled by the
#             recorder's start and end
#   WORKLOAD  sqlite python (default: both); bench/run.sh's sizes
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
MS=$(realpath "${1:?usage: bench/metrics_cost.sh MEMSCRIBE [-r PAIRS] [-x TIMES] [-- WORKLOAD...]}")
shift
PAIRS=10 TIMES=1
if [ "${1:-}" = -r ]; then PAIRS=${2:?-r wants a number}; shift 2; fi
if [ "${1:-}" = -x ]; then TIMES=${2:?-x wants a number}; shift 2; fi
case $TIMES in '' | *[!0-9]* | 0) echo "metrics_cost.sh: -x wants a whole number, 1 or more" >&2; exit 2 ;; esac
[ "${1:-}" = -- ] && shift
WORKLOADS=("$@")
[ ${#WORKLOADS[@]} -gt 0 ] || WORKLOADS=(sqlite python)
for t in prometheus curl; do
    command -v "$t" >/dev/null || { echo "metrics_cost.sh: $t is not installed (scripts/setup.sh --test)" >&2; exit 1; }
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/metrics-cost.XXXXXX")
PROM=""
trap '[ -z "$PROM" ] || kill "$PROM" 2>/dev/null; rm -rf "$WORK"' EXIT

awk -v rows=$((200000 * TIMES)) -f "$BENCH_DIR/gen_sql.awk" >"$WORK/big.sql"
workload() {
    case $1 in
    sqlite) CMD=(sqlite3 -batch :memory: ".read $WORK/big.sql") ;;
    python) CMD=(env PYTHONMALLOC=malloc /usr/bin/python3 "$BENCH_DIR/json_roundtrip.py" $((100000 * TIMES))) ;;
    *) echo "metrics_cost.sh: unknown workload $1" >&2; exit 2 ;;
    esac
}
port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Prometheus scraping the one address every traced run listens on.
MPORT=$(port)
PPORT=$(port)
head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$WORK/token"
chmod 600 "$WORK/token"
cat >"$WORK/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: memscribe
    authorization:
      credentials_file: $WORK/token
    static_configs:
      - targets: ['127.0.0.1:$MPORT']
YML
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
    --web.listen-address="127.0.0.1:$PPORT" >"$WORK/prometheus.log" 2>&1 &
PROM=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PPORT/-/ready" >/dev/null 2>&1 && break; sleep 0.2; done

# usage: timed OUT CMD...: "wall_s cpu_s" of CMD and the children it waited
# for into OUT (GNU time's elapsed, user + system).
timed() {
    local out=$1
    shift
    /usr/bin/time -f '%e %U %S' -o "$WORK/time" "$@" >/dev/null 2>"$WORK/err" ||
        { echo "metrics_cost.sh: $* failed: $(tail -3 "$WORK/err")" >&2; exit 1; }
    awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$WORK/time" >>"$out"
}
# The scrapes that succeeded so far (Prometheus's own count).
scrapes() {
    curl -s --data-urlencode 'query=sum_over_time(up{job="memscribe"}[1d])' \
        "http://127.0.0.1:$PPORT/api/v1/query" | sed -n 's/.*"value":\[[^,]*,"\([0-9]*\)".*/\1/p'
}
cat >"$WORK/report.awk" <<'AWK'
# t(0.975, n-1) for n-1 = 1..29 (then ~2.0)
function tq(df) { split("12.71 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086 2.080 2.074 2.069 2.064 2.060 2.056 2.052 2.048 2.045", t, " "); return df <= 29 ? t[df] : 2.0 }
function report(what, r, k,   i, m, v) {
    for (i = 1; i <= k; i++) m += r[i]
    m /= k
    for (i = 1; i <= k; i++) v += (r[i] - m) ^ 2
    v = k > 1 ? sqrt(v / (k - 1) / k) * tq(k - 1) : 0
    printf "  %-5s traced/untraced: mean %.4f (95%% CI %.4f..%.4f), median %.4f\n", what, m, m - v, m + v, median(list[what])
}
{ k++; rw[k] = $3 / $1; rc[k] = $4 / $2; list["wall"] = list["wall"] " " rw[k]; list["cpu"] = list["cpu"] " " rc[k]
  pw = pw " " $1; tw = tw " " $3 }
END {
    printf "%s: %d pairs (untraced wall median %.2f s, traced %.2f s; successful scrapes so far: %s)\n", w, k, median(pw), median(tw), s
    report("wall", rw, k); report("cpu", rc, k)
}
AWK

echo "metrics_cost: $(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "memscribe: $MS; $(prometheus --version 2>&1 | head -1); workloads x$TIMES"
for w in "${WORKLOADS[@]}"; do
    workload "$w"
    : >"$WORK/$w.plain"
    : >"$WORK/$w.sampled"
    : >"$WORK/$w.traced"
    orders=("plain sampled traced" "sampled traced plain" "traced plain sampled")
    for ((i = 1; i <= PAIRS; i++)); do
        for side in ${orders[$((i % 3))]}; do
            case $side in
            plain) timed "$WORK/$w.plain" "${CMD[@]}" ;;
            sampled) timed "$WORK/$w.sampled" "$MS" record -q -o "$WORK/t.mscr" --sample 512K -- "${CMD[@]}" ;;
            traced) timed "$WORK/$w.traced" "$MS" record -q -o "$WORK/t.mscr" --sample 512K \
                --metrics "127.0.0.1:$MPORT" --metrics-token-file "$WORK/token" -- "${CMD[@]}" ;;
            esac
            rm -rf "$WORK/t.mscr"
        done
    done
    scrapes=$(scrapes)
    for arm in sampled traced; do
        paste -d' ' "$WORK/$w.plain" "$WORK/$w.$arm" |
            awk -v w="$w, $arm" -v s="$scrapes" -f "$BENCH_DIR/median.awk" -f "$WORK/report.awk"
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
