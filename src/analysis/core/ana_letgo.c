/* SPDX-License-Identifier: MIT */
/* A reader's stacks let go as processes end (see ana_letgo.h). */
#include "analysis/core/ana_letgo.h"

#include <errno.h>
#include <stdlib.h>

#include "analysis/core/ana_stacks.h"
#include "memscribe/trace.h"

int ana_letgo_image(struct ana_letgo *g, uint32_t image, uint64_t end_ns)
{
    uint32_t due;
    uint64_t due_end;

    if (g->stacks)
        ana_stacks_drop_nodes(g->stacks);
    while (ana_ended_due(&g->ended, end_ns, &due, &due_end)) {
        int rc = fmt_reader_forget_image(g->r, due);
        if (rc)
            return rc;
    }
    return ana_ended_push(&g->ended, image, end_ns);
}

int ana_letgo_fn(void *g, uint32_t image, uint64_t end_ns)
{
    return ana_letgo_image(g, image, end_ns);
}

struct end_of {
    uint64_t end_ns;
    uint32_t image;
};

static int by_end(const void *x, const void *y)
{
    const struct end_of *a = x, *b = y;

    if (a->end_ns != b->end_ns)
        return a->end_ns < b->end_ns ? -1 : 1;
    return (a->image > b->image) - (a->image < b->image);
}

int ana_letgo_before(struct ana_letgo *g, uint64_t t_ns)
{
    uint32_t n = fmt_reader_nr_images(g->r), k = 0;
    struct end_of *v = malloc(((size_t)n + 1) * sizeof(*v));
    int rc = 0;

    if (!v)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        const struct fmt_image_info *ii = fmt_reader_image(g->r, i);
        if (ii && ii->ended && ii->end_ns + ANA_ENDED_LAG_NS < t_ns)
            v[k++] = (struct end_of){ii->end_ns, i};
    }
    /* In the order they ended, each forgotten decodes the stacks defined
     * up to its last (the reader's table of stack images tells where):
     * only those of the processes running then are held. */
    qsort(v, k, sizeof(*v), by_end);
    for (uint32_t i = 0; i < k && !rc; i++)
        rc = fmt_reader_forget_image(g->r, v[i].image);
    free(v);
    return rc;
}

void ana_letgo_release(struct ana_letgo *g)
{
    ana_ended_release(&g->ended);
}
