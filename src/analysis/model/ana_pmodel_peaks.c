/* SPDX-License-Identifier: MIT */
/* The shares of the peaks of a trace of several processes from its chunk
 * totals (ana_pmodel_internal.h, ana_pmodel_peaks; the totals route of
 * ana_pmodel_totals.c): each site's bytes at the moment the running
 * processes' heap first reached its highest (peak_all_bytes) and at the
 * moment its own process's heap did (peak_bytes). The totals say in which
 * chunk each peak is (format 1.11's all-processes part for the first);
 * each such chunk is replayed once, as one pass over the whole trace would
 * meet it: from the state at its start that the totals and the summaries
 * give (each image's heap, live blocks, highest so far and whether it
 * exited, the running heap and its highest so far, each live stack's bytes
 * and blocks), so that an exit inside the chunk takes that process's
 * whole heap out of the running heap and its sites hold nothing of a later
 * peak. The replay's own peaks must be the totals' (else the totals
 * disagree with the events). The running RSS's highest comes from the
 * all-processes part too. With the per-program view, the programs' peaks
 * are found on the same walk (ana_pmodel_progs.c), with more chunks
 * replayed where the totals only bound them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_map.h"
#include "analysis/model/ana_model_internal.h"
#include "analysis/model/ana_pmodel_internal.h"
#include "util/util_array.h"

/* An image's state at a chunk's start, from the chunks before; and its
 * highest over the whole trace, where and when (pass one). */
struct img {
    struct ana_pmodel_before b; /* heap, live blocks, latest RSS, ended */
    uint64_t peak, peak_ns;     /* its highest so far (0: none above 0) */
    int64_t peak_chunk;         /* -1: none */
    uint64_t top, top_ns;
};

/* A stack's live heap so far (the summaries' deltas). */
struct live {
    int64_t bytes, blocks;
};

struct walk {
    struct fmt_reader *r;
    const char *path;
    const struct ana_model_options *opt;
    unsigned shares;       /* enum ana_shares: the peaks whose chunks are replayed */
    uint64_t max_replayed; /* the most events those chunks may hold */
    struct img *im;
    uint32_t nr_im;
    int64_t run, run_blocks;       /* the running processes' heap and blocks */
    uint64_t peak, peak_ns;        /* their highest so far */
    int64_t peak_chunk;            /* where their highest is (-1: none), */
    uint64_t top, top_ns;          /* which, and when */
    uint64_t rss_top, rss_top_ns;  /* their RSS's highest (the sum of latest samples) */
    uint32_t chunk;                /* the chunk being read */
    struct ana_map live;           /* stack -> struct live */
    struct ana_pmodel_progs progs; /* the per-program view's (none: does nothing) */
    /* the sites' shares found by the replays, by stack: peak_bytes,
     * peak_all_bytes, and (after the walk) of their programs' peaks */
    struct ana_pmodel_stack_share *own, *all, *prog;
    size_t nr_own, cap_own, nr_all, cap_all, nr_prog;
    int rc;
    char *err;
    size_t err_size;
};

/* A chunk's highest, peak from base, first above top (the merge's strict
 * rule, from 0): top and top_ns become it. */
static bool passes(int64_t base, bool has_peak, int64_t peak, uint64_t ns, uint64_t *top,
                   uint64_t *top_ns)
{
    if (!has_peak || base + peak <= 0 || (uint64_t)(base + peak) <= *top)
        return false;
    *top = (uint64_t)(base + peak);
    *top_ns = ns;
    return true;
}

/* An image's state at the next chunk's start. */
static void advance(struct ana_pmodel_before *b, const struct fmt_image_totals *t)
{
    b->heap += t->heap;
    b->blocks += t->blocks;
    b->ended |= t->ended;
    if (t->has_rss)
        b->rss = (int64_t)t->rss_last;
}

/* Pass one: where each image's highest and the running heap's are (and
 * where the programs' may be). */
static int find_image(void *arg, const struct fmt_image_totals *t)
{
    struct walk *w = arg;
    struct img *s = &w->im[t->image];

    ana_pmodel_progs_image(&w->progs, w->chunk, &s->b, t);
    if (passes(s->b.heap, t->has_peak, t->peak, t->peak_ns, &s->top, &s->top_ns))
        s->peak_chunk = w->chunk;
    advance(&s->b, t);
    return 0;
}

static int take_part(void *arg, const struct fmt_prog_totals *t)
{
    struct walk *w = arg;

    return ana_pmodel_progs_part(&w->progs, w->chunk, t);
}

/* Chunk k's images' totals to fn, then its programs' parts (format 1.12)
 * where the programs are followed. */
static int chunk_images(struct walk *w, uint32_t k, fmt_image_totals_fn *fn)
{
    int rc = fmt_reader_chunk_totals(w->r, k, fn, NULL, w);

    if (!rc && w->progs.programs && fmt_reader_has_prog_totals(w->r))
        rc = fmt_reader_chunk_prog_totals(w->r, k, take_part, w);
    return rc;
}

static int find_peaks(struct walk *w)
{
    uint32_t n = fmt_reader_nr_chunks(w->r);
    int rc = 0;

    for (w->chunk = 0; w->chunk < n && !rc; w->chunk++) {
        struct fmt_all_totals a;
        rc = chunk_images(w, w->chunk, find_image);
        rc = rc ?: fmt_reader_chunk_all_totals(w->r, w->chunk, &a);
        rc = rc ?: ana_pmodel_progs_scanned(&w->progs, w->chunk);
        if (rc)
            break;
        if (passes(w->run, a.has_peak, a.peak, a.peak_ns, &w->top, &w->top_ns))
            w->peak_chunk = w->chunk;
        w->run += a.heap;
        passes(0, a.has_rss, (int64_t)a.rss_max, a.rss_max_ns, &w->rss_top, &w->rss_top_ns);
    }
    /* pass two starts again from the trace's start */
    for (uint32_t i = 0; i < w->nr_im; i++)
        w->im[i].b = (struct ana_pmodel_before){0};
    w->run = 0;
    return rc;
}

/* Pass two: the state at each chunk's start. */
static int step_image(void *arg, const struct fmt_image_totals *t)
{
    struct walk *w = arg;
    struct img *s = &w->im[t->image];

    ana_pmodel_progs_image(&w->progs, w->chunk, &s->b, t);
    passes(s->b.heap, t->has_peak, t->peak, t->peak_ns, &s->peak, &s->peak_ns);
    advance(&s->b, t);
    return 0;
}

static void step_live(void *arg, uint32_t stack, int64_t bytes, int64_t blocks)
{
    struct walk *w = arg;
    struct live *l;

    if (w->rc)
        return;
    if (!stack) { /* blocks of no stack: whose process they are is not known */
        w->rc = -ENOTSUP;
        return;
    }
    if (!(l = ana_map_put(&w->live, stack, NULL))) {
        w->rc = -ENOMEM;
        return;
    }
    l->bytes += bytes;
    l->blocks += blocks;
}

/* The replay of chunk k starts from the walk's state: each image's, the
 * running heap's and each live stack's of an image still running. */
static int seed(struct walk *w, struct ana_model *m, struct ana_heap_replay *p)
{
    struct ana_stepper *st = &p->stepper;

    for (uint32_t i = 0; i < w->nr_im; i++) {
        const struct img *s = &w->im[i];
        struct ana_scope *img = ana_model_image_make(m, i);
        struct ana_step_image *si = ana_stepper_grow_images(st, i);
        if (!img || !si)
            return -ENOMEM;
        img->heap = (uint64_t)s->b.heap;
        img->live_blocks = (uint64_t)s->b.blocks;
        img->peak = s->peak;
        img->peak_ns = s->peak_ns;
        img->ended = s->b.ended;
        img->rss = s->b.ended ? 0 : (uint64_t)s->b.rss;
        si->heap = (uint64_t)s->b.heap;
        si->ended = s->b.ended;
        m->total.heap += (uint64_t)s->b.heap;
        m->total.live_blocks += (uint64_t)s->b.blocks;
        m->total.rss += img->rss;
    }
    ana_pmodel_progs_seed(&w->progs, m);
    m->total.running_heap = st->heap = (uint64_t)w->run;
    m->total.running_blocks = (uint64_t)w->run_blocks;
    m->total.peak = st->peak = w->peak;
    m->total.peak_ns = w->peak_ns;
    for (size_t i = 0; i < w->live.cap; i++) {
        uint64_t stack = ana_map_slot_key(&w->live, i);
        const struct live *l = ana_map_slot_val(&w->live, i);
        uint32_t image;
        if (!stack || (!l->bytes && !l->blocks))
            continue;
        int rc = ana_pmodel_stack_image(w->r, (uint32_t)stack, &image);
        if (rc)
            return rc;
        if (w->im[image].b.ended)
            continue;
        struct ana_site *site = ana_model_site_make(m, (uint32_t)stack, image);
        if (!site)
            return -ENOMEM;
        site->live_bytes = l->bytes;
        site->live_blocks = l->blocks;
    }
    return 0;
}

static int keep(struct ana_pmodel_stack_share **v, size_t *nr, size_t *cap, uint32_t stack,
                uint64_t bytes)
{
    if (!bytes)
        return 0;
    if (UTIL_ARRAY_RESERVE(*v, *cap, *nr + 1, 256))
        return -ENOMEM;
    (*v)[(*nr)++] = (struct ana_pmodel_stack_share){stack, bytes};
    return 0;
}

/* The replay's peaks are the totals' (the images' whose highest is in
 * chunk k, and the running heap's), and the shares they give. */
static int take(struct walk *w, const struct ana_model *m, uint32_t k)
{
    int rc = 0;

    for (uint32_t i = 0; i < w->nr_im && !rc; i++)
        if (w->im[i].peak_chunk == (int64_t)k &&
            (m->images[i].peak != w->im[i].top || m->images[i].peak_ns != w->im[i].top_ns))
            rc = -EBADMSG;
    if (!rc && w->peak_chunk == (int64_t)k &&
        (m->total.peak != w->top || m->total.peak_ns != w->top_ns))
        rc = -EBADMSG;
    if (rc) {
        snprintf(w->err, w->err_size, "%s: chunk %u's totals disagree with its events", w->path, k);
        return -EPROTO;
    }
    for (uint32_t id = 0; id < m->nr_used && !rc; id++) {
        const struct ana_site *s = ana_model_site(m, id);
        if (!s || s->image >= w->nr_im)
            continue;
        if (w->im[s->image].peak_chunk == (int64_t)k)
            rc = keep(&w->own, &w->nr_own, &w->cap_own, id, s->peak_bytes);
        if (!rc && w->peak_chunk == (int64_t)k)
            rc = keep(&w->all, &w->nr_all, &w->cap_all, id, s->peak_all_bytes);
    }
    return rc ?: ana_pmodel_progs_take(&w->progs, m, k);
}

/* Replay chunk k from the walk's state. */
static int replay(struct walk *w, uint32_t k)
{
    struct ana_model_options mo = w->opt ? *w->opt : (struct ana_model_options){0};
    struct ana_step_options so;
    struct ana_heap_replay p;
    struct ana_scan_options sc;
    struct ana_model *m = NULL;
    struct fmt_reader *r;
    int rc;

    mo.retire = (struct ana_model_retire){0};
    so = ana_model_step_options(&mo);
    ana_heap_replay_init(&p, &so);
    if ((rc = fmt_reader_open_flags(&r, w->path, FMT_OPEN_STACKS_LATER, w->err, w->err_size))) {
        ana_heap_replay_release(&p);
        return rc;
    }
    ana_scan_options_init(&sc);
    sc.range = true;
    sc.from_chunk = k;
    sc.end_chunk = k + 1 < fmt_reader_nr_chunks(r) ? k + 1 : 0;
    rc = ana_model_create(&m, &mo);
    rc = rc ?: seed(w, m, &p);
    rc = rc ?: ana_model_subscribe(m, &p);
    rc = rc ?: ana_heap_replay_run(&p, r, &sc);
    if (rc == -EPROTO || rc == -EIO)
        snprintf(w->err, w->err_size, "%s", fmt_reader_error(r));
    rc = rc ?: take(w, m, k);
    ana_model_destroy(m);
    ana_heap_replay_release(&p);
    fmt_reader_close(r);
    return rc;
}

/* Whether the chunks to replay hold at most w->max_replayed events; else
 * -ENOTSUP, saying why in w->err: each is replayed from its start one
 * after another, where a replay of the whole trace runs on every CPU (a
 * build's many processes peak in most of its chunks, and where two of one
 * program run side by side the totals only bound that program's peak). */
static int within_budget(struct walk *w, const bool *replay)
{
    uint32_t n = fmt_reader_nr_chunks(w->r), nr = 0;
    uint64_t events = 0, all = 0;

    for (uint32_t k = 0; k < n; k++) {
        uint64_t e = fmt_reader_chunk(w->r, k)->nr_events;
        all += e;
        if (replay[k]) {
            events += e;
            nr++;
        }
    }
    if (events <= w->max_replayed)
        return 0;
    snprintf(w->err, w->err_size,
             "the peaks fall in %u of the %u chunks (%.0f%% of the events), each to be replayed "
             "alone: a replay of the whole trace is cheaper",
             nr, n, all ? 100.0 * (double)events / (double)all : 0.0);
    return -ENOTSUP;
}

/* Pass two: at each chunk where a peak is (or may be: a program's), a
 * replay; then its changes. */
static int walk_chunks(struct walk *w)
{
    uint32_t n = fmt_reader_nr_chunks(w->r);
    bool *peaks_in = calloc((size_t)n + 1, sizeof(*peaks_in));
    int rc = 0;

    if (!peaks_in)
        return -ENOMEM;
    for (uint32_t i = 0; (w->shares & ANA_SHARES_IMAGE) && i < w->nr_im; i++)
        if (w->im[i].peak_chunk >= 0)
            peaks_in[w->im[i].peak_chunk] = true;
    if ((w->shares & ANA_SHARES_ALL) && w->peak_chunk >= 0)
        peaks_in[w->peak_chunk] = true;
    ana_pmodel_progs_mark(&w->progs, w->shares & ANA_SHARES_PROGRAM, peaks_in);
    if ((rc = within_budget(w, peaks_in))) {
        free(peaks_in);
        return rc;
    }
    for (w->chunk = 0; w->chunk < n && !rc; w->chunk++) {
        uint32_t k = w->chunk;
        if (peaks_in[k] && (rc = replay(w, k)))
            break;
        struct fmt_all_totals a;
        rc = chunk_images(w, k, step_image);
        rc = rc ?: fmt_reader_chunk_all_totals(w->r, k, &a);
        rc = rc ?: fmt_reader_chunk_delta(w->r, k, step_live, w);
        rc = rc ?: w->rc;
        if (rc)
            break;
        ana_pmodel_progs_stepped(&w->progs, k, peaks_in[k]);
        passes(w->run, a.has_peak, a.peak, a.peak_ns, &w->peak, &w->peak_ns);
        w->run += a.heap;
        w->run_blocks += a.blocks;
    }
    free(peaks_in);
    return rc;
}

static int cmp_share(const void *a, const void *b)
{
    uint32_t x = ((const struct ana_pmodel_stack_share *)a)->stack,
             y = ((const struct ana_pmodel_stack_share *)b)->stack;

    return x < y ? -1 : x > y;
}

/* Stack's share in v (sorted), taken: 0 after (a site of it made again
 * later, after its process's exit, had none). */
static uint64_t take_share(struct ana_pmodel_stack_share *v, size_t n, uint32_t stack)
{
    struct ana_pmodel_stack_share key = {stack, 0},
                                  *s = n ? bsearch(&key, v, n, sizeof(*v), cmp_share) : NULL;
    uint64_t bytes = s ? s->bytes : 0;

    if (s)
        s->bytes = 0;
    return bytes;
}

struct ana_pmodel_peaks {
    struct walk w;
};

int ana_pmodel_peaks_find(struct ana_pmodel_peaks **out, struct fmt_reader *r, const char *path,
                          const struct ana_model_options *opt, unsigned shares,
                          uint64_t max_replayed, char *err, size_t err_size)
{
    struct ana_pmodel_peaks *p = calloc(1, sizeof(*p));
    struct walk *w = p ? &p->w : NULL;
    int rc = -ENOMEM;

    *out = NULL;
    if (!p)
        return -ENOMEM;
    *w = (struct walk){.r = r,
                       .path = path,
                       .opt = opt,
                       .shares = shares,
                       .max_replayed = max_replayed,
                       .nr_im = fmt_reader_nr_images(r),
                       .peak_chunk = -1,
                       .err = err,
                       .err_size = err_size};
    ana_map_init(&w->live, sizeof(struct live));
    if (!(w->im = calloc((size_t)w->nr_im + 1, sizeof(*w->im))) ||
        ana_pmodel_progs_init(&w->progs, opt ? opt->programs : NULL))
        goto out;
    for (uint32_t i = 0; i < w->nr_im; i++)
        w->im[i].peak_chunk = -1;
    if ((rc = find_peaks(w)) || (rc = walk_chunks(w)))
        goto out;
    /* what the model is given: the walk's state goes */
    ana_map_release(&w->live);
    if ((rc = ana_pmodel_progs_settle(&w->progs, &w->prog, &w->nr_prog)))
        goto out;
    struct ana_pmodel_stack_share *v[3] = {w->own, w->all, w->prog};
    size_t nr[3] = {w->nr_own, w->nr_all, w->nr_prog};
    for (int i = 0; i < 3; i++)
        if (nr[i]) /* (qsort must not be given NULL, even for none) */
            qsort(v[i], nr[i], sizeof(*v[i]), cmp_share);
    *out = p;
    return 0;
out:
    ana_pmodel_peaks_free(p);
    return rc;
}

/* Site s of stack in m gets its shares. */
static int give_site(struct walk *w, struct ana_model *m, uint32_t stack, struct ana_site *s)
{
    uint64_t prog = take_share(w->prog, w->nr_prog, stack);
    uint32_t at = ana_model_site_index(m, stack);

    s->peak_bytes = take_share(w->own, w->nr_own, stack);
    s->peak_all_bytes = take_share(w->all, w->nr_all, stack);
    if (!prog || at == UINT32_MAX)
        return 0;
    /* the model's generations stay 0: its finish keeps these shares */
    if (at >= m->nr_shares &&
        UTIL_ARRAY_RESERVE_ZERO(m->shares, m->nr_shares, (size_t)at + 1, 1024))
        return -ENOMEM;
    m->shares[at] = (struct ana_prog_share){prog, 0};
    return 0;
}

int ana_pmodel_peaks_give_image(struct ana_pmodel_peaks *p, struct ana_model *m, uint32_t image)
{
    int rc = 0;

    for (uint32_t k = ana_model_first_site(m, image); k != UINT32_MAX && !rc;
         k = ana_model_next_site(m, k))
        rc = give_site(&p->w, m, m->site_stack[k], &m->sites[k]);
    return rc;
}

int ana_pmodel_peaks_give(struct ana_pmodel_peaks *p, struct ana_model *m)
{
    struct walk *w = &p->w;
    int rc;

    /* the running RSS's highest: the merge's samples are each image's
     * highest and latest of a chunk, whose sums are no moment's */
    m->total.rss_peak = w->rss_top;
    m->total.rss_peak_ns = w->rss_top_ns;
    if ((rc = ana_pmodel_progs_apply(&w->progs, w->shares & ANA_SHARES_PROGRAM, m)))
        return rc;
    for (uint32_t i = 0; i < m->nr_sites && !rc; i++)
        if (m->sites[i].image != UINT32_MAX) /* not a place a retired site left */
            rc = give_site(w, m, m->site_stack[i], &m->sites[i]);
    return rc;
}

void ana_pmodel_peaks_free(struct ana_pmodel_peaks *p)
{
    if (!p)
        return;
    ana_map_release(&p->w.live);
    ana_pmodel_progs_release(&p->w.progs);
    free(p->w.im);
    free(p->w.own);
    free(p->w.all);
    free(p->w.prog);
    free(p);
}
