/* SPDX-License-Identifier: MIT */
/* The exact stretch of record --max-size (rec_agg.h, docs/aggregate.md):
 * until the trace reaches its size, each event is written as it comes, as
 * an exact recording writes it, while the aggregator follows the live
 * blocks (all kept), each thread's latest block and the heap, so that the
 * aggregated stretch after the switch starts from what an exact reader
 * would know: a block made before the switch and freed after it is a kept
 * block's end, its temporary decided by the same rule. */
#include <errno.h>

#include "recorder/rec_agg_internal.h"

/* The block at (image, heap, addr) ends, if it is live (else the free
 * changes nothing, as for a reader). 0 or -ENOMEM. */
static int exact_end(struct rec_agg *a, struct rec_agg_thread *t, uint32_t image, uint32_t heap,
                     uint64_t addr)
{
    uint32_t slot = addr ? rec_agg_find(a, image, heap, addr) : 0;

    return addr && a->bix[slot] && rec_agg_end(a, t, slot) < 0 ? -ENOMEM : 0;
}

static int exact_start(struct rec_agg *a, struct rec_agg_thread *t,
                       const struct fmt_writer_who *who, const struct fmt_event *e, uint32_t heap)
{
    struct rec_agg_alloc in = {
        .kind = e->kind, .heap = heap, .size = e->size, .stack = e->stack, .kept = 1};

    return rec_agg_start(a, t, who, e->ts_ns, e->addr, &in);
}

int rec_agg_exact_heap(struct rec_agg *a, struct rec_agg_thread *t,
                       const struct fmt_writer_who *who, unsigned kind, uint64_t ts, uint64_t addr,
                       uint64_t size, uint32_t stack)
{
    struct fmt_event e = {
        .ts_ns = ts, .kind = (uint16_t)kind, .stack = stack, .addr = addr, .size = size};
    int rc = fmt_writer_heap(a->w, who, kind, ts, addr, size, stack);

    if (rc)
        return rc;
    if (kind == FMT_EV_FREE)
        return exact_end(a, t, who->image, 0, addr);
    return addr ? exact_start(a, t, who, &e, 0) : 0;
}

int rec_agg_exact_realloc(struct rec_agg *a, struct rec_agg_thread *t,
                          const struct fmt_writer_who *who, const struct fmt_event *e)
{
    int rc =
        fmt_writer_realloc(a->w, who, e->flags, e->ts_ns, e->old_addr, e->addr, e->size, e->stack);

    rc = rc ?: exact_end(a, t, who->image, 0, e->old_addr);
    return rc ?: e->addr ? exact_start(a, t, who, e, 0) : 0;
}

int rec_agg_exact_event(struct rec_agg *a, struct rec_agg_thread *t, const struct fmt_event *ev)
{
    struct fmt_writer_who who = {ev->image, ev->thread, ev->pid, ev->tid};
    unsigned kind = ev->kind;
    int failed = (ev->flags & FMT_EVF_FAILED) != 0, rc;
    uint32_t heap = 0;

    /* A pool's blocks end before its HEAP_DESTROY (the writer writes their
     * frees), and so they do here. */
    if (kind == FMT_EV_HEAP_DESTROY && (ev->flags & FMT_EVF_POOL) &&
        (rc = rec_agg_pool_destroy(a, t, ev)))
        return rc;
    if ((rc = fmt_writer_event(a->w, ev)))
        return rc;
    if (kind == FMT_EV_PROCESS_EXIT)
        return rec_agg_image_exit(a, ev->image);
    if (kind < FMT_EV_MALLOC || kind > FMT_EV_PVALLOC || failed)
        return 0; /* a failed call ends and starts nothing */
    if (ev->flags & FMT_EVF_POOL)
        heap = rec_agg_pool_id(a, ev->image, ev->arg[1], 1);
    if (kind == FMT_EV_FREE)
        return exact_end(a, t, ev->image, heap, ev->addr);
    if (kind == FMT_EV_REALLOC || kind == FMT_EV_REALLOCARRAY)
        rc = exact_end(a, t, ev->image, heap, ev->old_addr);
    return rc ?: ev->addr ? exact_start(a, t, &who, ev, heap) : 0;
}

int rec_agg_switch_cut(struct rec_agg *a, uint64_t ts)
{
    /* In the context of the first image's thread the recorder knows. */
    const struct fmt_writer_who *who = NULL;
    struct fmt_writer_stats st;
    int rc;

    for (uint32_t i = 0; i < a->cap_images && !who; i++)
        if (a->images[i].known)
            who = &a->images[i].who;
    struct fmt_event ev = {.ts_ns = ts,
                           .kind = FMT_EV_AGGREGATE,
                           .image = who ? who->image : 0,
                           .thread = who ? who->thread : 0,
                           .pid = who ? who->pid : 0,
                           .tid = who ? who->tid : 0,
                           .arg = {a->period, 1}};

    fmt_writer_get_stats(a->w, &st);
    a->st.switched_ns = ts;
    a->st.exact_bytes = st.bytes_written;
    rc = fmt_writer_event(a->w, &ev);
    a->exact = 0;
    rec_agg_cut_reset(a, ts);
    return rc;
}
