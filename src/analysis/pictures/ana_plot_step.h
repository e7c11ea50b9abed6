/* SPDX-License-Identifier: MIT */
/* A step function drawn as a polyline small enough for any trace: the
 * timeline plot and the replay plot draw their series with it. */
#ifndef ANA_PLOT_STEP_H
#define ANA_PLOT_STEP_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/pictures/ana_svg.h"

struct ana_polyline {
    double *xs, *ys;
    size_t n, cap;
};

/* Append the step function v[i] from t[i] on (n points, held until
 * end_ns) to p: at most four points per pixel column (where the column is
 * entered, its largest and smallest value, and the value it is left
 * with), so spikes narrower than a pixel stay visible. Returns 0 or
 * -ENOMEM. */
int ana_plot_step_line(struct ana_polyline *p, const struct ana_axis *x, const struct ana_axis *y,
                       const uint64_t *t, const uint64_t *v, size_t n, uint64_t end_ns);

void ana_polyline_free(struct ana_polyline *p);

#endif
