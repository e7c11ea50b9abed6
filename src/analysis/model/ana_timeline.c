/* SPDX-License-Identifier: MIT */
/* Timelines of heap, cumulative allocation, live blocks, RSS, committed
 * and reserved memory: rows read off the heap model and the address-space
 * model at the moments of the heap replay that feeds both. */
#include "analysis/model/ana_timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_aggregate.h"
#include "analysis/model/ana_heap_replay.h"
#include "analysis/model/ana_model.h"
#include "analysis/vm/ana_vm_replay.h"
#include "util/util_array.h"

/* Append the rows of time t_ns, one per image alive then. prior: rows of
 * the same time this replaces (their heap_max still counts), nr_prior of
 * them. */
static int emit_rows(struct ana_timeline *tl, uint64_t t_ns, const struct ana_timeline_row *prior,
                     size_t nr_prior)
{
    for (uint32_t i = 0; i < ana_model_nr_images(tl->m_); i++) {
        const struct ana_scope *s = ana_model_image(tl->m_, i);
        const struct ana_vm_image *vi = ana_vm_get(&tl->vm_->vm, i);
        /* A process that has ended has no more rows: its heap is not in
         * use any more (what it left stays its leaks). */
        if (!s->seen || (s->ended && s->end_ns < t_ns))
            continue;
        if (tl->nr_rows >= ANA_TIMELINE_MAX_ROWS) {
            tl->nr_rows_needed = tl->nr_rows + 1; /* at least: a start time lied */
            return -EOVERFLOW;
        }
        if (UTIL_ARRAY_RESERVE(tl->rows, tl->cap_rows, tl->nr_rows + 1, 256))
            return -ENOMEM;
        struct ana_timeline_row *row = &tl->rows[tl->nr_rows++];
        row->t_ns = t_ns;
        row->image = i;
        row->pid = s->pid;
        row->heap = s->heap;
        row->heap_max = s->max_since_mark;
        row->allocated_bytes = s->alloc_bytes;
        row->nr_allocs = s->nr_allocs;
        row->live_blocks = s->live_blocks;
        row->nr_temporary = s->nr_temporary;
        row->rss = s->rss;
        row->has_rss = s->has_rss;
        row->has_exact = s->has_exact;
        row->exact_usable = s->exact[FMT_CTR_HEAP_USABLE];
        row->exact_allocs = s->exact[FMT_CTR_ALLOCS];
        row->exact_temporary = s->exact[FMT_CTR_TEMPORARY];
        row->committed = vi ? vi->committed : 0;
        row->reserved = vi ? vi->reserved : 0;
        for (size_t k = 0; k < nr_prior; k++)
            if (prior[k].image == i && prior[k].heap_max > row->heap_max)
                row->heap_max = prior[k].heap_max;
    }
    ana_model_mark(tl->m_);
    return 0;
}

/* An interval's end: the rows of the state before the first event at or
 * after it. */
static int on_moment(void *arg, uint64_t t_ns)
{
    struct ana_timeline *tl = arg;

    /* A range's first row: the state at its start, not the maximum since
     * the trace's. */
    if (tl->first_)
        ana_model_mark(tl->m_);
    tl->first_ = false;
    return emit_rows(arg, t_ns, NULL, 0);
}

/* The last row: the state after the last event. When the trace ends on an
 * interval's boundary, the rows of that time (the state before its events)
 * are replaced: one row per image and time, or every sum over images at a
 * time (the plots) counts that time twice. */
static int on_finish(void *arg)
{
    struct ana_timeline *tl = arg;
    uint64_t t_ns = ana_timeline_end(tl);
    size_t keep = tl->nr_rows, nr_prior;
    struct ana_timeline_row *prior;
    int rc;

    tl->vm_precise = tl->vm_->precise;
    /* A range that ends before the trace: its last row was its end's. */
    if (t_ns == UINT64_MAX)
        return 0;
    if (tl->first_) /* the range starts after every event: one row, the end */
        ana_model_mark(tl->m_);
    while (keep && tl->rows[keep - 1].t_ns == t_ns)
        keep--;
    nr_prior = tl->nr_rows - keep;
    if (!nr_prior)
        return emit_rows(tl, t_ns, NULL, 0);
    prior = malloc(nr_prior * sizeof(*prior));
    if (!prior)
        return -ENOMEM;
    memcpy(prior, &tl->rows[keep], nr_prior * sizeof(*prior));
    tl->nr_rows = keep;
    rc = emit_rows(tl, t_ns, prior, nr_prior);
    free(prior);
    return rc;
}

int ana_timeline_subscribe(struct ana_timeline *tl, struct ana_heap_replay *p, struct fmt_reader *r,
                           uint64_t interval_ns, struct ana_model *m,
                           const struct ana_vm_replay *vm)
{
    struct ana_timeline_range whole = {interval_ns, 0, UINT64_MAX};

    return ana_timeline_subscribe_range(tl, p, r, &whole, m, vm);
}

uint64_t ana_timeline_default_interval(uint64_t span_ns)
{
    return span_ns / 100 ? span_ns / 100 : 1;
}

/* The interval: the one asked, or about 100 rows over span; in an
 * aggregated trace a multiple of its period. */
static uint64_t pick_interval(struct ana_timeline *tl, uint64_t asked, uint64_t span)
{
    uint64_t iv = asked ? asked : ana_timeline_default_interval(span);

    if (tl->aggregate_ns && iv % tl->aggregate_ns) {
        uint64_t k = iv / tl->aggregate_ns + 1;
        iv = k <= UINT64_MAX / tl->aggregate_ns ? k * tl->aggregate_ns : UINT64_MAX;
    }
    return iv;
}

int ana_timeline_subscribe_range(struct ana_timeline *tl, struct ana_heap_replay *p,
                                 struct fmt_reader *r, const struct ana_timeline_range *range,
                                 struct ana_model *m, const struct ana_vm_replay *vm)
{
    static const struct ana_heap_replay_ops ops = {.moment = on_moment, .finish = on_finish};
    bool whole = range->from_ns == 0 && range->to_ns == UINT64_MAX;
    struct fmt_trace_counts c;
    uint64_t end, from, to, interval_ns;

    memset(tl, 0, sizeof(*tl));
    fmt_reader_counts(r, &c);
    end = c.last_ts_ns;
    tl->asked_ns = range->interval_ns;
    /* An aggregated trace's heap is known at its cuts, with the rows of
     * the interval they end (docs/aggregate.md): rows at cuts, every few
     * of them, each after the rows at its time. */
    tl->aggregate_ns = fmt_reader_info(r)->aggregate_ns;
    from = whole ? 0 : ana_aggregate_cut(fmt_reader_info(r), end, range->from_ns, false);
    to = whole || range->to_ns >= end
             ? end
             : ana_aggregate_cut(fmt_reader_info(r), end, range->to_ns, true);
    if (from > end)
        return -ERANGE;
    interval_ns = pick_interval(tl, range->interval_ns, to > from ? to - from : 0);
    if ((to - from) / interval_ns > ANA_TIMELINE_MAX_ROWS)
        return -E2BIG;
    tl->interval_ns = interval_ns;
    tl->from_ns = whole ? 0 : from;
    tl->to_ns = whole ? UINT64_MAX : to;
    tl->first_ = !whole;
    /* A row per interval and process image from the image's start (the
     * last row included): with ~100,000 images even the default
     * interval's 101 rows each are too many. Counted before any row is
     * kept, and not blamed on the interval: the rows the file's images
     * justify, or an error. */
    tl->nr_intervals = (to - from) / interval_ns + 1 + !whole;
    for (uint32_t i = 0; i < fmt_reader_nr_images(r); i++) {
        const struct fmt_image_info *ii = fmt_reader_image(r, i);
        uint64_t start = ii && ii->has_start && ii->start_ns > from ? ii->start_ns - from : 0;
        uint64_t skip = start / interval_ns;

        if (!ii || !ana_filter_image(p->opt.filter, i, ii->pid))
            continue;
        tl->nr_images++;
        tl->nr_rows_needed += skip < tl->nr_intervals ? tl->nr_intervals - skip : 1;
    }
    if (tl->nr_rows_needed > ANA_TIMELINE_MAX_ROWS)
        return -EOVERFLOW;
    tl->m_ = m;
    tl->vm_ = vm;
    tl->end_ns_ = end;
    /* The whole trace: every multiple of the interval. A range: its start,
     * and its end if the trace goes on past it (else the trace's end is
     * finish's row). */
    tl->first_moment_ = whole ? interval_ns : from;
    tl->last_moment_ = whole ? UINT64_MAX : to < end ? to : UINT64_MAX - 1;
    return ana_timeline_follow(tl, p, &ops, tl);
}

int ana_timeline_follow(const struct ana_timeline *tl, struct ana_heap_replay *p,
                        const struct ana_heap_replay_ops *ops, void *arg)
{
    return ana_heap_replay_subscribe_range(p, ops, arg, tl->interval_ns, tl->first_moment_,
                                           tl->last_moment_, tl->aggregate_ns != 0);
}

static int compute(struct ana_timeline *tl, struct fmt_reader *r, struct ana_filter *f,
                   const struct ana_timeline_range *range, ana_progress_fn *progress,
                   void *progress_arg, struct ana_model **model, ana_timeline_more_fn *more,
                   void *more_arg);

int ana_timeline_compute(struct ana_timeline *tl, struct fmt_reader *r, struct ana_filter *f,
                         uint64_t interval_ns, ana_progress_fn *progress, void *progress_arg)
{
    return ana_timeline_compute_model(tl, r, f, interval_ns, progress, progress_arg, NULL);
}

int ana_timeline_compute_model(struct ana_timeline *tl, struct fmt_reader *r, struct ana_filter *f,
                               uint64_t interval_ns, ana_progress_fn *progress, void *progress_arg,
                               struct ana_model **model)
{
    struct ana_timeline_range whole = {interval_ns, 0, UINT64_MAX};

    return compute(tl, r, f, &whole, progress, progress_arg, model, NULL, NULL);
}

int ana_timeline_compute_range(struct ana_timeline *tl, struct fmt_reader *r, struct ana_filter *f,
                               const struct ana_timeline_range *range, ana_progress_fn *progress,
                               void *progress_arg, ana_timeline_more_fn *more, void *more_arg)
{
    return compute(tl, r, f, range, progress, progress_arg, NULL, more, more_arg);
}

/* The model's sites, of no use to the timeline's rows, go at each
 * image's end (ana_model_options.retire): a build's replay keeps the
 * running processes' only. */
static int drop_sites(void *arg, const struct ana_model *m, uint32_t image)
{
    (void)arg;
    (void)m;
    (void)image;
    return 0;
}

static int compute(struct ana_timeline *tl, struct fmt_reader *r, struct ana_filter *f,
                   const struct ana_timeline_range *range, ana_progress_fn *progress,
                   void *progress_arg, struct ana_model **model, ana_timeline_more_fn *more,
                   void *more_arg)
{
    /* Sites are read only by a caller following some. */
    struct ana_model_options mo = {.filter = f, .retire = {more ? NULL : drop_sites, NULL}};
    struct ana_step_options step = ana_model_step_options(&mo);
    struct ana_vm_replay vm = {.until = UINT64_MAX};
    struct ana_heap_replay p;
    struct ana_scan_options so;
    struct ana_model *m;
    int rc;

    memset(tl, 0, sizeof(*tl));
    if ((rc = ana_model_create(&m, &mo)))
        return rc;
    ana_heap_replay_init(&p, &step);
    /* Every process's mappings: rows are the model's selected images. */
    ana_vm_replay_init(&vm, NULL, NULL);
    ana_scan_options_init(&so);
    so.progress = progress;
    so.progress_arg = progress_arg;
    if (!(rc = ana_model_subscribe(m, &p)) && !(rc = ana_heap_replay_add_vm(&p, &vm)) &&
        !(rc = ana_timeline_subscribe_range(tl, &p, r, range, m, &vm)) &&
        !(rc = more ? more(more_arg, &p, m, tl) : 0))
        rc = ana_heap_replay_run(&p, r, &so);
    ana_heap_replay_release(&p);
    ana_vm_replay_release(&vm);
    tl->m_ = NULL;
    tl->vm_ = NULL;
    if (model && !rc)
        *model = m;
    else
        ana_model_destroy(m);
    return rc;
}

uint64_t ana_timeline_end(const struct ana_timeline *tl)
{
    return tl->end_ns_ > tl->to_ns || tl->end_ns_ < tl->from_ns ? UINT64_MAX : tl->end_ns_;
}

void ana_timeline_release(struct ana_timeline *tl)
{
    free(tl->rows);
    memset(tl, 0, sizeof(*tl));
}

bool ana_timeline_committed_flat(const struct ana_timeline *tl, uint32_t image)
{
    bool first = true;
    uint64_t v = 0;

    for (size_t i = 0; i < tl->nr_rows; i++) {
        if (tl->rows[i].image != image)
            continue;
        if (!first && tl->rows[i].committed != v)
            return false;
        v = tl->rows[i].committed;
        first = false;
    }
    return true;
}
