#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record --live: the live view of a program that grows its heap in known
# steps, opened before the program's first allocation, in headless Chromium
# driven by Selenium, shows each step (how soon is printed) and, once the
# recording ended, the program's end and report's numbers
# (tests/e2e/serve_live.py). MODE (the first argument): plain, spinner (a
# CPU-bound process beside it) or attach (record -p PID --live).
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" serve-live MEMSCRIBE MS_BUILD MS_SOURCE MS_PROGRAMS
# shellcheck source=tests/e2e/html_chrome.sh
source "$MS_SOURCE/tests/e2e/html_chrome.sh"
need chromium
need chromedriver
PY=/usr/bin/python3 # Debian's, with python3-selenium
"$PY" -c 'import selenium' 2>/dev/null || fail "python3-selenium is not installed: run scripts/setup.sh --test"
MODE=${1:-plain}
"$PY" "$MS_SOURCE/tests/e2e/serve_live.py" "$MEMSCRIBE" "$MS_PROGRAMS/serve_steps" "$WORK" \
    "$ART/serve-live-$MODE.png" "$MODE" || fail "the live view did not follow the program (above)"
echo "ok: the live view followed each step"
