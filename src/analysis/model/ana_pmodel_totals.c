/* SPDX-License-Identifier: MIT */
/* The whole trace's heap model from its chunks' totals (format 1.10,
 * TOTALS; ana_pmodel.h, ana_pmodel_totals_build: the planner's totals
 * route, report --index). Each chunk's totals
 * are what a range of the parallel replay counts of that chunk (its calls,
 * its heap's change and the highest it reached, its RSS, its exit, each
 * stack's allocations and temporaries; its live deltas are its summary's),
 * so each is made into a partial model and merged as ana_pmodel.c merges
 * ranges (ana_pmodel_merge: one place for what a merge means), chunk by
 * chunk into the model so far. What totals do not hold is each stack's
 * bytes at the chunk's own peak, which the merge needs of the chunk where
 * the trace peaks: that chunk alone is replayed, and its stacks' shares
 * are taken from its replay (which must agree with its totals). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/ana_index.h"
#include "analysis/model/ana_model_internal.h"
#include "analysis/model/ana_pmodel_internal.h"
#include "util/util_array.h"

/* The trace's process images. */
static uint32_t nr_images(struct fmt_reader *r)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < fmt_reader_nr_images(r); i++)
        n += fmt_reader_image(r, i) != NULL;
    return n;
}

const char *ana_pmodel_totals_refusal(struct fmt_reader *r, const struct ana_model_options *opt)
{
    const char *no = ana_index_no_totals(r);

    if (no)
        return no;
    /* A chunk's running heap, which an exit lowers by that image's whole
     * heap, is the all-processes part of 1.11's totals. */
    if (nr_images(r) > 1 && !fmt_reader_has_all_totals(r))
        return "a trace of several processes needs the chunks' all-processes totals (format "
               "1.11: memscribe record --totals)";
    if (opt && !ana_filter_is_empty(opt->filter))
        return "a selection (--pid, --exe, --thread) is not in the totals";
    if (opt && opt->programs && nr_images(r) < 2)
        return "one process's per-program view is its own (--by-process)";
    struct ana_model_options o = ana_pmodel_plain_options(opt);
    if (!ana_pmodel_supported(&o))
        return "these options (blocks kept, the loose temporary rule) need every event";
    return ana_index_refusal(r, NULL);
}

/* Chunk k's partial model being made from its totals. */
struct fill {
    struct ana_model *m;
    struct fmt_reader *r;
    bool several;   /* a trace of several processes: a stack's image is its own */
    uint32_t image; /* else the trace's one image */
    int rc;
};

int ana_pmodel_stack_image(struct fmt_reader *r, uint32_t stack, uint32_t *image)
{
    int rc = stack ? fmt_reader_stack_image(r, stack, image) : -ENOTSUP;

    return rc == -EINVAL || (!rc && *image >= fmt_reader_nr_images(r)) ? -EPROTO : rc;
}

/* The image of a stack of the chunk: the trace's one, or the stack's own. */
static int stack_image(struct fill *f, uint32_t stack, uint32_t *image)
{
    *image = f->image;
    return f->several ? ana_pmodel_stack_image(f->r, stack, image) : 0;
}

static int rss_sample(struct ana_model *m, uint64_t ts_ns, uint64_t size, uint32_t image)
{
    if (UTIL_ARRAY_RESERVE(m->rss, m->cap_rss, m->nr_rss + 1, 4))
        return -ENOMEM;
    m->rss[m->nr_rss++] = (struct ana_rss_sample){ts_ns, size, image};
    return 0;
}

static int fill_image(void *arg, const struct fmt_image_totals *t)
{
    struct fill *f = arg;
    struct ana_scope *s = ana_model_image_make(f->m, t->image);

    if (!s)
        return -ENOMEM;
    if (!f->several)
        f->image = t->image;
    s->seen = true;
    s->pid = t->pid;
    s->first_ns = t->first_ns;
    s->last_ns = t->last_ns;
    for (unsigned k = 0; k < FMT_TOTALS_KEYS; k++) {
        struct fmt_event ev = {.kind = k & 63, .flags = fmt_totals_key_flags(k)};
        unsigned slot = ana_call_slot(&ev);
        if (!t->calls[k] || slot >= ANA_NR_CALLS)
            continue;
        s->nr_calls[slot] += t->calls[k];
        s->nr_failed += t->failed[k];
    }
    s->nr_arena_maps = t->arena_maps;
    s->nr_start_maps = t->start_maps;
    s->nr_carried = t->carried;
    s->carried_bytes = t->carried_bytes;
    s->nr_unmatched_frees = t->unmatched;
    s->nr_dropped = t->dropped;
    s->heap = (uint64_t)t->heap; /* deltas, as a partial model's */
    s->live_blocks = (uint64_t)t->blocks;
    s->peak = t->has_peak ? (uint64_t)t->peak : (uint64_t)INT64_MIN;
    s->peak_ns = t->peak_ns;
    s->peak_blocks = (uint64_t)t->peak_blocks;
    s->ended = t->ended;
    s->end_ns = t->end_ns;
    if (t->has_rss && (rss_sample(f->m, t->rss_max_ns, t->rss_max, t->image) ||
                       rss_sample(f->m, t->rss_last_ns, t->rss_last, t->image)))
        return -ENOMEM;
    return 0;
}

static int fill_stack(void *arg, const struct fmt_stack_totals *t)
{
    struct fill *f = arg;
    uint32_t image;
    int rc = stack_image(f, t->stack, &image);
    struct ana_site *site = rc ? NULL : ana_model_site_make(f->m, t->stack, image);

    if (rc || !site)
        return rc ?: -ENOMEM;
    site->nr_allocs = t->allocs;
    site->alloc_bytes = t->alloc_bytes;
    site->nr_temporary = t->temps;
    site->temporary_bytes = t->temp_bytes;
    return 0;
}

static void fill_live(void *arg, uint32_t stack, int64_t bytes, int64_t blocks)
{
    struct fill *f = arg;
    uint32_t image;

    if (f->rc || (f->rc = stack_image(f, stack, &image)))
        return;
    struct ana_site *site = ana_model_site_make(f->m, stack, image);
    if (!site) {
        f->rc = -ENOMEM;
        return;
    }
    site->live_bytes = bytes;
    site->live_blocks = blocks;
}

/* The images' counters their stacks make up. Blocks started are its
 * allocations and the blocks a segment carried in; those not live at the
 * end of the chunk ended. */
static void fill_images(struct ana_model *m)
{
    for (uint32_t k = 0; k < m->nr_sites; k++) {
        const struct ana_site *site = &m->sites[k];
        struct ana_scope *s = ana_model_image_make(m, site->image);
        s->nr_allocs += site->nr_allocs;
        s->alloc_bytes += site->alloc_bytes;
        s->nr_temporary += site->nr_temporary;
        s->temporary_bytes += site->temporary_bytes;
    }
    for (uint32_t i = 0; i < m->nr_images; i++) {
        struct ana_scope *s = &m->images[i];
        s->nr_frees = s->nr_allocs + s->nr_carried - s->live_blocks;
        s->freed_bytes = s->alloc_bytes + s->carried_bytes - s->heap;
    }
}

/* The all-images scope, which has no pid and never ends: one image's own
 * (its running heap its heap), or the sum of several with the running
 * processes' heap and its highest from the all-processes part a. */
static void fill_total(struct ana_model *m, uint32_t image, const struct fmt_all_totals *a)
{
    if (!a) {
        m->total = *ana_model_image_make(m, image);
    } else {
        memset(&m->total, 0, sizeof(m->total));
        for (uint32_t i = 0; i < m->nr_images; i++) {
            const struct ana_scope *s = &m->images[i];
            if (!s->seen)
                continue;
            uint64_t first = m->total.seen ? m->total.first_ns : s->first_ns;
            uint64_t last = m->total.last_ns;
            ana_pmodel_add_counts(&m->total, s);
            m->total.first_ns = s->first_ns < first ? s->first_ns : first;
            m->total.last_ns = s->last_ns > last ? s->last_ns : last;
            m->total.heap += s->heap;
            m->total.live_blocks += s->live_blocks;
        }
        m->total.running_heap = (uint64_t)a->heap; /* deltas, as a partial model's */
        m->total.running_blocks = (uint64_t)a->blocks;
        m->total.peak = a->has_peak ? (uint64_t)a->peak : (uint64_t)INT64_MIN;
        m->total.peak_ns = a->peak_ns;
        m->total.peak_blocks = (uint64_t)a->peak_blocks;
    }
    m->total.image = UINT32_MAX;
    m->total.pid = 0;
    m->total.ended = false;
    m->total.end_ns = 0;
}

/* Chunk k's partial model from its totals and summary. */
static int chunk_model(struct fmt_reader *r, uint32_t k, const struct ana_model_options *opt,
                       bool several, struct ana_model **out)
{
    struct fill f = {.r = r, .several = several};
    struct fmt_all_totals a;
    int rc = ana_model_create_partial(&f.m, opt);

    if (rc)
        return rc;
    f.m->paged_sites = true; /* one chunk's stacks */
    /* images first, then stacks: a stack's site is of the image read */
    rc = fmt_reader_chunk_totals(r, k, fill_image, fill_stack, &f);
    rc = rc ?: fmt_reader_chunk_delta(r, k, fill_live, &f);
    rc = rc ?: f.rc;
    rc = rc ?: (several ? fmt_reader_chunk_all_totals(r, k, &a) : 0);
    if (!rc) {
        fill_images(f.m);
        fill_total(f.m, f.image, several ? &a : NULL);
    }
    if (rc) {
        ana_model_destroy(f.m);
        return rc;
    }
    *out = f.m;
    return 0;
}

/* The chunk where the image's heap first reached its highest: the first
 * whose own highest, from the heap at its start, passes every earlier
 * one and 0 (merge_scope's rule); -1 if none does. */
struct peak_find {
    int64_t heap, best;
    int64_t found;
    uint32_t k;
};

static int peak_image(void *arg, const struct fmt_image_totals *t)
{
    struct peak_find *p = arg;

    if (t->has_peak && p->heap + t->peak > p->best) {
        p->best = p->heap + t->peak;
        p->found = p->k;
    }
    p->heap += t->heap;
    return 0;
}

/* Replay chunk k and give its stacks' bytes at its peak to its partial
 * model s; its peak must be the totals'. */
static int peak_shares(struct fmt_reader *r, const char *path, const struct ana_model_options *opt,
                       uint32_t k, struct ana_model *s, char *err, size_t err_size)
{
    struct range rg = {.path = path,
                       .opt = opt,
                       .first_chunk = k,
                       .end_chunk = k + 1 < fmt_reader_nr_chunks(r) ? k + 1 : 0,
                       .from_ns = fmt_reader_chunk(r, k)->first_ts_ns,
                       .end_ns = UINT64_MAX,
                       .until_ns = UINT64_MAX,
                       .paged_sites = true};
    int rc;

    rg.prog_end_ns = rg.from_ns + 1;
    ana_pmodel_run_range(&rg);
    if ((rc = rg.rc)) {
        if (err && err_size)
            snprintf(err, err_size, "%s", rg.err);
        goto out;
    }
    const struct ana_scope *a = ana_model_total(rg.m), *b = ana_model_total(s);
    if (a->peak != b->peak || a->peak_ns != b->peak_ns || a->heap != b->heap) {
        if (err && err_size)
            snprintf(err, err_size, "%s: chunk %u's totals disagree with its events", path, k);
        rc = -EPROTO;
        goto out;
    }
    for (uint32_t stack = 0; stack < rg.m->nr_used; stack++) {
        const struct ana_site *p = ana_model_site(rg.m, stack);
        if (!p || (!p->peak_bytes && !p->peak_all_bytes))
            continue;
        struct ana_site *q = ana_model_site_make(s, stack, p->image);
        if (!q) {
            rc = -ENOMEM;
            goto out;
        }
        q->peak_bytes = p->peak_bytes;
        q->peak_all_bytes = p->peak_all_bytes;
    }
out:
    ana_model_destroy(rg.m);
    ana_heap_replay_release(&rg.replay);
    return rc;
}

/* The model so far becomes a range to merge the next chunk after: its RSS
 * as samples (its highest, then its latest), as a partial model keeps
 * them. */
static int as_range(struct ana_model *m)
{
    m->nr_rss = 0;
    for (uint32_t i = 0; i < m->nr_images; i++) {
        const struct ana_scope *s = &m->images[i];
        if (s->has_rss && (rss_sample(m, s->rss_peak_ns, s->rss_peak, i) ||
                           rss_sample(m, s->rss_peak_ns, s->rss, i)))
            return -ENOMEM;
    }
    return 0;
}

static int by_end(const void *x, const void *y, void *arg)
{
    const struct ana_model *m = arg;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    uint64_t ea = ana_model_image(m, a)->end_ns, eb = ana_model_image(m, b)->end_ns;

    if (ea != eb)
        return ea < eb ? -1 : 1;
    return (a > b) - (a < b);
}

/* The images of m that ended and were not retired yet (done, by image)
 * retired, in the order they ended, as their exits hand them over in a
 * replay: a fold (the options' retire) gets their sites, with their
 * shares of the peaks (pk, several processes), and the model drops them,
 * so that it holds the running processes' sites, not every process's. */
static int retire_ended(struct ana_model *m, struct ana_pmodel_peaks *pk, bool *done)
{
    uint32_t n = ana_model_nr_images(m), k = 0;
    uint32_t *ended = malloc(((size_t)n + 1) * sizeof(*ended));
    int rc = 0;

    if (!ended)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++)
        if (ana_model_image(m, i)->ended && !done[i])
            ended[k++] = i;
    qsort_r(ended, k, sizeof(*ended), by_end, m);
    for (uint32_t i = 0; i < k && !rc; i++) {
        rc = pk ? ana_pmodel_peaks_give_image(pk, m, ended[i]) : 0;
        rc = rc ?: ana_model_retire_image(m, ended[i]);
        done[ended[i]] = true;
    }
    free(ended);
    return rc;
}

/* Finish the totals' model as a replay finishes its own: the images that
 * ended retired (a fold), the shares of the peaks given to the sites left,
 * those still running retired, the programs' counters summed. */
static int finish(struct ana_model *m, struct ana_pmodel_peaks *pk, bool *done)
{
    int rc = m->opt.retire.fn ? retire_ended(m, pk, done) : 0;

    rc = rc ?: (pk ? ana_pmodel_peaks_give(pk, m) : 0);
    return rc ?: ana_model_finish(m);
}

/* Chunks merged at once into the model so far: each merge copies the
 * model so far, so one a chunk (a python3 trace in chunks of 2,048
 * events: 817 chunks of 43,000 stacks) spent its time making and walking
 * models; 64 at once, 1.0 -> 0.2 s. */
#define BATCH 64
/* ... or fewer, once their models hold this many sites: a build's chunks
 * each touch tens of thousands of stacks, and 64 of their models at once
 * were most of report --index's memory on a 991-process build. */
#define BATCH_SITES (1u << 16)

int ana_pmodel_totals_build(struct ana_model **out, struct fmt_reader *r, const char *path,
                            const struct ana_model_options *opt, unsigned shares,
                            uint64_t max_replayed, char *err, size_t err_size)
{
    uint32_t n = fmt_reader_nr_chunks(r);
    struct peak_find pf = {.found = -1};
    struct range rg[BATCH + 1];
    struct ana_model *acc = NULL;
    struct ana_pmodel_peaks *pk = NULL;
    bool several = nr_images(r) > 1;
    struct ana_model_options co = ana_pmodel_plain_options(opt);
    bool *done = calloc((size_t)fmt_reader_nr_images(r) + 1, sizeof(*done));
    int rc = done ? 0 : -ENOMEM;

    /* one process: its peak's chunk replayed as the merge goes; several:
     * every peak's chunk first (ana_pmodel_peaks_find), so that a fold can
     * take each process's sites, with their shares, once it ended */
    for (pf.k = 0; !several && pf.k < n && !rc; pf.k++)
        rc = fmt_reader_chunk_totals(r, pf.k, peak_image, NULL, &pf);
    if (!rc && several)
        rc = ana_pmodel_peaks_find(&pk, r, path, opt, shares, max_replayed, err, err_size);
    if (!rc && !(rc = ana_model_create(&acc, opt)))
        rc = as_range(acc);
    for (uint32_t k = 0; k < n && !rc;) {
        unsigned nr = 1;
        struct ana_model *next = NULL;
        memset(rg, 0, sizeof(rg));
        rg[0].m = acc;
        for (unsigned i = 0; i <= BATCH; i++)
            rg[i].running_base = several;
        size_t sites = 0;
        for (; nr <= BATCH && k < n && !rc && sites < BATCH_SITES; nr++, k++) {
            rc = chunk_model(r, k, &co, several, &rg[nr].m);
            sites += rc ? 0 : rg[nr].m->nr_sites;
            if (!rc && (int64_t)k == pf.found)
                rc = peak_shares(r, path, &co, k, rg[nr].m, err, err_size);
        }
        rc = rc ?: ana_model_create(&next, opt);
        rc = rc ?: ana_pmodel_merge(next, rg, nr);
        rc = rc ?: as_range(next);
        for (unsigned i = 1; i < nr; i++)
            ana_model_destroy(rg[i].m);
        if (rc) {
            ana_model_destroy(next);
            break;
        }
        ana_model_destroy(acc);
        acc = next;
        /* a fold gets the processes that ended so far */
        rc = opt && opt->retire.fn ? retire_ended(acc, pk, done) : 0;
    }
    rc = rc ?: finish(acc, pk, done);
    ana_pmodel_peaks_free(pk);
    free(done);
    if (rc == -ENOTSUP && err && err_size && !err[0])
        snprintf(err, err_size, "%s", ana_index_stackless);
    if (rc == -EPROTO && err && err_size && !err[0])
        snprintf(err, err_size, "%s", fmt_reader_error(r));
    if (rc) {
        ana_model_destroy(acc);
        return rc;
    }
    acc->nr_rss = 0;
    *out = acc;
    return 0;
}
