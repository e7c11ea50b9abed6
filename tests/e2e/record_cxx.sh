#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# C++ new, delete, new[], delete[] show up as malloc and free with the
# right sizes; a static initializer's allocation (before main) too.
source "$(dirname "$0")/record_lib.sh"

ms_record_marked col_cxx
n=$(grep -c "^malloc .* size=2345\$" "$WORK/calls" || true)
[ "$n" = 1 ] || fail "the static initializer's new char[2345] appears $n times, not once"
echo "ok: $(wc -l <"$WORK/expected") calls as expected"
