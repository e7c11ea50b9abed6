#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What the checks' bite tests share (internal.sh, circles.sh): a planted
# tree that must pass, then one that must fail naming what is wrong.
# Sourced; the caller sets NAME (its own, for messages) and plants its
# files in $tree, a new folder removed at exit.

tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT

# usage: passes WHY CMD...: CMD must pass; WHY says what was planted.
passes() {
    local why=$1
    shift
    if ! "$@"; then
        echo "$NAME: $why was refused" >&2
        exit 1
    fi
}

# usage: refused WHY LINE CMD...: CMD must fail, with LINE (a grep
# pattern) in what it says.
refused() {
    local why=$1 line=$2 err
    shift 2
    if err=$("$@" 2>&1); then
        echo "$NAME: $why and the check passed" >&2
        exit 1
    fi
    if ! grep -q "$line" <<<"$err"; then
        echo "$NAME: the check failed without naming it ($line):" >&2
        echo "$err" >&2
        exit 1
    fi
}
