#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The private-header check can fail: in a planted tree, a file of another
# folder that includes src/a/a_internal.h must make
# `check-style.sh internal-headers` fail naming it, and the same include
# from src/a/, from a test of the room (tests/unit) and by name alone
# beside the header must pass.
# Usage: internal.sh CHECK_STYLE_SH
set -euo pipefail
check=$1
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree"/{include,src/a,src/b,tests/unit,bench,examples,scripts,.ci}
printf '/* private */\n' >"$tree/src/a/a_internal.h"
printf '#include "a/a_internal.h"\n' >"$tree/src/a/a_one.c"
printf '#include "a_internal.h"\n' >"$tree/src/a/a_two.c"
printf '#include "a/a_internal.h"\n' >"$tree/tests/unit/test_a.c"
if ! bash "$check" internal-headers "$tree"; then
    echo "internal.sh: includes from the header's own folder were refused" >&2
    exit 1
fi
printf '#include <stdio.h>\n  #  include "a/a_internal.h"\n' >"$tree/src/b/b.c"
if err=$(bash "$check" internal-headers "$tree" 2>&1); then
    echo "internal.sh: src/b/b.c includes a/a_internal.h and the check passed" >&2
    exit 1
fi
if ! grep -q '^src/b/b.c:2: includes a/a_internal.h, private to src/a$' <<<"$err"; then
    echo "internal.sh: the check failed without naming src/b/b.c:2:" >&2
    echo "$err" >&2
    exit 1
fi
echo "internal headers: a foreign include refused, own ones allowed"
