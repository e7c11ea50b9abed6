/* SPDX-License-Identifier: MIT */
/* The totals route (ana_plan.h): the whole trace's model from its chunks'
 * totals (ana_pmodel_totals_build), for a query that prefers the index and
 * needs every counter (report --index, timeline --index's sites). */
#include <errno.h>

#include "analysis/model/ana_pmodel.h"
#include "analysis/plan/ana_plan_internal.h"

/* The events the peaks' replays may hold whatever the trace's size. */
#define MIN_BUDGET (1u << 20)

static const char *refusal(const struct ana_plan_ctx *c, bool *asked)
{
    const struct ana_query *q = c->q;

    *asked = false;
    if (!q->prefer_index)
        return "not asked for (--index)";
    if (q->need != ANA_NEED_ALL)
        return "the query asks a moment's live state, which the index route reads";
    if (q->until_ns != UINT64_MAX)
        return "the totals hold the whole trace, not a moment";
    *asked = true;
    return ana_pmodel_totals_refusal(c->r, q->mo);
}

static int run(const struct ana_plan_ctx *c, struct ana_model **out, char *err, size_t err_size)
{
    const struct ana_query *q = c->q;
    unsigned shares = q->shares ? q->shares : ANA_SHARES_EVERY;
    struct fmt_trace_counts n;

    /* The chunks of the peaks are replayed one after another: more events
     * than each CPU replays of the whole trace in ranges take longer. Up to
     * a million, either takes a tenth of a second: the route asked answers. */
    fmt_reader_counts(c->r, &n);
    uint64_t budget = n.nr_events / (q->nr_threads > 1 ? q->nr_threads : 1);
    if (q->max_replayed)
        budget = q->max_replayed;
    else if (budget < MIN_BUDGET)
        budget = MIN_BUDGET;
    int rc = ana_pmodel_totals_build(out, c->r, c->path, q->mo, shares, budget, err, err_size);

    ana_plan_reader_error(c->r, rc, err, err_size);
    return rc;
}

const struct ana_route_ops ana_route_totals_ops = {.refusal = refusal, .run = run, .reads_r = true};
