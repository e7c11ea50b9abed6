/* SPDX-License-Identifier: MIT */
/* The trace's index of live heap per stack (see ana_index.h). */
#include "analysis/model/ana_index.h"

#include <errno.h>

#include "analysis/model/ana_heaps.h"

const char ana_index_stackless[] = "blocks without a stack in a trace of several processes";

const char *ana_index_refusal(struct fmt_reader *r, const struct ana_filter *f)
{
    if (fmt_reader_sample_bytes(r))
        return "a sampled trace's summaries hold recorded sizes, not estimates";
    if (fmt_reader_info(r)->aggregate_ns)
        return "an aggregated trace's summaries do not hold its batches";
    if (ana_heaps_present(r))
        return "a pool's or Windows heap's destruction ends blocks the summaries do not";
    if (f && f->nr_tids)
        return "the summaries are per stack, not per thread (--tid)";
    return NULL;
}

struct walk {
    struct fmt_reader *r;
    const struct ana_filter *f;
    ana_index_live_fn *fn;
    void *arg;
    int rc;
};

static void one(void *arg, uint32_t stack, int64_t bytes, int64_t blocks)
{
    struct walk *w = arg;
    uint32_t parent, image = 0;
    uint64_t addr;

    if (w->rc)
        return;
    /* A block without a stack: of the only process, or of one unknown. */
    if (!stack && fmt_reader_nr_images(w->r) > 1) {
        w->rc = -ENOTSUP;
        return;
    }
    if (stack && fmt_reader_stack_node(w->r, stack, &parent, &addr, &image))
        return;
    const struct fmt_image_info *ii = fmt_reader_image(w->r, image);
    if (ii && ana_filter_image(w->f, image, ii->pid))
        w->rc = w->fn(w->arg, stack, image, bytes, blocks);
}

int ana_index_live_at(struct fmt_reader *r, uint32_t k, const struct ana_filter *f,
                      ana_index_live_fn *fn, void *arg)
{
    struct walk w = {r, f, fn, arg, 0};
    int rc = fmt_reader_live_at_chunk(r, k, one, &w);

    return rc ? rc : w.rc;
}
