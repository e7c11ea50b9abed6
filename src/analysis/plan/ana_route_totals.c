/* SPDX-License-Identifier: MIT */
/* The totals route (ana_plan.h): the whole trace's model from its chunks'
 * totals (ana_pmodel_totals_build), for a query that prefers the index and
 * needs every counter (report --index, timeline --index's sites). */
#include <errno.h>

#include "analysis/model/ana_pmodel.h"
#include "analysis/plan/ana_plan_internal.h"

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
    int rc = ana_pmodel_totals_build(out, c->r, c->path, c->q->mo, err, err_size);

    ana_plan_reader_error(c->r, rc, err, err_size);
    return rc;
}

const struct ana_route_ops ana_route_totals_ops = {.refusal = refusal, .run = run, .reads_r = true};
