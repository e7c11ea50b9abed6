/* SPDX-License-Identifier: MIT */
/* A duration as people write it on a command line: a decimal number and a
 * unit, `1.5s`, `250ms`, `40us` (or `µs`), `100ns`, `2min` (`m`), `1h`;
 * without a unit, seconds. The one parser of every option that takes a
 * time (--interval, --duration, --snapshot-every, --time-unit, and the
 * points of ana_time.h). Exact integer arithmetic: `0.000000001s` is 1 ns,
 * never a rounded double. */
#ifndef UTIL_DURATION_H
#define UTIL_DURATION_H

#include <stdint.h>

/* Parse s into nanoseconds. Returns 0, or -EINVAL (not a duration; a sign;
 * a fraction finer than 1 ns) or -ERANGE (more than 2^64 - 1 ns). Zero is
 * a duration: callers that need a positive one say so. */
int util_duration_parse(const char *s, uint64_t *ns);

#endif
