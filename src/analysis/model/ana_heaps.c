/* SPDX-License-Identifier: MIT */
/* The heaps of a trace and their numbers (see ana_heaps.h). */
#include "analysis/model/ana_heaps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/ana_heap_replay.h"
#include "analysis/model/ana_step.h"

void ana_heaps_init(struct ana_heaps *h, const struct fmt_reader *r)
{
    memset(h, 0, sizeof(*h));
    h->pe = r && fmt_reader_pe(r);
    ana_map_init(&h->ids, sizeof(uint32_t));
}

void ana_heaps_release(struct ana_heaps *h)
{
    ana_map_release(&h->ids);
    free(h->v);
    h->v = NULL;
}

/* The map's key of a handle: never 0 (a handle of all ones shares key 1
 * with handle 0; the chain tells them apart). */
static uint64_t handle_key(uint64_t handle)
{
    return handle + 1 ? handle + 1 : 1;
}

struct ana_heap *ana_heaps_get(struct ana_heaps *h, uint32_t image, uint64_t handle, uint32_t *id)
{
    int created;
    uint32_t *first = ana_map_put(&h->ids, handle_key(handle), &created);

    if (!first)
        return NULL;
    uint32_t *link = first;
    for (uint32_t i = *first; i; i = h->v[i - 1].next_) {
        struct ana_heap *hp = &h->v[i - 1];
        if (hp->image == image && hp->handle == handle) {
            *id = i - 1;
            return hp;
        }
        link = &hp->next_;
    }
    if (h->nr == h->cap) {
        uint32_t cap = h->cap ? h->cap * 2 : 16;
        /* link may point into v: keep its offset across the move. */
        ptrdiff_t at = link == first ? -1 : (const char *)link - (const char *)h->v;
        struct ana_heap *v = realloc(h->v, cap * sizeof(*v));
        if (!v)
            return NULL;
        h->v = v;
        h->cap = cap;
        if (at >= 0)
            link = (uint32_t *)(void *)((char *)h->v + at);
    }
    struct ana_heap *hp = &h->v[h->nr];
    memset(hp, 0, sizeof(*hp));
    hp->image = image;
    hp->handle = handle;
    *id = h->nr++;
    *link = h->nr;
    return hp;
}

struct ana_heap *ana_heaps_of(struct ana_heaps *h, const struct fmt_event *ev, uint32_t *id)
{
    return ana_heaps_get(h, ev->image, fmt_event_heap(ev, h->pe), id);
}

/* An aggregated trace's rows (ana_step.h), in malloc's heap of their
 * image: a batch row or a transient group does not say which heap its
 * blocks were of (a pool's are counted with malloc's: docs/aggregate.md).
 * A batch row's blocks are allocations and frees; a transient group moves
 * the heap in use (and its peak). */
static int aggregate_row(struct ana_heaps *h, const struct fmt_event *ev, const struct ana_step *st)
{
    uint32_t id;
    struct ana_heap *hp = ana_heaps_get(h, ev->image, 0, &id);

    if (!hp)
        return -ENOMEM;
    if (st->batch) {
        hp->nr_allocs += ev->arg[0];
        hp->alloc_bytes += ev->size;
        hp->nr_frees += ev->arg[0];
        hp->freed_bytes += ev->size;
        hp->nr_temporary += ev->arg[1];
        hp->temporary_bytes += ev->arg[2];
        return 0;
    }
    if (st->transient < 0) {
        hp->live -= ev->size;
        hp->live_blocks -= ev->arg[0];
        return 0;
    }
    hp->live += ev->size;
    hp->live_blocks += ev->arg[0];
    if (hp->live > hp->peak || (hp->live == hp->peak && hp->peak_ns == ev->ts_ns)) {
        hp->peak = hp->live;
        hp->peak_blocks = hp->live_blocks;
        hp->peak_ns = ev->ts_ns;
    }
    return 0;
}

static int on_step(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    struct ana_heap *hp;
    uint32_t id;

    if (!st->ends && !st->starts)
        return st->batch || st->transient ? aggregate_row(arg, ev, st) : 0;
    if (!(hp = ana_heaps_of(arg, ev, &id)))
        return -ENOMEM;
    if (st->ends) {
        hp->nr_frees++;
        hp->freed_bytes += ev->ref_size;
        hp->nr_destroyed += (ev->flags & FMT_EVF_HEAP_DESTROYED) != 0;
        if (st->temporary == ANA_TEMP_YES) {
            hp->nr_temporary++;
            hp->temporary_bytes += ev->ref_size;
        }
        hp->live -= ev->ref_size;
        hp->live_blocks--;
    }
    if (st->starts) {
        hp->nr_allocs++;
        hp->alloc_bytes += ev->size;
        hp->live += ev->size;
        hp->live_blocks++;
        if (hp->live > hp->peak) {
            hp->peak = hp->live;
            hp->peak_blocks = hp->live_blocks;
            hp->peak_ns = ev->ts_ns;
        }
    }
    return 0;
}

int ana_heaps_subscribe(struct ana_heaps *h, struct ana_heap_replay *p, struct fmt_reader *r)
{
    static const struct ana_heap_replay_ops ops = {.step = on_step};
    uint32_t id;

    /* malloc's heap of each image first, then the pools as defined. */
    for (uint32_t i = 0; i < fmt_reader_nr_images(r); i++)
        if (!ana_heaps_get(h, i, 0, &id))
            return -ENOMEM;
    for (uint32_t i = 0; i < fmt_reader_nr_pools(r); i++) {
        const struct fmt_pool_info *pl = fmt_reader_pool(r, i);
        if (!ana_heaps_get(h, pl->image, pl->handle, &id))
            return -ENOMEM;
    }
    return ana_heap_replay_subscribe(p, &ops, h, 0);
}

int ana_heaps_compute(struct ana_heaps *h, struct fmt_reader *r, struct ana_filter *f,
                      uint64_t until_ns, ana_progress_fn *progress, void *progress_arg)
{
    struct ana_heap_replay p;
    struct ana_scan_options so;
    int rc;

    ana_heap_replay_init(&p, &(struct ana_step_options){.filter = f});
    ana_scan_options_init(&so);
    so.until_ns = until_ns;
    so.progress = progress;
    so.progress_arg = progress_arg;
    if (!(rc = ana_heaps_subscribe(h, &p, r)))
        rc = ana_heap_replay_run(&p, r, &so);
    ana_heap_replay_release(&p);
    return rc;
}

static int on_alloc(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    struct ana_heaps_by_stack *b = arg;
    uint32_t id;

    if (!ev->serial || !fmt_kind_is_heap_alloc(ev->kind) || ev->stack > b->nr_stacks)
        return 0;
    if (!ana_heaps_of(b->h, ev, &id))
        return -ENOMEM;
    uint32_t *v = &b->of[ev->stack];
    *v = !*v || *v == id + 1 ? id + 1 : ANA_HEAPS_MIXED;
    return 0;
}

int ana_heaps_by_stack_subscribe(struct ana_heaps_by_stack *b, struct ana_heap_replay *p,
                                 struct ana_heaps *h, uint32_t nr_stacks)
{
    static const struct ana_heap_replay_ops ops = {.step = on_alloc};

    *b = (struct ana_heaps_by_stack){.h = h, .nr_stacks = nr_stacks};
    if (!(b->of = calloc((size_t)nr_stacks + 1, sizeof(*b->of))))
        return -ENOMEM;
    return ana_heap_replay_subscribe(p, &ops, b, 0);
}

bool ana_heaps_present(const struct fmt_reader *r)
{
    return fmt_reader_nr_pools(r) > 0;
}

const char *ana_heap_name(const struct fmt_reader *r, uint32_t image, uint64_t handle, char *buf,
                          size_t size)
{
    const struct fmt_pool_info *p;

    if (fmt_reader_pe(r))
        snprintf(buf, size, "0x%" PRIx64, handle);
    else if (!handle)
        snprintf(buf, size, "malloc");
    else if ((p = fmt_reader_find_pool(r, image, handle)) && p->name_len)
        snprintf(buf, size, "%s", p->name);
    else
        snprintf(buf, size, "pool 0x%" PRIx64, handle);
    return buf;
}
