#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The include-circle check can fail: in a planted tree, src/cli/cli_a.c
# including cli_b.h while cli_b.c includes cli_a.h must make
# `check-style.sh include-circles` fail naming the circle; a file that
# includes its own _internal.h, and an _internal.h that includes its own
# public header, must pass (a unit's .c, .h and _internal.h count as one).
# Usage: circles.sh CHECK_STYLE_SH
set -euo pipefail
# shellcheck source=tests/layers/bite_lib.sh
source "$(dirname "$0")/bite_lib.sh"
NAME=circles.sh
check=$1
mkdir -p "$tree"/src/cli "$tree"/src/analysis/core
printf '#include "cli/cli_b.h"\n' >"$tree/src/cli/cli_a.c"
printf '/* b */\n' >"$tree/src/cli/cli_a.h"
printf '#include "cli/cli_b_internal.h"\n' >"$tree/src/cli/cli_b.c"
printf '#include "cli/cli_b.h"\n' >"$tree/src/cli/cli_b_internal.h"
printf '/* b */\n' >"$tree/src/cli/cli_b.h"
printf '#include "analysis/core/ana_x.h"\n' >"$tree/src/analysis/core/ana_y.c"
printf '/* x */\n' >"$tree/src/analysis/core/ana_x.h"
passes "a tree without a circle" bash "$check" include-circles "$tree"
printf '#include "cli/cli_a.h"\n' >>"$tree/src/cli/cli_b.c"
refused "cli_a.c includes cli_b.h, cli_b.c cli_a.h," '^src/cli: include circle: cli_a -> cli_b -> cli_a$' \
    bash "$check" include-circles "$tree"
echo "include circles: a planted one refused, a unit's own headers allowed"
