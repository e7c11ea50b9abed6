/* SPDX-License-Identifier: MIT */
/* What the planner (ana_plan.c) and its routes (ana_route_*.c) share: a
 * route's ops, and the context each is asked with. */
#ifndef ANA_PLAN_INTERNAL_H
#define ANA_PLAN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/plan/ana_plan.h"

/* A query about a trace: what every route is asked with. */
struct ana_plan_ctx {
    struct fmt_reader *r; /* the caller's reader */
    const char *path;     /* its file, for routes that open readers of their own */
    const struct ana_query *q;
};

/* A route. Both members are required. */
struct ana_route_ops {
    /* Why the route cannot answer c's query about c's trace, or NULL.
     * *asked: the query asked for this route (ana_plan_note.asked), set
     * whatever the answer. Reads the trace's header and chunk table only. */
    const char *(*refusal)(const struct ana_plan_ctx *c, bool *asked);
    /* Build the finished model. Returns 0; -ENOTSUP with why in err when
     * the route finds that it cannot answer after all (the next route
     * does); or -errno, with err as ana_plan_model says. */
    int (*run)(const struct ana_plan_ctx *c, struct ana_model **out, char *err, size_t err_size);
    /* It reads with c->r: the planner lets r's chunk buffers go after. */
    bool reads_r;
};

/* The routes, one file each. */
extern const struct ana_route_ops ana_route_totals_ops; /* ana_route_totals.c */
extern const struct ana_route_ops ana_route_index_ops;  /* ana_route_index.c */
extern const struct ana_route_ops ana_route_ranges_ops; /* ana_route_ranges.c */
extern const struct ana_route_ops ana_route_pass_ops;   /* ana_route_pass.c */

/* Set err to the reader's message after a route's -EPROTO or -EIO when
 * the route left it empty. */
void ana_plan_reader_error(struct fmt_reader *r, int rc, char *err, size_t err_size);

#endif
