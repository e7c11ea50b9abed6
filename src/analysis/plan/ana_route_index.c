/* SPDX-License-Identifier: MIT */
/* The index route (ana_plan.h): a moment's live state from the chunks'
 * summaries and the events of the chunk that reaches it
 * (ana_pmodel_index_build), for a query that prefers the index and needs
 * the live state only (leaks --index). */
#include <errno.h>

#include "analysis/model/ana_pmodel.h"
#include "analysis/plan/ana_plan_internal.h"

static const char *refusal(const struct ana_plan_ctx *c, bool *asked)
{
    const struct ana_query *q = c->q;

    *asked = false;
    if (!q->prefer_index)
        return "not asked for (--index)";
    if (q->need != ANA_NEED_LIVE)
        return "the index holds a moment's live state; the query needs every counter";
    *asked = true;
    return ana_pmodel_index_refusal(c->r, q->mo);
}

static int run(const struct ana_plan_ctx *c, struct ana_model **out, char *err, size_t err_size)
{
    int rc = ana_pmodel_index_build(out, c->r, c->path, c->q->mo, c->q->until_ns, err, err_size);

    ana_plan_reader_error(c->r, rc, err, err_size);
    return rc;
}

const struct ana_route_ops ana_route_index_ops = {.refusal = refusal, .run = run, .reads_r = true};
