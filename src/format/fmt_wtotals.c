/* SPDX-License-Identifier: MIT */
/* The writer's chunk totals (fmt_wtotals_internal.h): the slow paths, the
 * rarer events and the TOTALS record (docs/format-blocks.md, "TOTALS"). */
#include "format/fmt_wtotals_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/fmt_buf_internal.h"
#include "format/fmt_layout_internal.h"
#include "format/fmt_wdelta_internal.h"
#include "format/fmt_writer.h"
#include "util/util_array.h"

/* The all-processes part followed event by event from now on: until now
 * it was the chunk's one image's own (the running processes' change is
 * that image's while it alone has events and has not exited), which keeps
 * the hot path of a chunk of one process free of it. */
static void go_multi(struct fmt_wtotals *t)
{
    if (t->multi)
        return;
    t->multi = true;
    t->all.heap = t->all.blocks = 0;
    t->all.peak = INT64_MIN;
    if (t->nr == 1 && !t->v[0].gone) {
        const struct fmt_wtimg *e = &t->v[0];
        struct fmt_wtall *parts[2] = {&t->all, e->grp ? &t->gv[e->grp - 1].part : NULL};
        for (int i = 0; i < 2 && parts[i]; i++) {
            parts[i]->heap = e->heap;
            parts[i]->blocks = e->blocks;
            parts[i]->peak = e->peak;
            parts[i]->peak_ns = e->peak_ns;
            parts[i]->peak_blocks = e->peak_blocks;
        }
    }
}

/* Image's entry in the chunk of generation gen, made (first at ts_ns) if
 * new; NULL if out of memory. */
static struct fmt_wtimg *img_entry(struct fmt_wtotals *t, uint64_t gen, uint32_t image,
                                   uint32_t pid, uint64_t ts_ns)
{
    if (UTIL_ARRAY_RESERVE_ZERO(t->at, t->nr_at, (size_t)image + 1, 16))
        return NULL;
    if (t->at[image].gen == gen)
        return &t->v[t->at[image].idx];
    if (UTIL_ARRAY_RESERVE(t->v, t->cap, (size_t)t->nr + 1, 4))
        return NULL;
    if (t->nr || t->at[image].gone)
        go_multi(t);
    struct fmt_wtimg *e = &t->v[t->nr];
    memset(e, 0, sizeof(*e));
    e->image = image;
    e->pid = pid;
    e->first_ns = ts_ns;
    e->peak = INT64_MIN;
    e->gone = t->at[image].gone;
    t->at[image].gen = gen;
    t->at[image].idx = t->nr++;
    t->gen = gen;
    return fmt_wtgrp_attach(t, e) ? NULL : e;
}

int fmt_wtot_switch(struct fmt_wtotals *t, uint64_t gen, uint32_t ctx,
                    const struct fmt_writer_who *who, uint64_t ts_ns)
{
    struct fmt_wtimg *e;
    uint32_t thread = who->thread;

    if (t->cur)
        t->cur->last_ns = t->ts; /* the context left: its image's latest */
    e = img_entry(t, gen, who->image, who->pid, ts_ns);
    if (!e || UTIL_ARRAY_RESERVE_ZERO(t->thr_last, t->nr_thr, (size_t)thread + 1, 64))
        return -ENOMEM;
    t->ts = ts_ns;
    t->cur = e;
    t->thr = &t->thr_last[thread];
    t->ctx = ctx;
    return 0;
}

int fmt_wtot_other(struct fmt_wtotals *t, const struct fmt_event *ev)
{
    struct fmt_wtimg *e = t->cur;

    if (!e)
        return 0;
    /* What a segment carries in, or what was mapped when the stream
     * began: not calls (ana_model.c's apply) */
    if (ev->origin == FMT_ORIGIN_SNAPSHOT && fmt_kind_is_heap_alloc(ev->kind)) {
        e->carried++;
        e->carried_bytes += ev->size;
    } else if (ev->origin == FMT_ORIGIN_SNAPSHOT) {
        e->start_maps++;
    } else {
        fmt_wtot_call(t, ev->kind, ev->flags);
    }
    if (fmt_event_is_arena_map(ev->kind, ev->origin, ev->size, ev->arg[0], ev->arg[1]))
        e->arena_maps++;
    switch (ev->kind) {
    case FMT_EV_RSS:
        /* its program's running processes' sum, and its highest after a
         * sample of one of them (ana_model_programs.c) */
        if (!e->gone && e->grp) {
            struct fmt_wtprog *p = &t->progs[t->at[e->image].group - 1];
            struct fmt_wtall *g = &t->gv[e->grp - 1].part;
            p->rss = p->rss - t->at[e->image].rss + ev->size;
            if (!g->has_rss || p->rss > g->rss_max) {
                g->rss_max = p->rss;
                g->rss_max_ns = ev->ts_ns;
            }
            g->has_rss = true;
        }
        /* the running processes' sum of latest samples (ana_model.c) */
        if (!e->gone)
            t->all.rss = t->all.rss - t->at[e->image].rss + ev->size;
        t->at[e->image].rss = ev->size;
        if (!t->all.has_rss || t->all.rss > t->all.rss_max) {
            t->all.rss_max = t->all.rss;
            t->all.rss_max_ns = ev->ts_ns;
        }
        t->all.has_rss = true;
        /* The highest sample first reached, as the model's strict > */
        if (!e->has_rss || ev->size > e->rss_max) {
            e->rss_max = ev->size;
            e->rss_max_ns = ev->ts_ns;
        }
        e->has_rss = true;
        e->rss_last = ev->size;
        e->rss_last_ns = ev->ts_ns;
        break;
    case FMT_EV_DROPPED:
        e->dropped += ev->arg[0];
        break;
    case FMT_EV_PROCESS_EXIT:
        e->ended = true;
        e->end_ns = ev->ts_ns;
        /* its whole heap leaves the running processes' (ana_stepper_exit) */
        go_multi(t);
        if (!e->gone) {
            const struct fmt_wtimg_at *a = &t->at[e->image];
            t->all.heap -= a->heap + e->heap;
            t->all.blocks -= a->blocks + e->blocks;
            t->all.rss -= a->rss;
            if (e->grp) { /* and its program's */
                struct fmt_wtgrp *g = &t->gv[e->grp - 1];
                g->part.heap -= a->heap + e->heap;
                g->part.blocks -= a->blocks + e->blocks;
                t->progs[a->group - 1].rss -= a->rss;
                g->exits = true;
            }
            e->gone = true;
        }
        break;
    case FMT_EV_PROCESS_START:
        return fmt_wtgrp_start(t, e, ev->str, ev->str ? ev->str_len : 0);
    }
    return 0;
}

static int cmp_image(const void *a, const void *b)
{
    uint32_t x = ((const struct fmt_wtimg *)a)->image, y = ((const struct fmt_wtimg *)b)->image;

    return x < y ? -1 : x > y;
}

static void put_image(struct fmt_buf *b, const struct fmt_wtimg *e, uint64_t base_ns)
{
    uint32_t nr = 0;
    bool has_peak = e->peak != INT64_MIN;

    fmt_buf_put_varint(b, e->image);
    fmt_buf_put_varint(b, e->pid);
    fmt_buf_put_varint(b, (uint64_t)has_peak | (uint64_t)e->has_rss << 1 | (uint64_t)e->ended << 2);
    fmt_buf_put_varint(b, e->first_ns - base_ns);
    fmt_buf_put_varint(b, e->last_ns - e->first_ns);
    for (unsigned k = 0; k < FMT_TOTALS_KEYS; k++)
        nr += e->calls[k] != 0;
    fmt_buf_put_varint(b, nr);
    for (unsigned k = 0; k < FMT_TOTALS_KEYS; k++) {
        if (!e->calls[k])
            continue;
        fmt_buf_put_varint(b, k);
        fmt_buf_put_varint(b, e->calls[k]);
        fmt_buf_put_varint(b, e->failed[k]);
    }
    fmt_buf_put_varint(b, e->start_maps);
    fmt_buf_put_varint(b, e->carried);
    fmt_buf_put_varint(b, e->carried_bytes);
    fmt_buf_put_varint(b, e->arena_maps);
    fmt_buf_put_varint(b, e->unmatched);
    fmt_buf_put_varint(b, e->dropped);
    fmt_buf_put_varint(b, e->allocs);
    fmt_buf_put_varint(b, e->alloc_bytes);
    fmt_buf_put_varint(b, fmt_zigzag(e->heap));
    fmt_buf_put_varint(b, fmt_zigzag(e->blocks));
    if (has_peak) {
        fmt_buf_put_varint(b, fmt_zigzag(e->peak));
        fmt_buf_put_varint(b, e->peak_ns - e->first_ns);
        fmt_buf_put_varint(b, fmt_zigzag(e->peak_blocks));
    }
    if (e->has_rss) {
        fmt_buf_put_varint(b, e->rss_max);
        fmt_buf_put_varint(b, e->rss_max_ns - e->first_ns);
        fmt_buf_put_varint(b, e->rss_last);
        fmt_buf_put_varint(b, e->rss_last_ns - e->first_ns);
    }
    if (e->ended)
        fmt_buf_put_varint(b, e->end_ns - e->first_ns);
}

/* The all-processes part (TOTALS_ALL), after the stacks; a program's
 * (TOTALS_PROGS) after its first image. */
void fmt_wtall_put(struct fmt_buf *b, const struct fmt_wtall *a, uint64_t base_ns)
{
    bool has_peak = a->peak != INT64_MIN;

    fmt_buf_put_varint(b, (uint64_t)has_peak | (uint64_t)a->has_rss << 1);
    fmt_buf_put_varint(b, fmt_zigzag(a->heap));
    fmt_buf_put_varint(b, fmt_zigzag(a->blocks));
    if (has_peak) {
        fmt_buf_put_varint(b, fmt_zigzag(a->peak));
        fmt_buf_put_varint(b, a->peak_ns - base_ns);
        fmt_buf_put_varint(b, fmt_zigzag(a->peak_blocks));
    }
    if (a->has_rss) {
        fmt_buf_put_varint(b, a->rss_max);
        fmt_buf_put_varint(b, a->rss_max_ns - base_ns);
    }
}

/* The chunk's images' heaps carried to the next chunk's start, and the
 * all-processes part begun again. */
static void carry(struct fmt_wtotals *t)
{
    for (uint32_t i = 0; i < t->nr; i++) {
        const struct fmt_wtimg *e = &t->v[i];
        struct fmt_wtimg_at *a = &t->at[e->image];
        a->heap += e->heap;
        a->blocks += e->blocks;
        a->gone = e->gone;
    }
    t->all = (struct fmt_wtall){.rss = t->all.rss}; /* the rest set by go_multi */
    t->multi = false;
}

int fmt_wtot_put(struct fmt_wtotals *t, struct fmt_buf *defs, uint64_t chunk, uint64_t base_ns,
                 struct fmt_wdeltas *d)
{
    struct fmt_buf b = {0};
    uint32_t nr = 0;
    int rc;

    if (t->cur)
        t->cur->last_ns = t->ts;
    t->cur = NULL;
    t->thr = NULL;
    if (!t->on)
        return 0;
    for (uint32_t i = 0; i < d->nr; i++)
        nr += d->touched[i].allocs || d->touched[i].temps;
    rc = fmt_buf_reserve(&b, (10 + (size_t)t->nr * (24 + 3 * FMT_TOTALS_KEYS) + 5 * (size_t)nr) *
                                 FMT_VARINT_MAX);
    if (rc)
        return rc;
    /* images in increasing order: a reader finds one by a binary search */
    qsort(t->v, t->nr, sizeof(*t->v), cmp_image);
    fmt_buf_put_varint(&b, chunk);
    fmt_buf_put_varint(&b, t->nr);
    for (uint32_t i = 0; i < t->nr; i++)
        put_image(&b, &t->v[i], base_ns);
    fmt_buf_put_varint(&b, nr);
    uint32_t prev = 0;
    for (uint32_t i = 0; i < d->nr; i++) { /* d is sorted by stack */
        const struct fmt_wdelta *x = &d->touched[i];
        if (!x->allocs && !x->temps)
            continue;
        /* allocs << 2 | how its temporaries are told: 0 none, 1 all of
         * its allocations, 2 counted after (deep-small, a stack per
         * allocation: each entry 5 varints -> 3, its totals +69 -> +41 %
         * of the trace) */
        unsigned how = !x->temps                                                  ? 0
                       : x->temps == x->allocs && x->temp_bytes == x->alloc_bytes ? 1
                                                                                  : 2;
        fmt_buf_put_varint(&b, x->stack - prev);
        fmt_buf_put_varint(&b, x->allocs << 2 | how);
        if (x->allocs)
            fmt_buf_put_varint(&b, x->alloc_bytes);
        if (how == 2) {
            fmt_buf_put_varint(&b, x->temps);
            fmt_buf_put_varint(&b, x->temp_bytes);
        }
        prev = x->stack;
    }
    go_multi(t); /* a chunk of one image: its part */
    fmt_wtall_put(&b, &t->all, base_ns);
    rc = fmt_wtgrp_put(t, &b, base_ns);
    carry(t);
    rc = rc ?: fmt_buf_add_varint(defs, FMT_DEF_TOTALS);
    rc = rc ?: fmt_buf_add_string(defs, b.data, b.len);
    fmt_buf_free(&b);
    t->nr = 0; /* at forgets them by generation */
    return rc;
}

void fmt_wtot_destroy(struct fmt_wtotals *t)
{
    fmt_wtgrp_destroy(t);
    free(t->v);
    free(t->at);
    free(t->thr_last);
    memset(t, 0, sizeof(*t));
}
