/* SPDX-License-Identifier: MIT */
/* The one-pass route (ana_plan.h): the events replayed in order with the
 * caller's reader (ana_model_build). It answers every query, so it is the
 * last asked. */
#include "analysis/plan/ana_plan_internal.h"

static const char *refusal(const struct ana_plan_ctx *c, bool *asked)
{
    (void)c;
    *asked = false;
    return NULL;
}

static int run(const struct ana_plan_ctx *c, struct ana_model **out, char *err, size_t err_size)
{
    const struct ana_query *q = c->q;
    struct ana_scan_options so;
    int rc;

    ana_scan_options_init(&so);
    so.until_ns = q->until_ns;
    so.progress = q->progress;
    so.progress_arg = q->progress_arg;
    fmt_reader_verify_summaries(c->r, q->verify);
    rc = ana_model_build(out, c->r, q->mo, &so);
    ana_plan_reader_error(c->r, rc, err, err_size);
    return rc;
}

const struct ana_route_ops ana_route_pass_ops = {.refusal = refusal, .run = run, .reads_r = true};
