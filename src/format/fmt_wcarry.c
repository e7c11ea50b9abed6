/* SPDX-License-Identifier: MIT */
/* What a --keep-last segment's writer carries from the whole run's
 * (docs/aggregate.md, "Flight recorder"): the stacks, with the same ids,
 * and the mappings live when the segment begins. */
#include <errno.h>

#include "format/fmt_writer_internal.h"

int fmt_writer_copy_stacks(struct fmt_writer *dst, const struct fmt_writer *src)
{
    if (dst->out.err)
        return dst->out.err;
    if (dst->stacks.nr_nodes == src->stacks.nr_nodes)
        return 0;
    int rc = fmt_wstack_copy(&dst->stacks, &src->stacks);
    dst->st.nr_stacks = dst->stacks.nr_nodes;
    return rc;
}

uint32_t fmt_writer_nr_stacks(const struct fmt_writer *w)
{
    return w->stacks.nr_nodes;
}

int fmt_writer_live_maps(const struct fmt_writer *w, fmt_writer_map_fn *fn, void *arg)
{
    for (uint32_t i = 0; i < w->vm.nr_images; i++) {
        const struct fmt_wvm_image *im = &w->vm.images[i];

        for (uint32_t k = 0; k < im->nr; k++) {
            const struct fmt_wpiece *p = &im->v[k];
            struct fmt_writer_map m = {
                .addr = p->start,
                .size = p->end - p->start,
                .ts_ns = p->blk.ts_ns,
                .stack = p->blk.stack,
                .who = w->ctxs[p->blk.ctx],
                .prot = (uint32_t)p->how,
                .flags = (uint32_t)(p->how >> 32),
            };
            int rc = fn(arg, &m);
            if (rc)
                return rc;
        }
    }
    return 0;
}
