/* SPDX-License-Identifier: MIT */
/* Bounded answers (ana_plan.h, ana_plan_interval): the interval that keeps
 * a series within the points the query states. */
#include <stdint.h>

#include "analysis/plan/ana_plan.h"

/* Points besides the multiples of the interval: the first and the last. */
#define EDGE_POINTS 2

uint64_t ana_plan_interval(uint64_t span_ns, uint64_t interval_ns, uint64_t max_points)
{
    uint64_t iv = interval_ns ? interval_ns : 1;

    if (!max_points)
        return iv;
    if (max_points < EDGE_POINTS + 1)
        max_points = EDGE_POINTS + 1;
    /* floor(span / x) <= L exactly when x > span / (L + 1) */
    uint64_t fit = max_points - EDGE_POINTS, need = span_ns / (fit + 1) + 1;
    if (span_ns / iv <= fit)
        return iv;
    uint64_t k = need / iv + (need % iv != 0);
    return k <= UINT64_MAX / iv ? k * iv : UINT64_MAX;
}
