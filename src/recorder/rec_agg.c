/* SPDX-License-Identifier: MIT */
/* The aggregator's events in (rec_agg.h): what each does to the live
 * blocks, the heap in use and its highest moments, the interval's sites
 * and batch rows, and what it leaves in the interval's buffer for the cut
 * (rec_agg_cut.c) to write. The rules are ana_step.h's, so that the batch
 * rows count what a reader of the exact trace would: a block ends before
 * one starts in a realloc, a free of an address not live changes nothing,
 * the peak is the first moment of the highest value. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/rec_agg_internal.h"
#include "util/util_array.h"

int rec_agg_new(struct rec_agg **out, struct fmt_writer *w, uint64_t period_ns, int exact_first)
{
    struct rec_agg *a;

    *out = NULL;
    if (!period_ns)
        return -EINVAL;
    if (!(a = calloc(1, sizeof(*a))))
        return -ENOMEM;
    a->w = w;
    a->period = period_ns;
    a->unit = fmt_writer_time_unit(w);
    a->next_cut = period_ns;
    a->iv = 1;
    /* record --max-size: exact until rec_agg_switch, no cut before; its
     * FMT_EV_AGGREGATE comes at the switch. */
    if ((a->exact = exact_first) != 0) {
        a->next_cut = UINT64_MAX;
        a->started = 1;
    }
    /* The first block's lookup finds an index (rec_agg_find needs one). */
    if (!(a->bix = calloc(4096, sizeof(*a->bix)))) {
        free(a);
        return -ENOMEM;
    }
    a->bix_mask = 4095;
    *out = a;
    return 0;
}

void rec_agg_free(struct rec_agg *a)
{
    if (!a)
        return;
    rec_agg_table_free(a);
    rec_agg_ix_free(a);
    free(a->hev);
    free(a->gev);
    for (struct rec_agg_arena *c = a->arena, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(a->threads);
    free(a->images);
    free(a->pools);
    free(a->orphans);
    free(a);
}

void rec_agg_get_stats(const struct rec_agg *a, struct rec_agg_stats *st)
{
    *st = a->st;
}

/* The image's record, its interval's highest begun (the heap it had at
 * the cut) at its first change in an interval; NULL when out of memory. */
static struct rec_agg_image *image_enter(struct rec_agg *a, uint32_t image)
{
    struct rec_agg_image *im;

    if (image >= a->cap_images &&
        UTIL_ARRAY_RESERVE_ZERO(a->images, a->cap_images, (size_t)image + 1, 16))
        return NULL;
    im = &a->images[image];
    if (im->iv != a->iv) {
        im->iv = a->iv;
        im->max = im->heap;
        im->max_seq = 0;
    }
    return im;
}

/* The thread of who, learnt at its first event (a thread index names one
 * thread of one image for the whole trace); NULL when out of memory. */
static struct rec_agg_thread *thread_of(struct rec_agg *a, const struct fmt_writer_who *who)
{
    struct rec_agg_thread *t;

    if (who->thread >= a->cap_threads &&
        UTIL_ARRAY_RESERVE_ZERO(a->threads, a->cap_threads, (size_t)who->thread + 1, 64))
        return NULL;
    t = &a->threads[who->thread];
    if (!t->known) {
        struct rec_agg_image *im = image_enter(a, who->image);

        if (!im)
            return NULL;
        t->who = *who;
        t->known = 1;
        /* An image's transient groups carry its main thread's context, as
         * the events the recorder makes for it, else its first thread's. */
        if (!im->known || (who->tid == who->pid && im->who.tid != im->who.pid))
            im->who = *who;
        im->known = 1;
    }
    return t;
}

/* A site's pending bytes change: first keep what they were at the latest
 * highest moments, if this is the first change since (rec_agg_internal.h). */
static inline void site_touch(const struct rec_agg *a, struct rec_agg_site *s,
                              const struct rec_agg_image *im)
{
    if (s->snap_epoch[0] != a->epoch) {
        s->snap_bytes[0] = s->bytes;
        s->snap_blocks[0] = s->blocks;
        s->snap_epoch[0] = a->epoch;
    }
    if (s->snap_epoch[1] != im->epoch) {
        s->snap_bytes[1] = s->bytes;
        s->snap_blocks[1] = s->blocks;
        s->snap_epoch[1] = im->epoch;
    }
}

/* After an event that grew the heap: a new highest of all images, of the
 * image, each the first moment of its value (a new epoch). */
static inline void check_max(struct rec_agg *a, struct rec_agg_image *im, uint64_t ts)
{
    if (a->heap > a->max) {
        a->max = a->heap;
        a->max_seq = a->seq;
        a->max_ts = ts;
        a->epoch++;
    }
    if (im->heap > im->max) {
        im->max = im->heap;
        im->max_seq = a->seq;
        im->max_ts = ts;
        im->epoch++;
    }
}

/* A pool's id for the blocks' key (its blocks are apart from malloc's):
 * 0 when out of memory (its blocks are then taken for malloc's). Pools
 * are few: a list. */
uint32_t rec_agg_pool_id(struct rec_agg *a, uint32_t image, uint64_t handle, int make)
{
    for (uint32_t i = 0; i < a->nr_pools; i++)
        if (a->pools[i].image == image && a->pools[i].handle == handle)
            return i + 1;
    if (!make || UTIL_ARRAY_RESERVE(a->pools, a->cap_pools, (size_t)a->nr_pools + 1, 8))
        return 0;
    a->pools[a->nr_pools++] = (struct rec_agg_pool){image, handle};
    return a->nr_pools;
}

int rec_agg_end(struct rec_agg *a, struct rec_agg_thread *t, uint32_t slot)
{
    uint32_t k = a->bix[slot];
    struct rec_agg_blk *b = &a->blks[k];
    struct rec_agg_image *im = image_enter(a, b->image);
    int temp = t->last_seq == b->seq, pending = b->pend != 0;

    if (!im)
        return -ENOMEM;
    t->last_seq = 0; /* any end of a known block by the thread, as ana_step.h */
    im->heap = im->heap >= b->size ? im->heap - b->size : 0;
    if (!im->ended)
        a->heap = a->heap >= b->size ? a->heap - b->size : 0;
    if (pending) {
        struct rec_agg_site *s = &a->sites[b->site];

        site_touch(a, s, im);
        s->bytes -= b->size;
        s->blocks--;
    }
    if ((pending || temp) && !a->exact) { /* an exact stretch's reader decides */
        /* A temporary block is its own thread's: the allocating one. */
        struct rec_agg_row *row = rec_agg_row(a, b->thread, b->stack, rec_agg_class(b->size));

        if (!row)
            return -ENOMEM;
        if (pending) {
            row->blocks++;
            row->bytes += b->size;
            a->st.nr_transient++;
        }
        if (temp) {
            row->temp++;
            row->temp_bytes += b->size;
        }
    }
    rec_agg_unindex(a, slot);
    if (pending)
        rec_agg_pend_drop(a, k);
    rec_agg_blk_free(a, k);
    return pending;
}

/* Another block took the address of block k at slot: the trace missed its
 * free, or it comes later (a thread that published its free after another
 * thread's allocation there; one killed in between never does). The writer keeps
 * such a block live for ever, and so do the heap and a reader: a pending
 * one stays to be written at the cut, a kept one is an orphan now
 * (rec_agg_orphan_kept). */
static int orphan(struct rec_agg *a, uint32_t slot)
{
    uint32_t k = a->bix[slot];

    rec_agg_unindex(a, slot);
    if (!a->blks[k].pend)
        return rec_agg_orphan_kept(a, k);
    a->blks[k].kind |= REC_AGG_ORPHAN;
    return 0;
}

int rec_agg_orphan_kept(struct rec_agg *a, uint32_t k)
{
    /* Without segments, nothing asks for it again. */
    if (!a->keep_fields) {
        rec_agg_blk_free(a, k);
        return 0;
    }
    if (UTIL_ARRAY_RESERVE(a->orphans, a->cap_orphans, (size_t)a->nr_orphans + 1, 64))
        return -ENOMEM;
    a->orphans[a->nr_orphans++] = k;
    return 0;
}

int rec_agg_start(struct rec_agg *a, struct rec_agg_thread *t, const struct fmt_writer_who *who,
                  uint64_t ts, uint64_t addr, const struct rec_agg_alloc *in)
{
    uint32_t slot = rec_agg_find(a, who->image, in->heap, addr);
    struct rec_agg_image *im = image_enter(a, who->image);
    uint32_t k, ext = 0;

    if (!im)
        return -ENOMEM;
    if (a->bix[slot] && orphan(a, slot))
        return -ENOMEM;
    if (!(k = rec_agg_blk_new(a, who->image, in->heap, addr)))
        return -ENOMEM;
    if (!in->kept && in->arg && (in->arg[0] || in->arg[1] || in->flags) &&
        !(ext = rec_agg_ext_new(a, in->arg, in->flags)))
        return -ENOMEM;
    struct rec_agg_blk *b = &a->blks[k];
    b->size = in->size;
    b->ts = ts;
    b->seq = a->seq;
    b->thread = who->thread;
    b->stack = in->stack;
    b->kind = in->kind;
    b->ext = ext;
    if (!in->kept) {
        uint32_t si = rec_agg_site(a, who->image, in->stack);

        if (si == UINT32_MAX || rec_agg_pend_add(a, k))
            return -ENOMEM;
        struct rec_agg_site *s = &a->sites[si];
        site_touch(a, s, im);
        s->bytes += in->size;
        s->blocks++;
        a->blks[k].site = si;
    }
    t->last_seq = a->seq;
    im->heap += in->size;
    if (!im->ended)
        a->heap += in->size;
    check_max(a, im, ts);
    return 0;
}

/* The interval keeps a heap event of the merge's fast paths for the cut. */
static int keep_hev(struct rec_agg *a, unsigned kind, unsigned flags, uint64_t ts,
                    const struct fmt_writer_who *who, uint64_t old_addr, uint64_t addr,
                    uint64_t size, uint32_t stack)
{
    if (UTIL_ARRAY_RESERVE(a->hev, a->cap_hev, a->nr_hev + 1, 1024))
        return -ENOMEM;
    a->hev[a->nr_hev++] = (struct rec_agg_hev){.seq = a->seq,
                                               .ts = ts,
                                               .addr = addr,
                                               .size = size,
                                               .old_addr = old_addr,
                                               .thread = who->thread,
                                               .stack = stack,
                                               .kind = (uint16_t)kind,
                                               .flags = (uint16_t)flags};
    return 0;
}

/* Room for len bytes in the interval's arena (until the cut). */
static void *arena_take(struct rec_agg *a, size_t len)
{
    struct rec_agg_arena *c = a->arena;

    len = (len + 15) & ~(size_t)15;
    if (!c || c->cap - c->used < len) {
        size_t cap = len > 65536 ? len : 65536;

        if (!(c = malloc(sizeof(*c) + cap)))
            return NULL;
        c->cap = cap;
        c->used = 0;
        c->next = a->arena;
        a->arena = c;
    }
    c->used += len;
    return c->data + c->used - len;
}

static const char *arena_copy(struct rec_agg *a, const char *s, uint32_t len, int *bad)
{
    char *d;

    if (!s)
        return NULL;
    if (!(d = arena_take(a, len ? len : 1))) {
        *bad = 1;
        return NULL;
    }
    memcpy(d, s, len);
    return d;
}

/* The interval keeps any event for the cut, its strings and module
 * copied (they point into the rings). */
static int keep_gev(struct rec_agg *a, const struct fmt_event *ev)
{
    struct rec_agg_gev *g;
    int bad = 0;

    if (UTIL_ARRAY_RESERVE(a->gev, a->cap_gev, a->nr_gev + 1, 256))
        return -ENOMEM;
    g = &a->gev[a->nr_gev];
    g->seq = a->seq;
    g->ev = *ev;
    g->ev.str = arena_copy(a, ev->str, ev->str_len, &bad);
    g->ev.str2 = arena_copy(a, ev->str2, ev->str2_len, &bad);
    if (ev->module) {
        struct fmt_module *m = arena_take(a, sizeof(*m));

        if (!m)
            return -ENOMEM;
        *m = *ev->module;
        m->path = arena_copy(a, ev->module->path, ev->module->path_len, &bad);
        g->ev.module = m;
    }
    if (bad)
        return -ENOMEM;
    a->nr_gev++;
    return 0;
}

/* The cuts whose time came before an event at ts. */
static int advance(struct rec_agg *a, uint64_t ts)
{
    while (rec_agg_cut_due(a, ts)) {
        uint64_t at = a->next_cut;
        int empty = !a->nr_hev && !a->nr_gev && !a->nr_rows && a->nr_pend == a->nr_pend_dead;
        int rc = rec_agg_cut(a, at);

        if (rc)
            return rc;
        /* An idle stretch: no cut has anything to write until ts, whose
         * tick is past the last of them. */
        if (empty && rec_agg_cut_due(a, ts)) {
            a->last_cut = (ts - a->unit) - (ts - a->unit) % a->period;
            a->next_cut = a->last_cut + a->period;
        }
    }
    return 0;
}

int rec_agg_advance(struct rec_agg *a, uint64_t ts_ns, uint64_t *last)
{
    int rc = advance(a, ts_ns);

    *last = a->last_cut;
    return rc;
}

int rec_agg_cut_at(struct rec_agg *a, uint64_t ts_ns)
{
    int rc = advance(a, ts_ns);

    /* An exact stretch has written everything already. A cut at the time
     * of the last one still writes what came since at that same time. */
    return rc ?: !a->exact ? rec_agg_cut(a, ts_ns > a->last_cut ? ts_ns : a->last_cut) : 0;
}

void rec_agg_switch(struct rec_agg *a)
{
    /* At once: a cut at the latest event's time (the next event or the
     * watermark makes it); the cuts after it fall on multiples of the
     * period. Waiting for the next multiple let a trace asked for 64K at
     * 1 s take a second more of exact events. */
    if (a->exact && a->next_cut == UINT64_MAX)
        a->next_cut = a->last_ts - a->last_ts % a->unit;
}

int rec_agg_exact_now(const struct rec_agg *a)
{
    return a->exact;
}

/* The begin of every event: the cuts that came, its arrival number, its
 * thread. NULL with *rc set when out of memory or the writer failed. */
static inline struct rec_agg_thread *begin(struct rec_agg *a, const struct fmt_writer_who *who,
                                           uint64_t ts, int *rc)
{
    struct rec_agg_thread *t;

    if (rec_agg_cut_due(a, ts) && (*rc = advance(a, ts)))
        return NULL;
    a->seq++;
    a->last_ts = ts;
    if (!(t = thread_of(a, who)))
        *rc = -ENOMEM;
    return t;
}

int rec_agg_heap(struct rec_agg *a, const struct fmt_writer_who *who, unsigned kind, uint64_t ts_ns,
                 uint64_t addr, uint64_t size, uint32_t stack)
{
    int rc = 0;
    struct rec_agg_thread *t = begin(a, who, ts_ns, &rc);

    if (!t)
        return rc;
    if (a->exact)
        return rec_agg_exact_heap(a, t, who, kind, ts_ns, addr, size, stack);
    if (kind == FMT_EV_MALLOC) {
        struct rec_agg_alloc in = {.kind = FMT_EV_MALLOC, .size = size, .stack = stack};

        return addr ? rec_agg_start(a, t, who, ts_ns, addr, &in)
                    : keep_hev(a, kind, 0, ts_ns, who, 0, 0, size, stack);
    }
    if (!addr)
        return 0; /* free(NULL): starts and ends nothing, not written (docs/aggregate.md) */
    uint32_t slot = rec_agg_find(a, who->image, 0, addr);
    if (a->bix[slot] && (rc = rec_agg_end(a, t, slot)) != 0)
        return rc < 0 ? rc : 0; /* transient */
    /* A kept block's end, or an address not known: as an exact trace. */
    return keep_hev(a, FMT_EV_FREE, 0, ts_ns, who, 0, addr, 0, stack);
}

/* A realloc (plain: ev NULL, the fields given; else ev's kind, arguments
 * and flags): its old block ends (transient, or kept: then the realloc is
 * written as it is and its new block is kept at once), its new block
 * starts. The new block of a pending or unknown one is written, if kept,
 * as an allocation of its kind with old_addr 0; an unknown old address
 * ends by a free of its own (docs/aggregate.md). */
static int realloc_block(struct rec_agg *a, struct rec_agg_thread *t,
                         const struct fmt_writer_who *who, const struct fmt_event *ev,
                         const struct fmt_event *plain)
{
    const struct fmt_event *e = ev ? ev : plain;
    uint32_t heap = 0;
    int rc, kept_old = 0;

    if (e->flags & FMT_EVF_POOL)
        heap = rec_agg_pool_id(a, who->image, e->arg[1], 1);
    uint32_t slot = e->old_addr ? rec_agg_find(a, who->image, heap, e->old_addr) : 0;
    if (e->old_addr && a->bix[slot]) {
        if ((rc = rec_agg_end(a, t, slot)) < 0)
            return rc;
        kept_old = !rc;
    } else if (e->old_addr && e->addr) {
        /* Not known: its end passes through, as a free of its heap. */
        struct fmt_event f = *e;

        f.kind = FMT_EV_FREE;
        f.addr = e->old_addr;
        f.old_addr = f.size = 0;
        f.flags &= FMT_EVF_POOL;
        if (e->kind == FMT_EV_REALLOCARRAY) /* its args are counts, not a heap's */
            f.arg[0] = f.arg[1] = 0;
        rc =
            ev ? keep_gev(a, &f) : keep_hev(a, FMT_EV_FREE, 0, f.ts_ns, who, 0, f.addr, 0, f.stack);
        if (rc)
            return rc;
    } else if (e->old_addr) {
        kept_old = 1; /* realloc(p, 0) of an unknown p: as it is */
    }
    if (kept_old && (rc = ev ? keep_gev(a, ev)
                             : keep_hev(a, e->kind, e->flags, e->ts_ns, who, e->old_addr, e->addr,
                                        e->size, e->stack)))
        return rc;
    if (!e->addr)
        return 0; /* realloc(p, 0) that freed p */
    struct rec_agg_alloc in = {.kind = e->kind,
                               .heap = heap,
                               .size = e->size,
                               .stack = e->stack,
                               .arg = ev ? e->arg : NULL,
                               .flags = (uint16_t)(e->flags & ~FMT_EVF_IN_PLACE),
                               .kept = kept_old};
    return rec_agg_start(a, t, who, e->ts_ns, e->addr, &in);
}

int rec_agg_realloc(struct rec_agg *a, const struct fmt_writer_who *who, unsigned flags,
                    uint64_t ts_ns, uint64_t old_addr, uint64_t addr, uint64_t size, uint32_t stack)
{
    int rc = 0;
    struct rec_agg_thread *t = begin(a, who, ts_ns, &rc);
    struct fmt_event e = {.ts_ns = ts_ns,
                          .kind = FMT_EV_REALLOC,
                          .flags = (uint16_t)flags,
                          .stack = stack,
                          .addr = addr,
                          .size = size,
                          .old_addr = old_addr};

    if (!t)
        return rc;
    return a->exact ? rec_agg_exact_realloc(a, t, who, &e) : realloc_block(a, t, who, NULL, &e);
}

int rec_agg_image_exit(struct rec_agg *a, uint32_t image)
{
    struct rec_agg_image *im = image_enter(a, image);

    if (!im)
        return -ENOMEM;
    if (!im->ended)
        a->heap = a->heap >= im->heap ? a->heap - im->heap : 0;
    im->ended = 1;
    return 0;
}

static int by_seq(const void *x, const void *y)
{
    uint64_t a = ((const struct rec_agg_blk *)x)->seq, b = ((const struct rec_agg_blk *)y)->seq;

    return a < b ? -1 : a > b;
}

int rec_agg_pool_destroy(struct rec_agg *a, struct rec_agg_thread *t, const struct fmt_event *ev)
{
    uint32_t id = rec_agg_pool_id(a, ev->image, ev->arg[1], 0);
    struct rec_agg_blk *v = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;

    if (!id)
        return 0;
    for (uint32_t i = 0; i <= a->bix_mask; i++) {
        const struct rec_agg_blk *b = a->bix[i] ? &a->blks[a->bix[i]] : NULL;

        if (!b || b->image != ev->image || b->heap != id)
            continue;
        if (UTIL_ARRAY_RESERVE(v, cap, n + 1, 64)) {
            free(v);
            return -ENOMEM;
        }
        v[n++] = *b;
    }
    if (n)
        qsort(v, n, sizeof(*v), by_seq);
    for (size_t i = 0; i < n && rc >= 0; i++)
        rc = rec_agg_end(a, t, rec_agg_find(a, ev->image, id, v[i].addr));
    free(v);
    return rc < 0 ? rc : 0;
}

/* A heap event of the merge's generic path (flags, arguments, a pool's). */
static int heap_event(struct rec_agg *a, struct rec_agg_thread *t, const struct fmt_writer_who *who,
                      const struct fmt_event *ev)
{
    uint32_t heap = (ev->flags & FMT_EVF_POOL) ? rec_agg_pool_id(a, who->image, ev->arg[1], 1) : 0;
    int rc;

    if (ev->kind == FMT_EV_REALLOC || ev->kind == FMT_EV_REALLOCARRAY)
        return (ev->flags & FMT_EVF_FAILED) ? keep_gev(a, ev) : realloc_block(a, t, who, ev, NULL);
    if (ev->kind == FMT_EV_FREE) {
        if (!ev->addr)
            return 0; /* free(NULL), as on the fast path */
        uint32_t slot = rec_agg_find(a, who->image, heap, ev->addr);
        if (a->bix[slot] && (rc = rec_agg_end(a, t, slot)) != 0)
            return rc < 0 ? rc : 0;
        return keep_gev(a, ev);
    }
    if ((ev->flags & FMT_EVF_FAILED) || !ev->addr)
        return keep_gev(a, ev); /* no block: a failed call is written as it is */
    struct rec_agg_alloc in = {.kind = ev->kind,
                               .heap = heap,
                               .size = ev->size,
                               .stack = ev->stack,
                               .arg = ev->arg,
                               .flags = ev->flags};
    return rec_agg_start(a, t, who, ev->ts_ns, ev->addr, &in);
}

int rec_agg_event(struct rec_agg *a, const struct fmt_event *ev)
{
    struct fmt_writer_who who = {ev->image, ev->thread, ev->pid, ev->tid};
    int rc = 0;
    struct rec_agg_thread *t = begin(a, &who, ev->ts_ns, &rc);

    if (!t)
        return rc;
    if (a->exact)
        return rec_agg_exact_event(a, t, ev);
    if (ev->kind >= FMT_EV_MALLOC && ev->kind <= FMT_EV_PVALLOC)
        return heap_event(a, t, &who, ev);
    if (ev->kind == FMT_EV_HEAP_DESTROY && (ev->flags & FMT_EVF_POOL) &&
        (rc = rec_agg_pool_destroy(a, t, ev)))
        return rc;
    if (ev->kind == FMT_EV_PROCESS_EXIT && (rc = rec_agg_image_exit(a, ev->image)))
        return rc;
    return keep_gev(a, ev);
}
