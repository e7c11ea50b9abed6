/* SPDX-License-Identifier: MIT */
/* Step functions as small polylines (ana_plot_step.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "analysis/pictures/ana_plot_step.h"
#include "util/util_array.h"

static int push(struct ana_polyline *p, double x, double y)
{
    /* Two arrays of one capacity: each grows from a copy of it. */
    size_t cx = p->cap, cy = p->cap;

    if (UTIL_ARRAY_RESERVE(p->xs, cx, p->n + 1, 1024) ||
        UTIL_ARRAY_RESERVE(p->ys, cy, p->n + 1, 1024))
        return -ENOMEM;
    p->cap = cx;
    p->xs[p->n] = x;
    p->ys[p->n++] = y;
    return 0;
}

int ana_plot_step_line(struct ana_polyline *p, const struct ana_axis *x, const struct ana_axis *y,
                       const uint64_t *t, const uint64_t *v, size_t n, uint64_t end_ns)
{
    size_t i = 0;
    double prev = 0;
    int rc = 0;

    while (i < n && !rc) {
        double col = floor(ana_axis_map(x, (double)t[i]));
        double px = ana_axis_map(x, (double)t[i]);
        uint64_t lo = v[i], hi = v[i];
        size_t j = i;

        while (j + 1 < n && floor(ana_axis_map(x, (double)t[j + 1])) == col) {
            j++;
            lo = v[j] < lo ? v[j] : lo;
            hi = v[j] > hi ? v[j] : hi;
        }
        if (i)
            rc |= push(p, px, prev);
        else
            rc |= push(p, px, ana_axis_map(y, (double)v[0]));
        rc |= push(p, px, ana_axis_map(y, (double)hi));
        rc |= push(p, px, ana_axis_map(y, (double)lo));
        prev = ana_axis_map(y, (double)v[j]);
        rc |= push(p, px, prev);
        i = j + 1;
    }
    if (n && !rc)
        rc = push(p, ana_axis_map(x, (double)end_ns), prev);
    return rc;
}

void ana_polyline_free(struct ana_polyline *p)
{
    free(p->xs);
    free(p->ys);
    p->xs = p->ys = NULL;
    p->n = p->cap = 0;
}
