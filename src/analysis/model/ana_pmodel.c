/* SPDX-License-Identifier: MIT */
/* The heap model in parallel ranges, merged (see ana_pmodel.h). */
#include "analysis/model/ana_pmodel.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/ana_heap_replay.h"
#include "analysis/model/ana_model_internal.h"
#include "analysis/model/ana_pmodel_internal.h"
#include "memscribe/trace.h"
#include "util/util_array.h"

/* Below this many events per range a thread costs more than it saves
 * (opening a reader, merging). */
#define MIN_EVENTS_PER_RANGE 200000

/* Each range keeps a site per stack id up to the highest it met, and the
 * merge one more: with many stacks (a trace of distinct deep stacks) the
 * copies, not the events, are the memory. Above this many bytes of
 * per-range sites, fewer ranges, or one pass (a single copy), are used. */
#define MAX_RANGE_SITE_BYTES (64u << 20)

bool ana_pmodel_supported(const struct ana_model_options *opt)
{
    return !opt || (!opt->keep_blocks && !opt->temporary_threshold && !opt->loose_temporary &&
                    !opt->programs && !opt->retire.fn && !opt->retire.left_out &&
                    (!opt->filter || !opt->filter->nr_tids));
}

struct ana_model_options ana_pmodel_plain_options(const struct ana_model_options *opt)
{
    struct ana_model_options o = {0};

    if (opt)
        o = *opt;
    o.programs = NULL;
    o.retire = (struct ana_model_retire){0};
    return o;
}

/* The range's progress as a share of the range. */
static void range_progress(void *arg, uint64_t ts_ns, uint64_t last_ns)
{
    struct range *rg = arg;
    uint64_t t = ts_ns < rg->prog_end_ns ? ts_ns : rg->prog_end_ns;

    rg->progress(rg->progress_arg, t > rg->from_ns ? t - rg->from_ns : 0,
                 rg->prog_end_ns - rg->from_ns);
}

void *ana_pmodel_run_range(void *arg)
{
    struct range *rg = arg;
    struct ana_scan_options so;
    struct fmt_reader *r;
    int rc;

    struct ana_step_options step = ana_model_step_options(rg->opt);
    step.partial = true;
    ana_heap_replay_init(&rg->replay, &step);
    /* A range's replay reads no stack: none is decoded (a build's are
     * millions; the caller's own reader holds them, checked). */
    if ((rc = fmt_reader_open_flags(&r, rg->path, FMT_OPEN_STACKS_LATER, rg->err,
                                    sizeof(rg->err)))) {
        rg->rc = rc;
        return NULL;
    }
    fmt_reader_verify_summaries(r, rg->verify);
    ana_scan_options_init(&so);
    so.range = true;
    so.from_chunk = rg->first_chunk;
    so.end_chunk = rg->end_chunk;
    so.until_ns = rg->until_ns;
    so.progress = rg->progress ? range_progress : NULL;
    so.progress_arg = rg;
    if (!(rc = ana_model_create_partial(&rg->m, rg->opt))) {
        rg->m->paged_sites = rg->paged_sites;
        if (!(rc = ana_model_subscribe(rg->m, &rg->replay)))
            rc = ana_heap_replay_run(&rg->replay, r, &so);
    }
    if (rc < 0 && rc != -ENOMEM)
        snprintf(rg->err, sizeof(rg->err), "%s", fmt_reader_error(r));
    rg->rc = rc;
    fmt_reader_close(r);
    return NULL;
}

/* n counters that add up. */
static void add_u64s(uint64_t *r, const uint64_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        r[i] += p[i];
}

void ana_pmodel_add_counts(struct ana_scope *r, const struct ana_scope *p)
{
    if (!r->seen) {
        r->seen = true;
        r->first_ns = p->first_ns;
    }
    r->pid = p->pid;
    r->last_ns = p->last_ns;
#define ADD_SCOPE_COUNTER(name, dim)                                                               \
    add_u64s((uint64_t *)&r->name, (const uint64_t *)&p->name, sizeof(r->name) / sizeof(uint64_t));
    ANA_SCOPE_COUNTERS(ADD_SCOPE_COUNTER)
#undef ADD_SCOPE_COUNTER
}

/* Merge one scope over the ranges; returns the range holding its peak
 * (-1 if none). get(k) is the scope of range k or NULL. */
static int merge_scope(struct ana_scope *r, struct range *rg, unsigned n, uint32_t image)
{
    uint64_t heap = 0, blocks = 0, base = 0, base_blocks = 0;
    int peak_k = -1;

    for (unsigned k = 0; k < n; k++) {
        const struct ana_scope *p =
            image == UINT32_MAX ? ana_model_total(rg[k].m) : ana_model_image(rg[k].m, image);
        if (!p || !p->seen)
            continue;
        ana_pmodel_add_counts(r, p);
        /* The exact counters are totals so far: the latest range's */
        if (p->has_exact) {
            for (unsigned c = 0; c < FMT_CTR_ALL; c++)
                if (p->exact_set[c / 64] >> c % 64 & 1)
                    r->exact[c] = p->exact[c];
            for (unsigned w = 0; w < sizeof(r->exact_set) / sizeof(r->exact_set[0]); w++)
                r->exact_set[w] |= p->exact_set[w];
            if (p->exact_set[FMT_CTR_PEAK_USABLE / 64] >> FMT_CTR_PEAK_USABLE % 64 & 1)
                r->exact_peak_ns = p->exact_peak_ns;
            r->has_exact = true;
        }
        /* An image ends in the range that holds its exit (or exec). */
        if (p->ended) {
            r->ended = true;
            r->end_ns = p->end_ns;
        }
        /* The whole trace's peak is the first range state above every
         * earlier one: the range's own highest, from where it starts. */
        if ((int64_t)p->peak != INT64_MIN && base + p->peak > r->peak) {
            r->peak = base + p->peak;
            r->peak_ns = p->peak_ns;
            r->peak_blocks = base_blocks + p->peak_blocks;
            peak_k = (int)k;
        }
        heap += p->heap;
        blocks += p->live_blocks;
        bool running = image == UINT32_MAX && rg[k].running_base;
        base += running ? p->running_heap : p->heap;
        base_blocks += running ? p->running_blocks : p->live_blocks;
    }
    r->heap = heap;
    r->live_blocks = blocks;
    r->max_since_mark = base;
    return peak_k;
}

int ana_pmodel_merge(struct ana_model *out, struct range *rg, unsigned n)
{
    uint32_t nr_images = 0, nr_sites = 0, nr_threads = 0;
    int *peak_k = NULL;
    uint64_t *last = NULL;
    int rc = -ENOMEM;

    for (unsigned k = 0; k < n; k++) {
        struct ana_model *m = rg[k].m;
        nr_images = m->nr_images > nr_images ? m->nr_images : nr_images;
        nr_sites = m->nr_used > nr_sites ? m->nr_used : nr_sites;
        uint32_t nt = rg[k].replay.stepper.nr_threads;
        nr_threads = nt > nr_threads ? nt : nr_threads;
    }
    /* A retiring model's index by stack is paged (the index's build). */
    if (UTIL_ARRAY_RESERVE_ZERO(out->images, out->nr_images, nr_images, 16) ||
        (!out->opt.retire.fn && ana_model_reserve_sites(out, nr_sites)) ||
        UTIL_ARRAY_RESERVE_ZERO(out->step.threads, out->step.nr_threads, nr_threads, 16))
        goto out;
    peak_k = calloc((size_t)out->nr_images + 1, sizeof(*peak_k));
    last = calloc((size_t)out->step.nr_threads + 1, sizeof(*last));
    if (!peak_k || !last)
        goto out;

    for (uint32_t i = 0; i < out->nr_images; i++) {
        memset(&out->images[i], 0, sizeof(out->images[i]));
        out->images[i].image = i;
        peak_k[i] = merge_scope(&out->images[i], rg, n, i);
    }
    int total_k = merge_scope(&out->total, rg, n, UINT32_MAX);
    /* The images still running at the end hold the all-images running
     * heap, as one pass leaves it (an image leaves it at its exit): 0 was
     * left for a process not ended (top's "heap in use by running
     * processes" of a trace being written). */
    for (uint32_t i = 0; i < out->nr_images; i++)
        if (out->images[i].seen && !out->images[i].ended) {
            out->total.running_heap += out->images[i].heap;
            out->total.running_blocks += out->images[i].live_blocks;
        }

    /* RSS in order: the all-images figure is a sum of latest samples. */
    for (unsigned k = 0; k < n; k++)
        for (size_t j = 0; j < rg[k].m->nr_rss; j++) {
            const struct ana_rss_sample *smp = &rg[k].m->rss[j];
            struct ana_scope *img = &out->images[smp->image];
            out->total.rss = out->total.rss - img->rss + smp->size;
            img->rss = smp->size;
            struct ana_scope *sc[2] = {img, &out->total};
            for (int s = 0; s < 2; s++) {
                sc[s]->has_rss = true;
                if (sc[s]->rss > sc[s]->rss_peak) {
                    sc[s]->rss_peak = sc[s]->rss;
                    sc[s]->rss_peak_ns = smp->ts_ns;
                }
            }
        }

    /* An ended image's RSS left the all-images sum at its exit (ranges
     * replay one image only: its samples all came before). */
    for (uint32_t i = 0; i < out->nr_images; i++)
        if (out->images[i].ended)
            out->total.rss -= out->images[i].rss;

    /* Each range's sites, in order (not every stack id of every range: a
     * build's model so far has millions of ids and a chunk's thousands of
     * sites): counters summed, and each site's live bytes at a peak in
     * range pk the deltas of the ranges before plus its delta at that
     * range's peak, summed as the ranges come (below 0: none). */
    for (unsigned k = 0; k < n; k++) {
        const struct ana_model *m = rg[k].m;
        for (uint32_t i = 0; i < m->nr_sites; i++) {
            const struct ana_site *p = &m->sites[i];
            uint32_t s = m->site_stack[i];
            if (p->image == UINT32_MAX)
                continue; /* a place a retired site left */
            struct ana_site *r = (struct ana_site *)ana_model_site(out, s);
            if (!r) {
                if (!(r = ana_model_site_make(out, s, p->image)))
                    goto out;
                memset(r, 0, sizeof(*r));
                r->image = p->image;
            }
#define ADD_SITE_COUNTER(type, name) r->name += p->name;
            ANA_SITE_COUNTERS(ADD_SITE_COUNTER)
#undef ADD_SITE_COUNTER
            int pk = peak_k[r->image];
            r->peak_bytes += (int)k < pk    ? (uint64_t)p->live_bytes
                             : (int)k == pk ? p->peak_bytes
                                            : 0;
            r->peak_all_bytes += (int)k < total_k    ? (uint64_t)p->live_bytes
                                 : (int)k == total_k ? p->peak_all_bytes
                                                     : 0;
        }
    }
    for (uint32_t i = 0; i < out->nr_sites; i++) {
        struct ana_site *r = &out->sites[i];
        if ((int64_t)r->peak_bytes < 0)
            r->peak_bytes = 0;
        if ((int64_t)r->peak_all_bytes < 0)
            r->peak_all_bytes = 0;
    }

    /* Frees met before their thread's first heap event in a range are
     * temporary if the thread's latest heap event before the range was
     * that block's allocation. */
    for (unsigned k = 0; k < n; k++) {
        struct ana_model *m = rg[k].m;
        for (size_t j = 0; j < m->nr_cands; j++) {
            const struct ana_temp_candidate *c = &m->cands[j];
            if (!c->ref || c->thread >= out->step.nr_threads || last[c->thread] != c->ref)
                continue;
            struct ana_scope *sc[2] = {&out->images[c->image], &out->total};
            for (int i = 0; i < 2; i++) {
                sc[i]->nr_temporary += c->count;
                sc[i]->temporary_bytes += c->size;
            }
            struct ana_site *site = (struct ana_site *)ana_model_site(out, c->stack);
            if (site) {
                site->nr_temporary += c->count;
                site->temporary_bytes += c->size;
            }
        }
        const struct ana_stepper *step = &rg[k].replay.stepper;
        for (uint32_t t = 0; t < step->nr_threads; t++) {
            const struct ana_step_thread *ts = &step->threads[t];
            struct ana_step_thread *o = &out->step.threads[t];
            if (ts->tid)
                o->tid = ts->tid;
            if (ts->nr_heap) {
                last[t] = ts->last_serial;
                o->last_serial = ts->last_serial;
                o->last_alloc = ts->last_alloc;
            }
            o->seq += ts->seq;
            o->nr_heap += ts->nr_heap;
        }
    }
    rc = 0;
out:
    free(peak_k);
    free(last);
    return rc;
}

static uint32_t selected_images(struct fmt_reader *r, const struct ana_model_options *opt)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < fmt_reader_nr_images(r); i++) {
        const struct fmt_image_info *ii = fmt_reader_image(r, i);
        n += ii && ana_filter_image(opt ? opt->filter : NULL, i, ii->pid);
    }
    return n;
}

/* One range: the whole trace replayed in order into a plain model,
 * exactly as without threads. */
static int one_pass(struct ana_model **out, struct fmt_reader *r,
                    const struct ana_model_options *opt, const struct ana_pmodel_options *po)
{
    struct ana_scan_options so;

    fmt_reader_verify_summaries(r, po->verify);
    ana_scan_options_init(&so);
    so.until_ns = po->until_ns;
    so.progress = po->progress;
    so.progress_arg = po->progress_arg;
    return ana_model_build(out, r, opt, &so);
}

/* Does a chunk's summary hold an event after until_ns? */
static bool ends_after(struct fmt_reader *r, uint64_t until_ns)
{
    for (uint32_t c = 0; c < fmt_reader_nr_chunks(r); c++)
        if (fmt_reader_chunk(r, c)->last_ts_ns > until_ns)
            return true;
    return false;
}

int ana_pmodel_build(struct ana_model **out, const char *path, const struct ana_model_options *opt,
                     const struct ana_pmodel_options *po, char *err, size_t err_size)
{
    uint64_t until_ns = po->until_ns;
    unsigned nr_threads = po->nr_threads;
    uint64_t min_events = po->min_range_events ? po->min_range_events : MIN_EVENTS_PER_RANGE;
    struct fmt_reader *r;
    struct range *rg = NULL;
    pthread_t *tid = NULL;
    uint32_t *start = NULL; /* each range's first chunk */
    unsigned n = 0;
    int rc;

    if (!ana_pmodel_supported(opt))
        return -ENOTSUP;
    /* No stack is decoded: the ranges' readers decode their own. */
    if ((rc = fmt_reader_open_flags(&r, path, FMT_OPEN_STACKS_LATER, err, err_size)))
        return rc;
    uint32_t nr_chunks = fmt_reader_nr_chunks(r);
    uint32_t last_chunk =
        until_ns == UINT64_MAX ? nr_chunks : fmt_reader_find_chunk(r, until_ns) + 1;
    if (last_chunk > nr_chunks)
        last_chunk = nr_chunks;
    uint64_t total = ana_scan_events(r, 0, last_chunk);
    if (nr_threads > total / min_events)
        nr_threads = (unsigned)(total / min_events);
    if (nr_threads < 1)
        nr_threads = 1;
    struct fmt_trace_counts counts;
    fmt_reader_counts(r, &counts);
    uint64_t nr_sites = (uint64_t)counts.nr_stacks + 1;
    uint64_t max_ranges = MAX_RANGE_SITE_BYTES / (nr_sites * sizeof(struct ana_site));
    if (nr_threads > max_ranges)
        nr_threads = max_ranges > 1 ? (unsigned)max_ranges : 1;
    /* A range cannot take an image's exit out of the running total (it
     * does not know the image's heap at its start): more than one image
     * selected is replayed in one pass. */
    if (nr_threads > 1 && selected_images(r, opt) > 1)
        nr_threads = 1;
    if (nr_threads == 1) {
        rc = one_pass(out, r, opt, po);
        if (rc < 0 && rc != -ENOMEM && err && err_size)
            snprintf(err, err_size, "%s", fmt_reader_error(r));
        goto out;
    }
    rg = calloc(nr_threads, sizeof(*rg));
    tid = calloc(nr_threads, sizeof(*tid));
    start = calloc(nr_threads, sizeof(*start));
    if (!rg || !tid || !start) {
        rc = -ENOMEM;
        goto out;
    }
    n = ana_scan_cut(r, 0, last_chunk, nr_threads, start);
    for (unsigned k = 0; k < n; k++) {
        uint32_t end = k + 1 < n ? start[k + 1] : 0;
        rg[k].first_chunk = start[k];
        rg[k].from_ns = fmt_reader_chunk(r, start[k])->first_ts_ns;
        rg[k].end_ns = end ? fmt_reader_chunk(r, end)->first_ts_ns : UINT64_MAX;
        rg[k].end_chunk = end;
    }
    if (n == 0) { /* an empty trace: one range that reads nothing */
        rg[0].first_chunk = 0;
        rg[0].end_ns = UINT64_MAX;
        n = 1;
    }
    for (unsigned k = 0; k < n; k++) {
        rg[k].prog_end_ns = rg[k].end_ns < counts.last_ts_ns ? rg[k].end_ns : counts.last_ts_ns;
        if (rg[k].prog_end_ns <= rg[k].from_ns)
            rg[k].prog_end_ns = rg[k].from_ns + 1;
        rg[k].path = path;
        rg[k].opt = opt;
        rg[k].until_ns = until_ns;
        rg[k].verify = po->verify;
        if (k == 0) {
            rg[k].progress = po->progress;
            rg[k].progress_arg = po->progress_arg;
        }
    }
    unsigned started = 0;
    for (unsigned k = 1; k < n; k++, started++)
        if (pthread_create(&tid[k], NULL, ana_pmodel_run_range, &rg[k]))
            break;
    ana_pmodel_run_range(&rg[0]);
    for (unsigned k = 1; k <= started; k++)
        pthread_join(tid[k], NULL);
    rc = started + 1 < n ? -EAGAIN : 0;
    for (unsigned k = 0; k < n && !rc; k++)
        if (rg[k].rc) {
            rc = rg[k].rc;
            if (err && err_size)
                snprintf(err, err_size, "%s", rg[k].err);
        }
    /* Ranges stop at until_ns: the chunks after it are decoded unused, so
     * that a corrupt one fails here as it fails dump. Not when no chunk's
     * summary reaches past it (leaks at the end): the ranges then read
     * every event, as an event outside its summary's times fails. */
    if (!rc && until_ns != UINT64_MAX && last_chunk > 0 && ends_after(r, until_ns) &&
        ((rc = fmt_reader_seek_chunk(r, last_chunk - 1)) || (rc = ana_scan_rest(r)) < 0) && err &&
        err_size)
        snprintf(err, err_size, "%s", fmt_reader_error(r));
    if (!rc)
        rc = ana_model_create(out, opt);
    if (!rc && (rc = ana_pmodel_merge(*out, rg, n))) {
        ana_model_destroy(*out);
        *out = NULL;
    }
out:
    for (unsigned k = 0; rg && k < n; k++) {
        ana_model_destroy(rg[k].m);
        ana_heap_replay_release(&rg[k].replay);
    }
    free(rg);
    free(tid);
    free(start);
    fmt_reader_close(r);
    return rc;
}
