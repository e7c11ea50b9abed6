/* SPDX-License-Identifier: MIT */
/* Standard errors of a site's estimates (see ana_site_se.h). */
#include "analysis/model/ana_site_se.h"

#include <math.h>

#include "analysis/model/ana_model.h"

/* A variance's root; a sum that added and took off terms may end a
 * rounding below 0. */
static double root(double var)
{
    return var > 0.0 ? sqrt(var) : 0.0;
}

void ana_site_se(const struct ana_site *s, uint64_t peak_bytes, struct ana_site_se *out)
{
    /* The site's recorded blocks: of its allocations, or of what is live
     * (a segment's carried blocks are live without being allocations). */
    double k = (double)s->nr_recorded, var_bytes = s->var_alloc_bytes, var_n = s->var_allocs;
    double bytes = (double)s->alloc_bytes;

    if (!s->nr_recorded && s->live_recorded > 0) {
        k = (double)s->live_recorded;
        var_bytes = s->var_live_bytes;
        var_n = s->var_live_blocks;
        bytes = (double)s->live_bytes;
    }
    /* one recorded block's mean terms, added to every sum; the variance
     * per byte, for the share of a peak */
    double one_bytes = k > 0 ? var_bytes / k : 0.0, one_n = k > 0 ? var_n / k : 0.0;
    double per_byte = bytes > 0 ? var_bytes / bytes : 0.0;

    out->peak = root(per_byte * (double)peak_bytes + one_bytes);
    out->leaked = root(s->var_live_bytes + one_bytes);
    out->blocks = root(s->var_live_blocks + one_n);
    out->allocs = root(s->var_allocs + one_n);
    out->bytes = root(s->var_alloc_bytes + one_bytes);
}
