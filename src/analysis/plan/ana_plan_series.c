/* SPDX-License-Identifier: MIT */
/* How a series over time is answered (ana_plan.h, ana_plan_timeline): a
 * timeline's rows from the chunks' totals where asked and the trace
 * allows, at chunk ends, else from a pass over the events. */
#include <stddef.h>

#include "analysis/model/ana_timeline.h"
#include "analysis/plan/ana_plan.h"

enum ana_route ana_plan_timeline(struct fmt_reader *r, const struct ana_filter *f,
                                 bool prefer_index, bool site_counts, const char **why)
{
    const char *no = prefer_index ? ana_timeline_index_refusal(r, f) : NULL;

    if (prefer_index && !no && site_counts)
        no = "the chunks' totals hold each site's bytes in use, not its allocations";

    *why = no;
    return prefer_index && !no ? ANA_ROUTE_TOTALS : ANA_ROUTE_PASS;
}
