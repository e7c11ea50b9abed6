/* SPDX-License-Identifier: MIT */
/* The planner's loop (see ana_plan.h): each route asked in order of cost,
 * the first that can answer run, a note for every one passed over. */
#include "analysis/plan/ana_plan.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "analysis/model/ana_pmodel.h"
#include "analysis/plan/ana_plan_internal.h"

/* The routes, cheapest first, by enum ana_route. */
static const struct ana_route_ops *const routes[ANA_NR_ROUTES] = {
    [ANA_ROUTE_TOTALS] = &ana_route_totals_ops,
    [ANA_ROUTE_INDEX] = &ana_route_index_ops,
    [ANA_ROUTE_RANGES] = &ana_route_ranges_ops,
    [ANA_ROUTE_PASS] = &ana_route_pass_ops,
};

static const char *const names[ANA_NR_ROUTES] = {
    [ANA_ROUTE_TOTALS] = "totals",
    [ANA_ROUTE_INDEX] = "index",
    [ANA_ROUTE_RANGES] = "ranges",
    [ANA_ROUTE_PASS] = "one pass",
};

const char *ana_route_name(enum ana_route route)
{
    return route < ANA_NR_ROUTES ? names[route] : "?";
}

void ana_plan_reader_error(struct fmt_reader *r, int rc, char *err, size_t err_size)
{
    if ((rc == -EPROTO || rc == -EIO) && err_size && !err[0])
        snprintf(err, err_size, "%s", fmt_reader_error(r));
}

static void note(struct ana_plan *p, enum ana_route route, bool asked, const char *why)
{
    struct ana_plan_note *n = &p->notes[p->nr_notes++];

    n->route = route;
    n->asked = asked;
    snprintf(n->why, sizeof(n->why), "%s", why);
    if (asked && !p->asked)
        p->asked = n;
}

/* The first route from `from` on that does not refuse c's query; those
 * that do get a note. */
static enum ana_route next_route(const struct ana_plan_ctx *c, enum ana_route from,
                                 struct ana_plan *p)
{
    for (enum ana_route k = from; k < ANA_NR_ROUTES; k++) {
        bool asked = false;
        const char *no = routes[k]->refusal(c, &asked);

        if (!no)
            return k;
        note(p, k, asked, no);
    }
    return ANA_ROUTE_PASS; /* never: one pass refuses nothing */
}

enum ana_route ana_plan_choose(struct fmt_reader *r, const struct ana_query *q,
                               struct ana_plan *plan)
{
    struct ana_plan_ctx c = {.r = r, .q = q};

    memset(plan, 0, sizeof(*plan));
    return plan->route = next_route(&c, 0, plan);
}

/* q->verify of a whole trace answered from its events: where the chunks'
 * totals can answer, the model they make (the totals route's) must be m,
 * number for number (the summaries were held against the events as they
 * were read). Returns 0, -EBADMSG with the difference in err, or the
 * totals' -errno. */
static int verify_totals(const struct ana_plan_ctx *c, const struct ana_model *m, char *err,
                         size_t err_size)
{
    const struct ana_model_options *mo = c->q->mo;
    struct ana_model_options own = {0};
    struct ana_model *t;
    char why[300];
    int rc;

    if (ana_pmodel_totals_refusal(c->r, mo))
        return 0;
    /* the fold was fed by the replay: the totals' model keeps its sites */
    if (mo)
        own = *mo;
    own.retire = (struct ana_model_retire){0};
    if ((rc = ana_pmodel_totals_build(&t, c->r, c->path, &own, ANA_SHARES_EVERY, UINT64_MAX, err,
                                      err_size))) {
        ana_plan_reader_error(c->r, rc, err, err_size);
        return rc == -ENOTSUP ? 0 : rc;
    }
    /* sites handed to a fold at their image's end are in neither model */
    if (ana_model_differs(t, m, !(mo && mo->retire.fn), why, sizeof(why))) {
        snprintf(err, err_size,
                 "the chunks' totals do not match the events: %s (totals, then events)", why);
        rc = -EBADMSG;
    }
    ana_model_destroy(t);
    return rc;
}

int ana_plan_model(struct fmt_reader *r, const char *path, const struct ana_query *q,
                   struct ana_model **out, struct ana_plan *plan, char *err, size_t err_size)
{
    struct ana_plan_ctx c = {.r = r, .path = path, .q = q};
    struct ana_plan own;
    struct ana_model *m = NULL;
    enum ana_route k = 0;
    int rc;

    if (!plan)
        plan = &own;
    memset(plan, 0, sizeof(*plan));
    if (err_size)
        err[0] = '\0';
    for (;;) {
        bool asked = false;

        k = next_route(&c, k, plan);
        (void)routes[k]->refusal(&c, &asked);
        rc = routes[k]->run(&c, &m, err, err_size);
        if (rc != -ENOTSUP || k == ANA_ROUTE_PASS)
            break;
        /* it found it cannot answer: the next one does */
        note(plan, k, asked, err_size ? err : "");
        if (err_size)
            err[0] = '\0';
        k++;
    }
    plan->route = k;
    if (!rc && q->verify && q->until_ns == UINT64_MAX &&
        (k == ANA_ROUTE_RANGES || k == ANA_ROUTE_PASS))
        rc = verify_totals(&c, m, err, err_size);
    if (routes[k]->reads_r) {
        /* what reading held goes before the caller writes (on a build's
         * trace its large chunks' buffers outweigh the rows written) */
        fmt_reader_drop_chunk_buffers(r);
        malloc_trim(0);
    }
    if (rc) {
        ana_model_destroy(m);
        m = NULL;
    }
    *out = m;
    return rc;
}
