/* SPDX-License-Identifier: MIT */
/* The aggregator's cut (rec_agg_internal.h): the pending blocks still live
 * become kept, the transient bytes live at the interval's moments of
 * highest heap are worked out per image and stack, and the interval is
 * written in arrival order, which is time order: the buffered events, the
 * kept blocks' allocations at their own places, each moment's transient
 * group (and its end) right after the event that made it; then the batch
 * rows at the cut's time. The next interval starts empty. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/rec_agg_internal.h"
#include "util/util_array.h"

/* The transient bytes of one site at one moment. */
struct cut_ent {
    uint32_t image, stack;
    uint64_t bytes, blocks;
};

/* A moment of highest heap with transient bytes live: its group is
 * ents[first .. first + n), written right after the event of arrival
 * number seq. own: the moment of that image alone. */
struct cut_moment {
    uint64_t seq, ts;
    size_t first, n;
    int own;
};

struct cut {
    struct cut_ent *ents;
    size_t nr_ents, cap_ents;
    struct cut_moment *moments;
    size_t nr_moments, cap_moments;
};

static int by_site(const void *x, const void *y)
{
    const struct cut_ent *a = x, *b = y;

    if (a->image != b->image)
        return a->image < b->image ? -1 : 1;
    return a->stack < b->stack ? -1 : a->stack > b->stack;
}

static int by_moment(const void *x, const void *y)
{
    const struct cut_moment *a = x, *b = y;

    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int by_row(const void *x, const void *y)
{
    const struct rec_agg_row *a = x, *b = y;

    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->stack != b->stack)
        return a->stack < b->stack ? -1 : 1;
    return a->cls < b->cls ? -1 : a->cls > b->cls;
}

/* Has the image a moment of its own in this interval (not the one of all
 * images, whose group holds its bytes already)? */
static int own_moment(const struct rec_agg *a, const struct rec_agg_image *im)
{
    return im->iv == a->iv && im->max_seq && im->max_seq != a->max_seq;
}

/* The kept blocks of the interval live at a moment are in the events it
 * writes: take them away from their sites' bytes then. */
static void cut_subtract(struct rec_agg *a)
{
    for (uint32_t i = 0; i < a->nr_pend; i++) {
        if (!a->pend[i])
            continue;
        const struct rec_agg_blk *b = &a->blks[a->pend[i]];
        struct rec_agg_site *s = &a->sites[b->site];
        const struct rec_agg_image *im = &a->images[b->image];

        if (a->max_seq && b->seq <= a->max_seq) {
            s->sub_bytes[0] += b->size;
            s->sub_blocks[0]++;
        }
        if (own_moment(a, im) && b->seq <= im->max_seq) {
            s->sub_bytes[1] += b->size;
            s->sub_blocks[1]++;
        }
    }
}

/* Site s's transient bytes at moment w (0 all images', 1 its image's),
 * its pending bytes then less the kept ones, into c; 0 or -ENOMEM. */
static int cut_site_at(struct cut *c, const struct rec_agg_site *s, int w, uint64_t epoch)
{
    uint64_t bytes = s->snap_epoch[w] == epoch ? s->snap_bytes[w] : s->bytes;
    uint64_t blocks = s->snap_epoch[w] == epoch ? s->snap_blocks[w] : s->blocks;

    if (blocks == s->sub_blocks[w])
        return 0;
    if (UTIL_ARRAY_RESERVE(c->ents, c->cap_ents, c->nr_ents + 1, 64))
        return -ENOMEM;
    c->ents[c->nr_ents++] =
        (struct cut_ent){s->image, s->stack, bytes - s->sub_bytes[w], blocks - s->sub_blocks[w]};
    return 0;
}

static int cut_add_moment(struct cut *c, uint64_t seq, uint64_t ts, size_t first, int own)
{
    if (UTIL_ARRAY_RESERVE(c->moments, c->cap_moments, c->nr_moments + 1, 8))
        return -ENOMEM;
    c->moments[c->nr_moments++] = (struct cut_moment){seq, ts, first, c->nr_ents - first, own};
    return 0;
}

/* The interval's moments and their groups, ordered by where they go. */
static int cut_moments(struct rec_agg *a, struct cut *c)
{
    size_t own_from;
    int rc = 0;

    cut_subtract(a);
    for (uint32_t i = 0; i < a->nr_sites && a->max_seq && !rc; i++)
        rc = cut_site_at(c, &a->sites[i], 0, a->epoch);
    if (rc)
        return rc;
    if (c->nr_ents) {
        qsort(c->ents, c->nr_ents, sizeof(*c->ents), by_site);
        if ((rc = cut_add_moment(c, a->max_seq, a->max_ts, 0, 0)))
            return rc;
    }
    own_from = c->nr_ents;
    for (uint32_t i = 0; i < a->nr_sites && !rc; i++) {
        const struct rec_agg_image *im = &a->images[a->sites[i].image];

        if (own_moment(a, im))
            rc = cut_site_at(c, &a->sites[i], 1, im->epoch);
    }
    if (rc || c->nr_ents == own_from)
        return rc;
    qsort(c->ents + own_from, c->nr_ents - own_from, sizeof(*c->ents), by_site);
    /* One moment per image: its entries are together after the sort. */
    size_t end = c->nr_ents;
    for (size_t i = own_from; i < end && !rc;) {
        const struct rec_agg_image *im = &a->images[c->ents[i].image];
        size_t j = i;

        while (j < end && c->ents[j].image == c->ents[i].image)
            j++;
        c->nr_ents = j; /* cut_add_moment counts up to here */
        rc = cut_add_moment(c, im->max_seq, im->max_ts, i, 1);
        i = j;
    }
    c->nr_ents = end;
    if (c->nr_moments)
        qsort(c->moments, c->nr_moments, sizeof(*c->moments), by_moment);
    return rc;
}

/* Before the first event written: the FMT_EV_AGGREGATE event, at time 0,
 * in the context of that event. */
static int cut_start(struct rec_agg *a, const struct fmt_writer_who *who)
{
    struct fmt_event ev = {.kind = FMT_EV_AGGREGATE,
                           .image = who->image,
                           .thread = who->thread,
                           .pid = who->pid,
                           .tid = who->tid,
                           .arg = {a->period, 0}};

    if (a->started)
        return 0;
    a->started = 1;
    return fmt_writer_event(a->w, &ev);
}

static int write_hev(struct rec_agg *a, const struct rec_agg_hev *h)
{
    const struct fmt_writer_who *who = &a->threads[h->thread].who;
    int rc = cut_start(a, who);

    if (rc)
        return rc;
    if (h->kind == FMT_EV_REALLOC)
        return fmt_writer_realloc(a->w, who, h->flags, h->ts, h->old_addr, h->addr, h->size,
                                  h->stack);
    return fmt_writer_heap(a->w, who, h->kind, h->ts, h->addr, h->size, h->stack);
}

static int write_gev(struct rec_agg *a, const struct rec_agg_gev *g)
{
    struct fmt_writer_who who = {g->ev.image, g->ev.thread, g->ev.pid, g->ev.tid};
    int rc = cut_start(a, &who);

    return rc ?: fmt_writer_event(a->w, &g->ev);
}

/* A pending block live at the cut: kept, its allocation written as it was
 * made (a realloc's new block as an allocation: old_addr 0). */
static int write_kept(struct rec_agg *a, uint32_t k)
{
    struct rec_agg_blk *b = &a->blks[k];
    const struct fmt_writer_who *who = &a->threads[b->thread].who;
    unsigned kind = b->kind & ~REC_AGG_ORPHAN;
    int rc = cut_start(a, who);

    if (rc)
        return rc;
    if (!b->ext && kind == FMT_EV_MALLOC) {
        rc = fmt_writer_heap(a->w, who, kind, b->ts, b->addr, b->size, b->stack);
    } else if (!b->ext && kind == FMT_EV_REALLOC) {
        rc = fmt_writer_realloc(a->w, who, 0, b->ts, 0, b->addr, b->size, b->stack);
    } else {
        struct fmt_event ev;

        rec_agg_block_event(a, k, &ev);
        rc = fmt_writer_event(a->w, &ev);
    }
    a->st.nr_kept++;
    b->pend = 0;
    /* --keep-last carries the block into each new segment as it was made */
    if (b->ext && !a->keep_fields) {
        rec_agg_ext_free(a, b->ext);
        b->ext = 0;
    }
    if (b->kind & REC_AGG_ORPHAN) /* in no index: nothing will end it */
        return rc ?: rec_agg_orphan_kept(a, k);
    return rc;
}

/* A moment's group, then the same taking the bytes away again. */
static int write_moment(struct rec_agg *a, const struct cut *c, const struct cut_moment *m)
{
    int rc = 0;

    for (int end = 0; end < 2; end++)
        for (size_t i = m->first; i < m->first + m->n && !rc; i++) {
            const struct cut_ent *e = &c->ents[i];
            const struct fmt_writer_who *who = &a->images[e->image].who;
            struct fmt_event ev = {.ts_ns = m->ts,
                                   .kind = FMT_EV_HEAP_TRANSIENT,
                                   .flags = end ? FMT_EVF_TRANSIENT_END : 0,
                                   .image = e->image,
                                   .thread = who->thread,
                                   .pid = who->pid,
                                   .tid = who->tid,
                                   .stack = e->stack,
                                   .size = e->bytes,
                                   .arg = {e->blocks, (uint64_t)m->own}};

            rc = cut_start(a, who) ?: fmt_writer_event(a->w, &ev);
        }
    a->st.nr_moments++;
    return rc;
}

/* The interval's events, kept blocks and moments by arrival number: an
 * event's own parts (the free an unknown realloc's old address takes)
 * before the block it starts, a moment after the event that made it. */
static int cut_write(struct rec_agg *a, const struct cut *c)
{
    size_t ih = 0, ig = 0, ip = 0, im = 0;
    int rc = 0;

    while (!rc) {
        while (ip < a->nr_pend && !a->pend[ip])
            ip++;
        uint64_t sh = ih < a->nr_hev ? a->hev[ih].seq : UINT64_MAX;
        uint64_t sg = ig < a->nr_gev ? a->gev[ig].seq : UINT64_MAX;
        uint64_t sp = ip < a->nr_pend ? a->blks[a->pend[ip]].seq : UINT64_MAX;
        uint64_t next = sh < sg ? sh : sg;

        next = sp < next ? sp : next;
        if (im < c->nr_moments && c->moments[im].seq < next)
            rc = write_moment(a, c, &c->moments[im++]);
        else if (next == UINT64_MAX)
            break;
        else if (sh == next)
            rc = write_hev(a, &a->hev[ih++]);
        else if (sg == next)
            rc = write_gev(a, &a->gev[ig++]);
        else
            rc = write_kept(a, a->pend[ip++]);
    }
    return rc;
}

/* The batch rows at the cut's time, by thread, stack and class. */
static int cut_rows(struct rec_agg *a, uint64_t at)
{
    int rc = 0;

    if (a->nr_rows)
        qsort(a->rows, a->nr_rows, sizeof(*a->rows), by_row);
    for (uint32_t i = 0; i < a->nr_rows && !rc; i++) {
        const struct rec_agg_row *r = &a->rows[i];
        const struct fmt_writer_who *who = &a->threads[r->thread].who;
        struct fmt_event ev = {.ts_ns = at,
                               .kind = FMT_EV_HEAP_BATCH,
                               .image = who->image,
                               .thread = who->thread,
                               .pid = who->pid,
                               .tid = who->tid,
                               .stack = r->stack,
                               .size = r->bytes,
                               .arg = {r->blocks, r->temp, r->temp_bytes, r->cls}};

        rc = cut_start(a, who) ?: fmt_writer_event(a->w, &ev);
    }
    a->st.nr_rows += a->nr_rows;
    return rc;
}

/* The next interval: empty, its highest the heap now. */
void rec_agg_cut_reset(struct rec_agg *a, uint64_t at)
{
    a->nr_pend = a->nr_pend_dead = 0;
    a->nr_hev = a->nr_gev = 0;
    if (a->arena) { /* the newest chunk stays for the next interval */
        for (struct rec_agg_arena *p = a->arena->next, *n; p; p = n) {
            n = p->next;
            free(p);
        }
        a->arena->next = NULL;
        a->arena->used = 0;
    }
    rec_agg_ix_reset(a);
    a->max = a->heap;
    a->max_seq = 0;
    a->iv++; /* each image's highest begins again at its next change */
    a->last_cut = at;
    a->next_cut = at - at % a->period + a->period;
}

int rec_agg_cut(struct rec_agg *a, uint64_t at)
{
    struct cut c = {0};
    int busy = a->nr_hev || a->nr_gev || a->nr_rows || a->nr_pend > a->nr_pend_dead;
    int rc = 0;

    if (a->exact)
        return rec_agg_switch_cut(a, at);
    if (busy) {
        rc = cut_moments(a, &c);
        rc = rc ?: cut_write(a, &c);
        rc = rc ?: cut_rows(a, at);
        a->st.nr_cuts++;
    }
    free(c.ents);
    free(c.moments);
    rec_agg_cut_reset(a, at);
    return rc;
}
