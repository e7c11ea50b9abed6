#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The private-header check can fail: in a planted tree, a file of another
# folder that includes src/a/a_internal.h must make
# `check-style.sh internal-headers` fail naming it, and the same include
# from src/a/, from a test of the room (tests/unit) and by name alone
# beside the header must pass.
# Usage: internal.sh CHECK_STYLE_SH
set -euo pipefail
# shellcheck source=tests/layers/bite_lib.sh
source "$(dirname "$0")/bite_lib.sh"
NAME=internal.sh
check=$1
mkdir -p "$tree"/{include,src/a,src/b,tests/unit,bench,examples,scripts,.ci}
printf '/* private */\n' >"$tree/src/a/a_internal.h"
printf '#include "a/a_internal.h"\n' >"$tree/src/a/a_one.c"
printf '#include "a_internal.h"\n' >"$tree/src/a/a_two.c"
printf '#include "a/a_internal.h"\n' >"$tree/tests/unit/test_a.c"
passes "includes from the header's own folder" bash "$check" internal-headers "$tree"
printf '#include <stdio.h>\n  #  include "a/a_internal.h"\n' >"$tree/src/b/b.c"
refused "src/b/b.c includes a/a_internal.h" '^src/b/b.c:2: includes a/a_internal.h, private to src/a$' \
    bash "$check" internal-headers "$tree"
echo "internal headers: a foreign include refused, own ones allowed"
