#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The include-circle check can fail: in a planted tree, src/cli/cli_a.c
# including cli_b.h while cli_b.c includes cli_a.h must make
# `check-style.sh include-circles` fail naming the circle; a file that
# includes its own _internal.h, and an _internal.h that includes its own
# public header, must pass (a unit's .c, .h and _internal.h count as one).
# Usage: circles.sh CHECK_STYLE_SH
set -euo pipefail
check=$1
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree"/src/cli "$tree"/src/analysis/core
printf '#include "cli/cli_b.h"\n' >"$tree/src/cli/cli_a.c"
printf '/* b */\n' >"$tree/src/cli/cli_a.h"
printf '#include "cli/cli_b_internal.h"\n' >"$tree/src/cli/cli_b.c"
printf '#include "cli/cli_b.h"\n' >"$tree/src/cli/cli_b_internal.h"
printf '/* b */\n' >"$tree/src/cli/cli_b.h"
printf '#include "analysis/core/ana_x.h"\n' >"$tree/src/analysis/core/ana_y.c"
printf '/* x */\n' >"$tree/src/analysis/core/ana_x.h"
if ! bash "$check" include-circles "$tree"; then
    echo "circles.sh: a tree without a circle was refused" >&2
    exit 1
fi
printf '#include "cli/cli_a.h"\n' >>"$tree/src/cli/cli_b.c"
if err=$(bash "$check" include-circles "$tree" 2>&1); then
    echo "circles.sh: cli_a.c includes cli_b.h, cli_b.c cli_a.h, and the check passed" >&2
    exit 1
fi
if ! grep -q '^src/cli: include circle: cli_a -> cli_b -> cli_a$' <<<"$err"; then
    echo "circles.sh: the check failed without naming the circle:" >&2
    echo "$err" >&2
    exit 1
fi
echo "include circles: a planted one refused, a unit's own headers allowed"
