/* SPDX-License-Identifier: MIT */
/* WPA window classification with seeking (see ana_window.h). */
#include "analysis/model/ana_window.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_aggregate.h"
#include "analysis/model/ana_heap_replay.h"
#include "analysis/model/ana_histogram.h"
#include "analysis/model/ana_index.h"
#include "analysis/model/ana_step.h"

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

/* Add a block of size bytes, standing for n blocks (fmt_event_count), to
 * class cls under key. */
static int count(struct ana_window *w, uint64_t key, uint32_t image, uint32_t tid, int cls,
                 uint64_t size, uint64_t n)
{
    struct ana_window_key *k;
    int created;

    if (grow_images(w, image))
        return -ENOMEM;
    /* Threads and size classes are per image: fold the image into the
     * map key so that rows of different processes stay apart. */
    uint64_t mk = w->by == ANA_WINDOW_BY_STACK ? key + 1 : ((uint64_t)image << 40 | key) + 1;
    if (!(k = ana_map_put(&w->keys, mk, &created)))
        return -ENOMEM;
    if (created) {
        k->key = key;
        k->image = image;
        k->tid = tid;
    }
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

static int on_step(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    struct ana_window *w = arg;
    int rc;

    if (ev->ts_ns > w->t1_ns)
        return 0; /* a pass that reads on for other consumers */
    w->nr_events_read++;
    if (st->batch)
        return batch_row(w, ev);
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
            /* Allocated inside: it was counted AIFO, it is AIFI. */
            struct ana_window_key *kk = ana_map_get(
                &w->keys,
                w->by == ANA_WINDOW_BY_STACK ? k + 1 : ((uint64_t)ev->image << 40 | k) + 1);
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
        if (grow_images(w, v->image))
            return -ENOMEM;
        w->images[v->image].nr[ANA_AOFO] += (uint64_t)v->blocks;
        w->images[v->image].bytes[ANA_AOFO] += (uint64_t)v->bytes;
        w->image_seen[v->image] = true;
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
    return live_add(arg, stack, image, bytes, blocks);
}

int ana_window_compute_index(struct ana_window *w, struct fmt_reader *r, struct ana_filter *f,
                             uint64_t t0_ns, uint64_t t1_ns, enum ana_window_by by,
                             ana_progress_fn *progress, void *progress_arg, const char **why)
{
    struct ana_heap_replay p;
    struct ana_scan_options so;
    int rc;

    if ((*why = ana_index_refusal(r, f)))
        return -ENOTSUP;
    /* Partial: frees of blocks from before the first chunk read end them
     * by their facts, as a range of ana_pmodel.c does. */
    ana_heap_replay_init(&p, &(struct ana_step_options){.filter = f, .partial = true});
    ana_scan_options_init(&so);
    so.progress = progress;
    so.progress_arg = progress_arg;
    so.range = true; /* the chunks outside are not decoded */
    if (!(rc = ana_window_subscribe(w, &p, r, t0_ns, t1_ns, by))) {
        so.from_chunk = fmt_reader_find_chunk(r, w->t0_ns);
        so.until_ns = w->t1_ns;
        if ((rc = ana_index_live_at(r, so.from_chunk, f, base_live, w)) == -ENOTSUP)
            *why = ana_index_stackless;
        if (!rc)
            rc = ana_heap_replay_run(&p, r, &so);
    }
    w->first_chunk = so.from_chunk;
    ana_map_release(&w->live_);
    ana_heap_replay_release(&p);
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

long ana_window_keys(const struct ana_window *w, struct ana_window_key **out)
{
    struct ana_window_key *v = malloc((w->keys.nr ? w->keys.nr : 1) * sizeof(*v));
    long n = 0;

    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < w->keys.cap; i++)
        if (ana_map_slot_key(&w->keys, i))
            v[n++] = *(const struct ana_window_key *)ana_map_slot_val(&w->keys, i);
    *out = v;
    return n;
}
