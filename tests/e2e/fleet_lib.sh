# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2034 # API: read by the tests that source this
# What the tests with a real Prometheus share (tests/e2e/fleet_*.sh), sourced
# after lib.sh: the programs they start in the background (FLEET_PIDS),
# ended with the test; a free loopback port; Prometheus on one, scraping
# every second with the config on stdin, its HTTP API in API.
need jq
need curl
need prometheus
FLEET_PIDS=()
fleet_stop() {
    local p
    for p in "${FLEET_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap fleet_stop EXIT

# usage: fleet_port: a free TCP port on 127.0.0.1.
fleet_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# usage: fleet_prometheus < SCRAPE_CONFIGS: Prometheus with a global scrape
# and timeout of 1 s and those scrape_configs (YAML, indented as under
# the key), checked by promtool first; its API's address in API.
fleet_prometheus() {
    local port
    port=$(fleet_port)
    { printf 'global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n'; cat; } >"$WORK/prometheus.yml"
    promtool check config "$WORK/prometheus.yml" >"$WORK/promtool.out" 2>&1 ||
        fail "promtool check config: $(cat "$WORK/promtool.out")"
    prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
        --web.listen-address="127.0.0.1:$port" >"$WORK/prometheus.log" 2>&1 &
    FLEET_PIDS+=("$!")
    API=http://127.0.0.1:$port/api/v1
}
