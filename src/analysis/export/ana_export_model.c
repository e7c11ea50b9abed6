/* SPDX-License-Identifier: MIT */
/* The per-stack model the exporters print, taken from ana_model so the
 * numbers are the report's, and the blocks a pass leaves live. Memory
 * grows with stacks and threads (and live blocks for ana_xlive). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/export/ana_export_internal.h"
#include "analysis/model/ana_model.h"

/* What the core does not keep: the ordinal of the heap event that reached
 * the peak (the last one whose step reached a new peak), which the
 * exporters that place the peak in a stream of events need (massif, DHAT,
 * heaptrack), and the times of the first and last selected events. */
static int on_step(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    struct ana_xmodel *m = arg;

    if (!st->selected)
        return 0;
    if (!m->seen_)
        m->first_ts_ns = ev->ts_ns, m->seen_ = true;
    m->end_ts_ns = ev->ts_ns;
    if (st->peak)
        m->peak_step = m->pass_->nr_steps;
    return 0;
}

/* Without the model: its peak and its heap of every image (the blocks
 * processes that ended left too), as the model's total counts them. */
static int on_times_step(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    struct ana_xmodel *m = arg;
    uint64_t add = st->starts || st->transient > 0 ? ev->size : 0;
    uint64_t sub = st->ends ? ev->ref_size : st->transient < 0 ? ev->size : 0;

    if (!st->selected)
        return 0;
    if (st->peak) {
        m->peak_bytes = st->heap;
        m->peak_ts_ns = ev->ts_ns;
    }
    m->live_bytes = (m->live_bytes >= sub ? m->live_bytes - sub : 0) + add;
    return on_step(arg, ev, st);
}

/* The model's numbers, per stack; the model itself goes. */
static int on_finish(void *arg)
{
    struct ana_xmodel *m = arg;
    struct ana_model *am = m->model_;
    const struct ana_scope *all = ana_model_total(am);

    m->peak_bytes = all->peak;
    m->nr_allocs = all->nr_allocs;
    m->alloc_bytes = all->alloc_bytes;
    m->nr_temporary = all->nr_temporary;
    m->live_blocks = all->live_blocks;
    m->live_bytes = all->heap;
    m->peak_blocks = all->peak_blocks;
    m->peak_ts_ns = all->peak_ns;
    for (uint32_t i = 0; i < ana_model_nr_sites(am); i++) {
        const struct ana_site *s = ana_model_site(am, i);
        /* A stack id beyond the trace's table (a corrupt id) counts as no stack. */
        struct ana_xstack *x = &m->stacks[i <= m->nr_stacks ? i : 0];

        if (!s)
            continue; /* no event used this stack id */
        x->nr_allocs += s->nr_allocs;
        x->alloc_bytes += s->alloc_bytes;
        x->nr_temporary += s->nr_temporary;
        x->live_blocks += s->live_blocks > 0 ? (uint64_t)s->live_blocks : 0;
        x->live_bytes += s->live_bytes > 0 ? (uint64_t)s->live_bytes : 0;
        x->peak_bytes += s->peak_all_bytes;
    }
    ana_model_destroy(am);
    m->model_ = NULL;
    return 0;
}

int ana_xmodel_subscribe(struct ana_xmodel *m, struct ana_heap_replay *p, struct fmt_reader *r)
{
    static const struct ana_heap_replay_ops ops = {.step = on_step, .finish = on_finish};
    struct ana_model_options mo = {.filter = p->opt.filter};
    struct fmt_trace_counts c;
    int rc;

    memset(m, 0, sizeof(*m));
    fmt_reader_counts(r, &c);
    m->nr_stacks = c.nr_stacks;
    m->pass_ = p;
    m->stacks = calloc((size_t)m->nr_stacks + 1, sizeof(*m->stacks));
    if (!m->stacks)
        return -ENOMEM;
    if ((rc = ana_model_create(&m->model_, &mo)))
        return rc;
    /* The model first: its finish resolves the peak shares read above. */
    if ((rc = ana_model_subscribe(m->model_, p)))
        return rc;
    return ana_heap_replay_subscribe(p, &ops, m, 0);
}

int ana_xmodel_subscribe_times(struct ana_xmodel *m, struct ana_heap_replay *p)
{
    static const struct ana_heap_replay_ops ops = {.step = on_times_step};

    memset(m, 0, sizeof(*m));
    m->pass_ = p;
    return ana_heap_replay_subscribe(p, &ops, m, 0);
}

int ana_xjob_retiring_model(struct ana_export_job *job, ana_model_retire_fn *retire,
                            struct ana_model **m)
{
    struct ana_model_options mo = {.filter = job->pass[0]->opt.filter,
                                   .retire = {.fn = retire, .arg = job}};
    int rc = ana_model_create(m, &mo);

    return rc ? rc : ana_model_subscribe(*m, job->pass[0]);
}

void ana_xmodel_release(struct ana_xmodel *m)
{
    ana_model_destroy(m->model_);
    free(m->stacks);
    m->model_ = NULL;
    m->stacks = NULL;
}

int ana_xmodel_build(struct fmt_reader *r, const struct ana_export_options *o, struct ana_xmodel *m)
{
    struct ana_heap_replay p;
    struct ana_scan_options so;
    int rc;

    ana_heap_replay_init(&p, &(struct ana_step_options){.filter = o ? o->filter : NULL});
    ana_scan_options_init(&so);
    so.progress = o ? o->progress : NULL;
    so.progress_arg = o ? o->progress_arg : NULL;
    if (!(rc = ana_xmodel_subscribe(m, &p, r)))
        rc = ana_heap_replay_run(&p, r, &so);
    ana_heap_replay_release(&p);
    if (rc)
        ana_xmodel_release(m);
    return rc;
}

/* A live block: what its allocation said. */
struct xlive_block {
    uint64_t addr, size, ts_ns;
    uint32_t stack, thread, image;
    uint32_t kind;
};

void ana_xlive_init(struct ana_xlive *l)
{
    ana_map_init(&l->blocks, sizeof(struct xlive_block));
}

void ana_xlive_release(struct ana_xlive *l)
{
    ana_map_release(&l->blocks);
}

int ana_xlive_step(struct ana_xlive *l, const struct fmt_event *ev, const struct ana_step *st,
                   uint32_t *kind)
{
    *kind = FMT_EV_MALLOC;
    if (st->ends) {
        const struct xlive_block *b = ana_map_get(&l->blocks, ev->ref);
        if (b)
            *kind = b->kind;
        ana_map_del(&l->blocks, ev->ref);
    }
    if (st->starts) {
        struct xlive_block *b = ana_map_put(&l->blocks, ev->serial, NULL);
        if (!b)
            return -ENOMEM;
        *b = (struct xlive_block){ev->addr,   ev->size,  ev->ts_ns, ev->stack,
                                  ev->thread, ev->image, ev->kind};
    }
    return 0;
}

static int by_serial(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

/* fn for each live block of image (UINT32_MAX: every image), in trace
 * order; with take, they leave l after. */
static int each_of(struct ana_xlive *l, uint32_t image, bool take, ana_xlive_fn *fn, void *arg)
{
    uint64_t *serials = malloc((l->blocks.nr ? l->blocks.nr : 1) * sizeof(*serials));
    size_t n = 0;
    int rc = 0;

    if (!serials)
        return -ENOMEM;
    for (size_t i = 0; i < l->blocks.cap; i++)
        if (ana_map_slot_key(&l->blocks, i) &&
            (image == UINT32_MAX ||
             ((const struct xlive_block *)ana_map_slot_val(&l->blocks, i))->image == image))
            serials[n++] = ana_map_slot_key(&l->blocks, i);
    /* Serials count blocks in trace order (docs/format-events.md, "Serials"). */
    qsort(serials, n, sizeof(*serials), by_serial);
    for (size_t i = 0; i < n && !rc; i++) {
        const struct xlive_block *b = ana_map_get(&l->blocks, serials[i]);
        struct fmt_event ev = {
            .serial = serials[i],
            .kind = b->kind,
            .image = b->image,
            .thread = b->thread,
            .addr = b->addr,
            .size = b->size,
            .stack = b->stack,
            .ts_ns = b->ts_ns,
        };
        rc = fn(arg, &ev);
    }
    for (size_t i = 0; take && i < n; i++)
        ana_map_del(&l->blocks, serials[i]);
    free(serials);
    return rc;
}

int ana_xlive_each(const struct ana_xlive *l, ana_xlive_fn *fn, void *arg)
{
    return each_of((struct ana_xlive *)l, UINT32_MAX, false, fn, arg);
}

int ana_xlive_each_of(struct ana_xlive *l, uint32_t image, bool take, ana_xlive_fn *fn, void *arg)
{
    return each_of(l, image, take, fn, arg);
}
