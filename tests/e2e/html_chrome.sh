# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced by the picture tests: run Debian's chromium headless on a local
# file (flags that work as root in a container) with the page's console on
# stderr; and the checks of the files they write (has, lacks, wellformed).
# Screenshots go to $ART, tests/artifacts/ of the build directory.
ART=$MS_BUILD/tests/artifacts
mkdir -p "$ART"
# usage: chrome WORKDIR [chromium args...] URL
chrome() {
    local dir=$1
    shift
    local profile
    profile=$(mktemp -d "$dir/chrome-profile.XXXXXX")
    timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --hide-scrollbars \
        --user-data-dir="$profile" --enable-logging=stderr --v=0 --virtual-time-budget=5000 "$@"
}

# What the HTML report's script sets last (src/analysis/html/report.js):
# the sign, in its DOM, that it has run to the end.
# shellcheck disable=SC2034 # read by the tests that source this
READY='<body[^>]* data-ready="1"'

# usage: dump_dom WORKDIR OUT ERR MARKER [chromium args...] URL: the DOM
# chromium built (--dump-dom) in OUT, its stderr in ERR, once it has MARKER
# (grep -E), what the page's script writes once it has run (READY for the
# HTML report). Chromium dumps when the page loaded and its virtual time
# budget ran out, which does not say that the script has run: a dump
# without MARKER is taken again, for up to 60 s. Returns chromium's status,
# or 1, saying so, without MARKER.
dump_dom() {
    local dir=$1 out=$2 err=$3 marker=$4 rc n=0 end=$((SECONDS + 60))
    shift 4
    while :; do
        n=$((n + 1))
        rc=0
        chrome "$dir" --dump-dom "$@" >"$out" 2>"$err" || rc=$?
        [ "$rc" = 0 ] || return "$rc"
        grep -qE -- "$marker" "$out" && return 0
        ((SECONDS < end)) || break
    done
    echo "dump_dom: ${*: -1}: no '$marker' in its DOM after $n dumps in 60 s" >&2
    return 1
}

# usage: console_errors STDERR_FILE -> prints the page's console lines
# (our pages log nothing: any line is an error, a CSP violation included).
console_lines() {
    grep -a 'CONSOLE' "$1" || true
}

# usage: has FILE TEXT: the file contains TEXT literally.
has() {
    grep -qF -- "$2" "$1" || fail "$(basename "$1") lacks '$2'"
    echo "ok: $(basename "$1") has '$2'"
}
# usage: lacks FILE TEXT: the file does not contain TEXT.
lacks() {
    ! grep -qF -- "$2" "$1" || fail "$(basename "$1") contains '$2'"
    echo "ok: $(basename "$1") has no '$2'"
}
# usage: wellformed FILE: xmllint, a real XML parser, reads it.
wellformed() {
    xmllint --noout "$1" 2>"$WORK/xmllint.err" || fail "$1 is not well-formed: $(cat "$WORK/xmllint.err")"
    echo "ok: $(basename "$1") is well-formed XML"
}
# usage: record_demo TRACE: the demo (examples/memtest_demo) recorded.
record_demo() {
    "$MEMSCRIBE" record -q -o "$1" -- "$MS_BUILD/examples/memtest_demo" >"$WORK/out" 2>"$WORK/err" ||
        fail "record exited with $?: $(cat "$WORK/err")"
}
