/* SPDX-License-Identifier: MIT */
/* WPA window classification with seeking (see ana_window.h). */
#include "analysis/model/ana_window.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_aggregate.h"
#include "analysis/model/ana_heap_replay.h"
#include "analysis/model/ana_histogram.h"
#include "analysis/model/ana_index.h"
#include "analysis/model/ana_step.h"
#include "util/util_array.h"

struct live_val {
    int64_t bytes, blocks;
    uint32_t image;
};

static int grow_images(struct ana_window *w, uint32_t image)
{
    if (image < w->nr_images)
        return 0;
    uint32_t n = w->nr_images ? w->nr_images : 4;
    while (n <= image)
        n *= 2;
    struct ana_wpa *im = realloc(w->images, n * sizeof(*im));
    if (!im)
        return -ENOMEM;
    w->images = im;
    bool *seen = realloc(w->image_seen, n * sizeof(*seen));
    if (!seen)
        return -ENOMEM;
    w->image_seen = seen;
    memset(im + w->nr_images, 0, (n - w->nr_images) * sizeof(*im));
    memset(seen + w->nr_images, 0, (n - w->nr_images) * sizeof(*seen));
    w->nr_images = n;
    return 0;
}

/* Threads and size classes are per image: the image is folded into the
 * map key so that rows of different processes stay apart. */
static uint64_t map_key(const struct ana_window *w, uint64_t key, uint32_t image)
{
    return w->by == ANA_WINDOW_BY_STACK ? key + 1 : ((uint64_t)image << 40 | key) + 1;
}

/* The row of key in image, made with tid when new; NULL when out of
 * memory. */
static struct ana_window_key *key_at(struct ana_window *w, uint64_t key, uint32_t image,
                                     uint32_t tid)
{
    struct ana_window_key *k;
    int created;

    if (grow_images(w, image) || !(k = ana_map_put(&w->keys, map_key(w, key, image), &created)))
        return NULL;
    if (created) {
        k->key = key;
        k->image = image;
        k->tid = tid;
    }
    return k;
}

/* Add a block of size bytes, standing for n blocks (fmt_event_count), to
 * class cls under key. */
static int count(struct ana_window *w, uint64_t key, uint32_t image, uint32_t tid, int cls,
                 uint64_t size, uint64_t n)
{
    struct ana_window_key *k = key_at(w, key, image, tid);

    if (!k)
        return -ENOMEM;
    k->c.nr[cls] += n;
    k->c.bytes[cls] += size;
    w->images[image].nr[cls] += n;
    w->images[image].bytes[cls] += size;
    w->image_seen[image] = true;
    return 0;
}

/* size: the block's size as recorded (raw_size: a size class of a sampled
 * trace is that of the recorded block, not of its estimate). */
static uint64_t key_of(struct ana_window *w, uint32_t stack, uint32_t thread, uint64_t size,
                       const struct fmt_event *ev)
{
    uint32_t id;

    switch (w->by) {
    case ANA_WINDOW_BY_HEAP:
        /* A Windows heap by its handle, as WPA shows it; a Linux trace's
         * heaps (malloc's, pools) by id: a pool's handle is an address,
         * wider than the key keeps beside the image. */
        if (w->heaps.pe)
            return ev->arg[1];
        return ana_heaps_of(&w->heaps, ev, &id) ? id : UINT64_MAX;
    case ANA_WINDOW_BY_THREAD:
        return thread;
    case ANA_WINDOW_BY_SIZE_CLASS:
        return ana_size_class(size);
    default:
        return stack;
    }
}

static int live_add(struct ana_window *w, uint32_t stack, uint32_t image, int64_t bytes,
                    int64_t blocks)
{
    struct live_val *v = ana_map_put(&w->live_, (uint64_t)stack + 1, NULL);

    if (!v)
        return -ENOMEM;
    v->bytes += bytes;
    v->blocks += blocks;
    v->image = image;
    return 0;
}

/* An aggregated trace's batch row (ana_step.h): its blocks were born and
 * freed inside the interval that ends at the row's time. The window's
 * bounds are cuts (ana_window_subscribe rounds them out), so the interval
 * is inside when its end is after t0: AIFI. */
static int batch_row(struct ana_window *w, const struct fmt_event *ev)
{
    uint64_t k;
    uint32_t id;

    if (ev->ts_ns <= w->t0_ns || !ev->arg[0])
        return 0;
    switch (w->by) {
    case ANA_WINDOW_BY_HEAP:
        /* A row does not say its heap: malloc's (docs/aggregate.md). */
        k = ana_heaps_get(&w->heaps, ev->image, 0, &id) ? id : UINT64_MAX;
        break;
    case ANA_WINDOW_BY_THREAD:
        k = ev->thread;
        break;
    case ANA_WINDOW_BY_SIZE_CLASS:
        k = ev->arg[3];
        break;
    default:
        k = ev->stack;
    }
    if (k == UINT64_MAX)
        return -ENOMEM;
    return count(w, k, ev->image, ev->tid, ANA_AIFI, ev->size, ev->arg[0]);
}

/* Blocks outstanding at t0 of a stack (v, blocks > 0) into its image's
 * AOFO total (the AOFI among them are taken out at the end: aofo()). */
static int image_aofo(struct ana_window *w, const struct live_val *v)
{
    if (grow_images(w, v->image))
        return -ENOMEM;
    w->images[v->image].nr[ANA_AOFO] += (uint64_t)v->blocks;
    w->images[v->image].bytes[ANA_AOFO] += (uint64_t)v->bytes;
    w->image_seen[v->image] = true;
    return 0;
}

static int by_key(const void *x, const void *y)
{
    uint64_t a = ((const struct ana_window_key *)x)->key,
             b = ((const struct ana_window_key *)y)->key;

    return (a > b) - (a < b);
}

/* Image ended at end_ns (rows by stack, a retire callback): its blocks
 * outstanding since before t0 go to its AOFO total (aofo() would add
 * them), its keys to the callback, and both leave the maps. */
static int retire_image(struct ana_window *w, uint32_t image, uint64_t end_ns)
{
    struct ana_window_key *keys = NULL;
    uint64_t *gone = NULL;
    size_t n = 0, nr_gone = 0, cap = 0, cap_gone = 0;
    int rc = 0;

    for (size_t i = 0; i < w->live_.cap && !rc; i++) {
        const struct live_val *v = ana_map_slot_val(&w->live_, i);
        if (!ana_map_slot_key(&w->live_, i) || v->image != image)
            continue;
        if (v->blocks > 0)
            rc = image_aofo(w, v);
        if (!rc && UTIL_ARRAY_RESERVE(gone, cap_gone, nr_gone + 1, 64))
            rc = -ENOMEM;
        if (!rc)
            gone[nr_gone++] = ana_map_slot_key(&w->live_, i);
    }
    for (size_t i = 0; i < nr_gone; i++)
        ana_map_del(&w->live_, gone[i]);
    for (size_t i = 0; i < w->keys.cap && !rc; i++) {
        const struct ana_window_key *k = ana_map_slot_val(&w->keys, i);
        if (!ana_map_slot_key(&w->keys, i) || k->image != image)
            continue;
        if (UTIL_ARRAY_RESERVE(keys, cap, n + 1, 64))
            rc = -ENOMEM;
        else
            keys[n++] = *k;
    }
    if (!rc) {
        if (n) /* keys is NULL then */
            qsort(keys, n, sizeof(*keys), by_key);
        rc = w->retire_(w->retire_arg_, w, image, keys, n, end_ns);
    }
    for (size_t i = 0; i < n && !rc; i++)
        ana_map_del(&w->keys, map_key(w, keys[i].key, image));
    free(keys);
    free(gone);
    return rc;
}

static int on_step(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    struct ana_window *w = arg;
    int rc;

    if (ev->ts_ns > w->t1_ns)
        return 0; /* a pass that reads on for other consumers */
    w->nr_events_read++;
    if (st->batch)
        return batch_row(w, ev);
    if (ev->kind == FMT_EV_PROCESS_EXIT && w->retire_ && w->by == ANA_WINDOW_BY_STACK &&
        st->selected)
        return retire_image(w, ev->image, ev->ts_ns);
    bool end = st->ends, start = st->starts;
    if (!end && !start)
        return 0;
    if (ev->ts_ns < w->t0_ns) {
        /* Before the window: only what is outstanding at t0 matters. */
        if (end && (rc = live_add(w, ev->ref_stack, ev->image, -(int64_t)ev->ref_size,
                                  -(int64_t)fmt_event_ref_count(ev))))
            return rc;
        if (start && (rc = live_add(w, ev->stack, ev->image, (int64_t)ev->size,
                                    (int64_t)fmt_event_count(ev))))
            return rc;
        return 0;
    }
    if (end) {
        uint64_t k = key_of(w, ev->ref_stack, ev->ref_thread, ev->raw_ref_size, ev);
        if (k == UINT64_MAX)
            return -ENOMEM;
        uint32_t tid = 0;
        if (ev->ref_ts_ns >= w->t0_ns) {
            /* Allocated inside: it was counted AIFO, it is AIFI. A range
             * after the first may not hold its allocation: its AIFO goes
             * below 0 there, and the sum of the ranges is right. */
            struct ana_window_key *kk = w->ranged ? key_at(w, k, ev->image, 0)
                                                  : ana_map_get(&w->keys, map_key(w, k, ev->image));
            if (w->ranged && !kk)
                return -ENOMEM;
            if (kk) {
                tid = kk->tid;
                kk->c.nr[ANA_AIFO] -= fmt_event_ref_count(ev);
                kk->c.bytes[ANA_AIFO] -= ev->ref_size;
                w->images[ev->image].nr[ANA_AIFO] -= fmt_event_ref_count(ev);
                w->images[ev->image].bytes[ANA_AIFO] -= ev->ref_size;
            }
            if ((rc = count(w, k, ev->image, tid, ANA_AIFI, ev->ref_size, fmt_event_ref_count(ev))))
                return rc;
        } else {
            if ((rc = count(w, k, ev->image, ev->ref_thread == ev->thread ? ev->tid : 0, ANA_AOFI,
                            ev->ref_size, fmt_event_ref_count(ev))))
                return rc;
            if (ev->kind == FMT_EV_REALLOC || ev->kind == FMT_EV_REALLOCARRAY)
                key_at(w, k, ev->image, 0)->nr_aofi_realloc += fmt_event_ref_count(ev);
        }
    }
    if (start) {
        uint64_t k = key_of(w, ev->stack, ev->thread, ev->raw_size, ev);
        if (k == UINT64_MAX)
            return -ENOMEM;
        if ((rc = count(w, k, ev->image, ev->tid, ANA_AIFO, ev->size, fmt_event_count(ev))))
            return rc;
    }
    return 0;
}

/* After the pass: AOFO = outstanding at t0 and not freed inside. Per
 * stack when rows are stacks; per image always. */
static int aofo(struct ana_window *w)
{
    for (size_t i = 0; i < w->live_.cap; i++) {
        uint64_t key = ana_map_slot_key(&w->live_, i);
        const struct live_val *v = ana_map_slot_val(&w->live_, i);
        if (!key || v->blocks <= 0)
            continue;
        if (image_aofo(w, v))
            return -ENOMEM;
        if (w->by != ANA_WINDOW_BY_STACK)
            continue;
        struct ana_window_key *k = ana_map_put(&w->keys, key, NULL);
        if (!k)
            return -ENOMEM;
        k->key = key - 1;
        k->image = v->image;
        k->c.nr[ANA_AOFO] += (uint64_t)v->blocks;
        k->c.bytes[ANA_AOFO] += (uint64_t)v->bytes;
    }
    /* The AOFI blocks were outstanding at t0 too: take them out. */
    for (size_t i = 0; i < w->keys.cap; i++) {
        if (!ana_map_slot_key(&w->keys, i))
            continue;
        struct ana_window_key *k = ana_map_slot_val(&w->keys, i);
        if (w->by == ANA_WINDOW_BY_STACK) {
            k->c.nr[ANA_AOFO] -= k->c.nr[ANA_AOFI];
            k->c.bytes[ANA_AOFO] -= k->c.bytes[ANA_AOFI];
        }
    }
    for (uint32_t i = 0; i < w->nr_images; i++) {
        w->images[i].nr[ANA_AOFO] -= w->images[i].nr[ANA_AOFI];
        w->images[i].bytes[ANA_AOFO] -= w->images[i].bytes[ANA_AOFI];
    }
    return 0;
}

static int on_finish(void *arg)
{
    struct ana_window *w = arg;
    int rc = aofo(w);

    ana_map_release(&w->live_);
    if (rc || w->by != ANA_WINDOW_BY_THREAD || !w->r_)
        return rc;
    /* Rows keyed by thread that were first met through a free by another
     * thread: their tid from the reader's thread table. */
    for (size_t i = 0; i < w->keys.cap; i++) {
        struct ana_window_key *k = ana_map_slot_val(&w->keys, i);
        if (!ana_map_slot_key(&w->keys, i) || k->tid)
            continue;
        for (uint32_t t = 0; t < fmt_reader_nr_threads(w->r_); t++) {
            const struct fmt_thread_info *ti = fmt_reader_thread(w->r_, t);
            if (ti->thread == k->key && ti->image == k->image)
                k->tid = ti->tid;
        }
    }
    return 0;
}

int ana_window_subscribe(struct ana_window *w, struct ana_heap_replay *p, struct fmt_reader *r,
                         uint64_t t0_ns, uint64_t t1_ns, enum ana_window_by by)
{
    static const struct ana_heap_replay_ops ops = {.step = on_step, .finish = on_finish};

    memset(w, 0, sizeof(*w));
    w->asked_t0_ns = t0_ns;
    w->asked_t1_ns = t1_ns;
    /* An aggregated trace knows its blocks born and freed inside an
     * interval only by interval: bounds inside its aggregated stretch go
     * out to the cuts around them (docs/window.md). */
    if (r && t1_ns >= t0_ns) {
        struct fmt_trace_counts c;
        fmt_reader_counts(r, &c);
        t0_ns = ana_aggregate_cut(fmt_reader_info(r), c.last_ts_ns, t0_ns, false);
        t1_ns = ana_aggregate_cut(fmt_reader_info(r), c.last_ts_ns, t1_ns, true);
    }
    w->t0_ns = t0_ns;
    w->t1_ns = t1_ns;
    w->rounded = t0_ns != w->asked_t0_ns || t1_ns != w->asked_t1_ns;
    w->by = by;
    w->r_ = r;
    ana_heaps_init(&w->heaps, r);
    ana_map_init(&w->keys, sizeof(struct ana_window_key));
    ana_map_init(&w->live_, sizeof(struct live_val));
    if (t1_ns < t0_ns)
        return -EINVAL;
    return ana_heap_replay_subscribe(p, &ops, w, 0);
}

int ana_window_compute(struct ana_window *w, struct fmt_reader *r, struct ana_filter *f,
                       uint64_t t0_ns, uint64_t t1_ns, enum ana_window_by by,
                       ana_progress_fn *progress, void *progress_arg)
{
    return ana_window_compute_retire(w, r, f, t0_ns, t1_ns, by, NULL, NULL, progress, progress_arg);
}

int ana_window_compute_retire(struct ana_window *w, struct fmt_reader *r, struct ana_filter *f,
                              uint64_t t0_ns, uint64_t t1_ns, enum ana_window_by by,
                              ana_window_retire_fn *retire, void *retire_arg,
                              ana_progress_fn *progress, void *progress_arg)
{
    struct ana_heap_replay p;
    struct ana_scan_options so;
    int rc;

    ana_heap_replay_init(&p, &(struct ana_step_options){.filter = f});
    ana_scan_options_init(&so);
    so.progress = progress;
    so.progress_arg = progress_arg;
    /* From the start, not from the chunk of t0 with the index's per-stack
     * totals: every chunk is decoded anyway (a corrupt one must fail here
     * as in dump), and the totals are not checked against the events, so
     * the events before t0 give what is live at t0, exactly. */
    if (!(rc = ana_window_subscribe(w, &p, r, t0_ns, t1_ns, by))) {
        w->retire_ = retire;
        w->retire_arg_ = retire_arg;
        so.until_ns = w->t1_ns; /* the bounds as rounded */
        rc = ana_heap_replay_run(&p, r, &so);
    }
    w->first_chunk = so.from_chunk;
    ana_map_release(&w->live_);
    ana_heap_replay_release(&p);
    return rc;
}

static int base_live(void *arg, uint32_t stack, uint32_t image, int64_t bytes, int64_t blocks)
{
    struct ana_window *w = arg;
    const struct fmt_image_info *ii = fmt_reader_image(w->r_, image);
    const struct fmt_chunk_info *c = fmt_reader_chunk(w->r_, w->first_chunk);

    /* Retiring (a tree): a process that ended before the first chunk read
     * has no event to come, and no key: what it left is its AOFO at once,
     * not a stack in the map (a build's ended compilers' leaks). */
    if (w->retire_ && ii && ii->ended && c && ii->end_ns < c->first_ts_ns)
        return blocks > 0 ? image_aofo(w, &(struct live_val){bytes, blocks, image}) : 0;
    return live_add(w, stack, image, bytes, blocks);
}

/* Below this many events per range a thread costs more than it saves
 * (opening a reader: the stack tables). */
#define MIN_EVENTS_PER_RANGE 1000000

/* One range of chunks of a window from the index: the first holds T0 and
 * starts from what was live there (base); the others start after T0. */
struct wrange {
    const char *path;
    struct fmt_reader *r; /* the first range's: the caller's; the others open their own */
    struct ana_filter *f;
    uint64_t t0_ns, t1_ns;
    enum ana_window_by by;
    uint32_t first_chunk, end_chunk; /* chunks first..end-1 (end 0: to t1) */
    bool base;
    ana_progress_fn *progress;
    void *progress_arg;
    ana_window_retire_fn *retire; /* one range only (ana_window_ranges) */
    void *retire_arg;
    struct ana_window *w;
    int rc;
    const char *why;
    char err[512];
};

static void *run_wrange(void *arg)
{
    struct wrange *g = arg;
    struct fmt_reader *r = g->r;
    struct ana_heap_replay p;
    struct ana_scan_options so;
    int rc;

    /* A range's replay reads no stack: none is decoded. */
    if (!r &&
        (rc = fmt_reader_open_flags(&r, g->path, FMT_OPEN_STACKS_LATER, g->err, sizeof(g->err)))) {
        g->rc = rc;
        return NULL;
    }
    /* Partial: frees of blocks from before the first chunk read end them
     * by their facts, as a range of ana_pmodel.c does. */
    ana_heap_replay_init(&p, &(struct ana_step_options){.filter = g->f, .partial = true});
    ana_scan_options_init(&so);
    so.progress = g->progress;
    so.progress_arg = g->progress_arg;
    so.range = true; /* the chunks outside are not decoded */
    so.from_chunk = g->first_chunk;
    so.end_chunk = g->end_chunk;
    so.until_ns = g->t1_ns;
    if (!(rc = ana_window_subscribe(g->w, &p, r, g->t0_ns, g->t1_ns, g->by))) {
        g->w->ranged = true;
        g->w->retire_ = g->retire;
        g->w->retire_arg_ = g->retire_arg;
        g->w->first_chunk = g->first_chunk;
        if (g->base &&
            (rc = ana_index_live_at(r, so.from_chunk, g->f, base_live, NULL, g->w)) == -ENOTSUP)
            g->why = ana_index_stackless;
        if (!rc)
            rc = ana_heap_replay_run(&p, r, &so);
    }
    if (rc < 0 && rc != -ENOMEM && rc != -ENOTSUP)
        snprintf(g->err, sizeof(g->err), "%s", fmt_reader_error(r));
    g->w->first_chunk = so.from_chunk;
    g->w->r_ = g->r; /* NULL for a reader closed here */
    ana_map_release(&g->w->live_);
    ana_heap_replay_release(&p);
    if (r != g->r)
        fmt_reader_close(r);
    g->rc = rc;
    return NULL;
}

/* Add range window o's rows and totals to w's. */
static int merge_window(struct ana_window *w, const struct ana_window *o)
{
    for (size_t i = 0; i < o->keys.cap; i++) {
        if (!ana_map_slot_key(&o->keys, i))
            continue;
        const struct ana_window_key *ok = ana_map_slot_val(&o->keys, i);
        struct ana_window_key *k = key_at(w, ok->key, ok->image, ok->tid);
        if (!k)
            return -ENOMEM;
        if (!k->tid)
            k->tid = ok->tid;
        for (int c = 0; c < ANA_NR_WPA; c++) {
            k->c.nr[c] += ok->c.nr[c];
            k->c.bytes[c] += ok->c.bytes[c];
        }
        k->nr_aofi_realloc += ok->nr_aofi_realloc;
    }
    for (uint32_t i = 0; i < o->nr_images; i++) {
        if (!o->image_seen[i])
            continue;
        if (grow_images(w, i))
            return -ENOMEM;
        for (int c = 0; c < ANA_NR_WPA; c++) {
            w->images[i].nr[c] += o->images[i].nr[c];
            w->images[i].bytes[c] += o->images[i].bytes[c];
        }
        w->image_seen[i] = true;
    }
    w->nr_events_read += o->nr_events_read;
    return 0;
}

int ana_window_compute_index(struct ana_window *w, struct fmt_reader *r,
                             const struct ana_window_ranges *rg, struct ana_filter *f,
                             uint64_t t0_ns, uint64_t t1_ns, enum ana_window_by by,
                             ana_progress_fn *progress, void *progress_arg, const char **why,
                             char *err, size_t err_size)
{
    enum { MAX_RANGES = 16 };
    struct wrange g[MAX_RANGES] = {{0}};
    struct ana_window ws[MAX_RANGES] = {{0}};
    pthread_t tid[MAX_RANGES];
    uint32_t start[MAX_RANGES];
    int rc = 0;

    if ((*why = ana_index_refusal(r, f)))
        return -ENOTSUP;
    /* The chunks from the one that reaches t0 to the one that reaches t1. */
    uint32_t first = fmt_reader_find_chunk(r, t0_ns), end = fmt_reader_find_chunk(r, t1_ns) + 1;
    end = end < fmt_reader_nr_chunks(r) ? end : fmt_reader_nr_chunks(r);
    uint64_t min_events = rg->min_range_events ? rg->min_range_events : MIN_EVENTS_PER_RANGE;
    uint64_t most = ana_scan_events(r, first, end) / min_events;
    unsigned nr = rg->retire ? 1 : rg->nr_threads < MAX_RANGES ? rg->nr_threads : MAX_RANGES;
    unsigned n = ana_scan_cut(r, first, end, nr < most ? nr : (unsigned)most, start);
    if (n < 1) {
        n = 1;
        start[0] = first;
    }
    for (unsigned k = 0; k < n; k++) {
        g[k] = (struct wrange){.path = rg->path,
                               .r = k ? NULL : r,
                               .f = f,
                               .t0_ns = t0_ns,
                               .t1_ns = t1_ns,
                               .by = by,
                               .first_chunk = start[k],
                               .end_chunk = k + 1 < n ? start[k + 1] : 0,
                               .base = k == 0,
                               .progress = k ? NULL : progress,
                               .progress_arg = progress_arg,
                               .retire = rg->retire,
                               .retire_arg = rg->retire_arg,
                               .w = k ? &ws[k] : w};
    }
    unsigned started = 1;
    for (; started < n; started++)
        if (pthread_create(&tid[started], NULL, run_wrange, &g[started]))
            break;
    run_wrange(&g[0]);
    for (unsigned k = 1; k < started; k++)
        pthread_join(tid[k], NULL);
    if (started < n)
        rc = -EAGAIN;
    for (unsigned k = 0; k < n && !rc; k++) {
        if ((rc = g[k].rc)) {
            *why = g[k].why;
            snprintf(err, err_size, "%s", g[k].err);
        }
    }
    for (unsigned k = 1; k < n; k++) {
        if (!rc)
            rc = merge_window(w, &ws[k]);
        ana_window_release(&ws[k]);
    }
    w->r_ = r;
    return rc;
}

void ana_window_release(struct ana_window *w)
{
    ana_heaps_release(&w->heaps);
    ana_map_release(&w->keys);
    ana_map_release(&w->live_);
    free(w->images);
    free(w->image_seen);
    memset(w, 0, sizeof(*w));
}

static int cmp_key(const void *x, const void *y)
{
    const struct ana_window_key *a = x, *b = y;

    if (a->image != b->image)
        return a->image < b->image ? -1 : 1;
    return (a->key > b->key) - (a->key < b->key);
}

long ana_window_keys(const struct ana_window *w, struct ana_window_key **out)
{
    struct ana_window_key *v = malloc((w->keys.nr ? w->keys.nr : 1) * sizeof(*v));
    long n = 0;

    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < w->keys.cap; i++)
        if (ana_map_slot_key(&w->keys, i))
            v[n++] = *(const struct ana_window_key *)ana_map_slot_val(&w->keys, i);
    /* In key order, not the map's: the same however the keys were met
     * (ranges of ana_window_compute_index), so ties in a sort of them
     * (the tree's children) come out alike. */
    qsort(v, (size_t)n, sizeof(*v), cmp_key);
    *out = v;
    return n;
}
