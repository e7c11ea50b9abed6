/* SPDX-License-Identifier: MIT */
/* The ranges route (ana_plan.h): the events replayed on several threads
 * in ranges of chunks, each into a partial model, merged in order
 * (ana_pmodel_build). Each range opens a reader of its own on the path;
 * the caller's is not read. A trace of several selected processes, or
 * one too small to cut, is replayed by it in one pass (ana_pmodel.c). */
#include <errno.h>
#include <stdio.h>

#include "analysis/model/ana_pmodel.h"
#include "analysis/plan/ana_plan_internal.h"

/* Why these options need the events in order (ana_pmodel_supported). */
static const char *options_refusal(const struct ana_model_options *mo)
{
    if (ana_pmodel_supported(mo))
        return NULL;
    if (mo->keep_blocks)
        return "every block is kept (leaks --all, the leak classes of record --reach)";
    if (mo->temporary_threshold || mo->loose_temporary)
        return "the loose temporary rule looks back over blocks";
    if (mo->filter && mo->filter->nr_tids)
        return "a block's thread is learned where it was allocated (--thread)";
    if (mo->programs)
        return "the per-program view is summed in one pass";
    return "the processes are folded at their ends";
}

static const char *refusal(const struct ana_plan_ctx *c, bool *asked)
{
    *asked = false;
    if (c->q->nr_threads < 2)
        return "one thread (one CPU, or MEMSCRIBE_JOBS=1)";
    return options_refusal(c->q->mo);
}

static int run(const struct ana_plan_ctx *c, struct ana_model **out, char *err, size_t err_size)
{
    const struct ana_query *q = c->q;
    struct ana_pmodel_options po = {
        .nr_threads = q->nr_threads,
        .until_ns = q->until_ns,
        .min_range_events = q->min_range_events,
        .progress = q->progress,
        .progress_arg = q->progress_arg,
        .verify = q->verify,
    };
    int rc = ana_pmodel_build(out, c->path, q->mo, &po, err, err_size);

    /* the ranges' readers are gone: the file is what is known */
    if ((rc == -EPROTO || rc == -EIO) && err_size && !err[0])
        snprintf(err, err_size, "%s", c->path);
    return rc;
}

const struct ana_route_ops ana_route_ranges_ops = {.refusal = refusal, .run = run};
