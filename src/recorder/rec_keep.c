/* SPDX-License-Identifier: MIT */
/* record --keep-last: exact segments beside the aggregated trace (rec_keep.h). */
#include "recorder/rec_keep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder/rec_internal.h"
#include "util/util_array.h"
#include "util/util_outfile.h"

/* Segments kept: the one being written and the two before it. */
#define KEEP_SEGMENTS 3

/* An event of the run's life still in force (a process, a thread or its
 * name, a module, a pool or Windows heap), copied with its strings. */
struct keep_held {
    struct fmt_event ev;
    char *str, *str2, *path;
    struct fmt_module *mod;
};

/* What a new segment begins with, sorted by time: which source, which. */
enum keep_src { SRC_HELD, SRC_MAP, SRC_BLOCK };
struct keep_item {
    uint64_t ts;
    uint32_t src; /* enum keep_src */
    uint32_t idx;
};

struct rec_keep {
    struct fmt_writer *main;
    struct rec_agg *agg;
    struct fmt_trace_info info;
    struct fmt_writer_options wopt;
    char *dir;
    char *hostname; /* the info's own copy: the session's is on its stack */
    uint64_t span, next_at;
    uint64_t unit;        /* the writers' time unit */
    struct fmt_writer *w; /* NULL: none open (stopped, or finished) */
    int fd;
    uint32_t nr_stacks; /* the main writer's stacks the segment has */
    struct keep_held *held;
    size_t nr_held, cap_held;
    /* A new segment's beginning, while it is gathered. */
    struct keep_item *items;
    size_t nr_items, cap_items;
    struct fmt_writer_map *maps;
    size_t nr_maps, cap_maps;
    uint8_t *running; /* by image: a PROCESS_START is held */
    uint32_t cap_running;
    struct rec_keep_stats st;
};

static void held_clear(struct keep_held *h)
{
    free(h->str);
    free(h->str2);
    free(h->path);
    free(h->mod);
}

static char *dup_bytes(const char *s, uint32_t len, int *bad)
{
    char *d;

    if (!s)
        return NULL;
    if (!(d = malloc((size_t)len + 1))) {
        *bad = 1;
        return NULL;
    }
    memcpy(d, s, len);
    d[len] = 0;
    return d;
}

static int held_add(struct rec_keep *k, const struct fmt_event *ev)
{
    struct keep_held h = {.ev = *ev};
    int bad = 0;

    h.ev.str = h.str = dup_bytes(ev->str, ev->str_len, &bad);
    h.ev.str2 = h.str2 = dup_bytes(ev->str2, ev->str2_len, &bad);
    if (ev->module && !bad) {
        if ((h.mod = malloc(sizeof(*h.mod)))) {
            *h.mod = *ev->module;
            h.mod->path = h.path = dup_bytes(ev->module->path, ev->module->path_len, &bad);
        }
        bad |= !h.mod;
        h.ev.module = h.mod;
    }
    if (bad || UTIL_ARRAY_RESERVE(k->held, k->cap_held, k->nr_held + 1, 64)) {
        held_clear(&h);
        return -ENOMEM;
    }
    k->held[k->nr_held++] = h;
    return 0;
}

/* Drop the held events match says are over. */
typedef int keep_match_fn(const struct fmt_event *held, const struct fmt_event *ev);
static void held_drop(struct rec_keep *k, const struct fmt_event *ev, keep_match_fn *match)
{
    size_t o = 0;

    for (size_t i = 0; i < k->nr_held; i++) {
        if (match(&k->held[i].ev, ev))
            held_clear(&k->held[i]);
        else
            k->held[o++] = k->held[i];
    }
    k->nr_held = o;
}

static int same_image(const struct fmt_event *h, const struct fmt_event *ev)
{
    return h->image == ev->image;
}

static int same_thread(const struct fmt_event *h, const struct fmt_event *ev)
{
    return (h->kind == FMT_EV_THREAD_START || h->kind == FMT_EV_THREAD_NAME) &&
           h->image == ev->image && h->thread == ev->thread;
}

static int same_name(const struct fmt_event *h, const struct fmt_event *ev)
{
    return h->kind == FMT_EV_THREAD_NAME && h->image == ev->image && h->thread == ev->thread;
}

static int same_module(const struct fmt_event *h, const struct fmt_event *ev)
{
    return h->kind == FMT_EV_MODULE_LOAD && h->image == ev->image && h->module &&
           h->module->base == ev->addr;
}

/* A pool by its handle (FMT_EVF_POOL, arg[1]), a Windows heap by its
 * address. */
static int same_heap(const struct fmt_event *h, const struct fmt_event *ev)
{
    if (h->kind != FMT_EV_HEAP_CREATE || h->image != ev->image ||
        (h->flags & FMT_EVF_POOL) != (ev->flags & FMT_EVF_POOL))
        return 0;
    return (ev->flags & FMT_EVF_POOL) ? h->arg[1] == ev->arg[1] : h->addr == ev->addr;
}

/* What the event changes in the run's life. */
static int held_follow(struct rec_keep *k, const struct fmt_event *ev)
{
    switch (ev->kind) {
    case FMT_EV_PROCESS_START:
    case FMT_EV_THREAD_START:
    case FMT_EV_MODULE_LOAD:
        return held_add(k, ev);
    case FMT_EV_HEAP_CREATE:
        return (ev->flags & FMT_EVF_FAILED) ? 0 : held_add(k, ev);
    case FMT_EV_THREAD_NAME:
        held_drop(k, ev, same_name);
        return held_add(k, ev);
    case FMT_EV_PROCESS_EXIT:
        held_drop(k, ev, same_image);
        return 0;
    case FMT_EV_THREAD_EXIT:
        held_drop(k, ev, same_thread);
        return 0;
    case FMT_EV_MODULE_UNLOAD:
        held_drop(k, ev, same_module);
        return 0;
    case FMT_EV_HEAP_DESTROY:
        held_drop(k, ev, same_heap);
        return 0;
    }
    return 0;
}

static int item_add(struct rec_keep *k, uint64_t ts, uint32_t src, uint32_t idx)
{
    if (UTIL_ARRAY_RESERVE(k->items, k->cap_items, k->nr_items + 1, 4096))
        return -ENOMEM;
    k->items[k->nr_items++] = (struct keep_item){ts, src, idx};
    return 0;
}

/* The writer and the aggregator keep what ended processes left (their
 * leaks): a segment carries the running images' alone. */
static int running(const struct rec_keep *k, uint32_t image)
{
    return image < k->cap_running && k->running[image];
}

static int mark_running(struct rec_keep *k)
{
    if (k->cap_running)
        memset(k->running, 0, k->cap_running);
    for (size_t i = 0; i < k->nr_held; i++) {
        uint32_t im = k->held[i].ev.image;

        if (k->held[i].ev.kind != FMT_EV_PROCESS_START)
            continue;
        if (UTIL_ARRAY_RESERVE_ZERO(k->running, k->cap_running, (size_t)im + 1, 64))
            return -ENOMEM;
        k->running[im] = 1;
    }
    return 0;
}

static int gather_map(void *arg, const struct fmt_writer_map *m)
{
    struct rec_keep *k = arg;

    if (!running(k, m->who.image))
        return 0;
    if (UTIL_ARRAY_RESERVE(k->maps, k->cap_maps, k->nr_maps + 1, 256))
        return -ENOMEM;
    k->maps[k->nr_maps] = *m;
    return item_add(k, m->ts_ns, SRC_MAP, (uint32_t)k->nr_maps++);
}

static int gather_block(void *arg, uint32_t blk, uint64_t ts, uint32_t image)
{
    struct rec_keep *k = arg;

    return running(k, image) ? item_add(k, ts, SRC_BLOCK, blk) : 0;
}

/* By time; at one time a process before its threads, modules, heaps and
 * blocks (held events come first and keep their order). */
static int item_cmp(const void *pa, const void *pb)
{
    const struct keep_item *a = pa, *b = pb;

    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static void item_event(const struct rec_keep *k, const struct keep_item *it, struct fmt_event *ev)
{
    const struct fmt_writer_map *m;

    switch (it->src) {
    case SRC_HELD:
        *ev = k->held[it->idx].ev;
        return;
    case SRC_MAP:
        /* Mapped before the segment began: a snapshot, as at an attach. */
        m = &k->maps[it->idx];
        *ev = (struct fmt_event){.ts_ns = m->ts_ns,
                                 .kind = FMT_EV_MMAP,
                                 .origin = FMT_ORIGIN_SNAPSHOT,
                                 .image = m->who.image,
                                 .thread = m->who.thread,
                                 .pid = m->who.pid,
                                 .tid = m->who.tid,
                                 .stack = m->stack,
                                 .addr = m->addr,
                                 .size = m->size,
                                 .arg = {m->prot, m->flags, (uint64_t)-1, 0}};
        return;
    default:
        /* Live before the segment began: not a call of it (the model
         * counts it apart, the stepper decides no temporary by it). */
        rec_agg_block_event(k->agg, it->idx, ev);
        ev->origin = FMT_ORIGIN_SNAPSHOT;
        return;
    }
}

/* Write the run's state now into the new segment, oldest first. */
static int carry(struct rec_keep *k)
{
    int rc;

    k->nr_items = k->nr_maps = 0;
    if ((rc = mark_running(k)))
        return rc;
    for (size_t i = 0; i < k->nr_held; i++)
        if ((rc = item_add(k, k->held[i].ev.ts_ns, SRC_HELD, (uint32_t)i)))
            return rc;
    if ((rc = fmt_writer_live_maps(k->main, gather_map, k)) ||
        (rc = rec_agg_live_each(k->agg, gather_block, k)))
        return rc;
    if (k->nr_items) /* the first segment's beginning holds nothing: no array */
        qsort(k->items, k->nr_items, sizeof(*k->items), item_cmp);
    for (size_t i = 0; i < k->nr_items; i++) {
        struct fmt_event ev;

        item_event(k, &k->items[i], &ev);
        if ((rc = fmt_writer_event(k->w, &ev)))
            return rc;
    }
    k->st.carried = k->nr_items;
    return 0;
}

static void seg_path(const struct rec_keep *k, uint32_t nr, char *out, size_t size)
{
    snprintf(out, size, "%s/seg-%06u.mscr", k->dir, nr);
}

/* Finish the open segment (0 or -errno). */
static int seg_close(struct rec_keep *k)
{
    int rc = 0;

    if (!k->w)
        return 0;
    rc = fmt_writer_finish(k->w);
    fmt_writer_destroy(k->w);
    k->w = NULL;
    if (close(k->fd) != 0 && rc == 0)
        rc = -errno;
    k->fd = -1;
    return rc;
}

/* The next segment, from `from` on: the one before finished, the oldest
 * beyond KEEP_SEGMENTS removed. */
static int seg_open(struct rec_keep *k, uint64_t from)
{
    char path[4096];
    struct util_outfile made;
    int rc = seg_close(k);

    if (rc)
        return rc;
    uint32_t nr = ++k->st.nr_segments;
    if (nr > KEEP_SEGMENTS) {
        seg_path(k, nr - KEEP_SEGMENTS, path, sizeof(path));
        unlink(path);
        k->st.first_kept = nr - KEEP_SEGMENTS + 1;
    }
    seg_path(k, nr, path, sizeof(path));
    k->fd = util_outfile_open(path, O_WRONLY, REC_TRACE_MODE, &made);
    if (k->fd < 0)
        return k->fd;
    k->info.segment_nr = nr;
    k->info.segment_from_ns = from;
    k->nr_stacks = 0;
    rc = fmt_writer_create(&k->w, k->fd, &k->info, &k->wopt);
    if (rc) {
        close(k->fd);
        k->fd = -1;
        return rc;
    }
    rc = fmt_writer_copy_stacks(k->w, k->main);
    k->nr_stacks = fmt_writer_nr_stacks(k->main);
    return rc ?: carry(k);
}

/* Remove the segments an earlier recording left in the folder. */
static void clear_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    unsigned nr;
    char tail;

    while (d && (e = readdir(d)))
        if (sscanf(e->d_name, "seg-%u.mscr%c", &nr, &tail) == 1 &&
            strlen(e->d_name) == strlen("seg-000000.mscr"))
            unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
}

int rec_keep_new(struct rec_keep **out, const char *dir, const struct fmt_trace_info *info,
                 const struct fmt_writer_options *wopt, uint64_t keep_ns, uint64_t period_ns,
                 struct fmt_writer *main, struct rec_agg *agg)
{
    struct util_outfile made;
    struct rec_keep *k;
    int rc;

    *out = NULL;
    if (!period_ns || keep_ns < period_ns)
        return -EINVAL;
    if ((rc = util_outfile_dir(dir, 0700, &made)))
        return rc;
    clear_dir(dir);
    if (!(k = calloc(1, sizeof(*k))) || !(k->dir = strdup(dir)) ||
        (info->hostname && !(k->hostname = strdup(info->hostname)))) {
        if (k)
            free(k->dir);
        free(k);
        if (made.created)
            rmdir(dir);
        return -ENOMEM;
    }
    k->main = main;
    k->agg = agg;
    k->info = *info;
    k->info.hostname = k->hostname;
    k->info.aggregate_ns = k->info.aggregate_from_ns = 0;
    k->info.keep_last_ns = keep_ns;
    k->wopt = *wopt;
    k->wopt.aggregate = 0;
    k->wopt.reach = 0; /* classes name the whole run's serials */
    /* Two spans hold D; a span ends at a cut, where the whole run's writer
     * has every mapping call before it (the aggregator holds an interval's
     * events back until its cut). */
    k->span = (keep_ns / 2 + period_ns - 1) / period_ns * period_ns;
    k->unit = fmt_writer_time_unit(main);
    k->fd = -1;
    rec_agg_keep_fields(agg);
    k->next_at = k->span;
    if ((rc = seg_open(k, 0))) {
        /* Take back what the failed start made: the first segment (the
         * folder was emptied of segments above), and the folder. */
        char path[PATH_MAX];
        seg_path(k, 0, path, sizeof(path));
        rec_keep_free(k);
        unlink(path);
        if (made.created)
            rmdir(dir);
        return rc;
    }
    *out = k;
    return 0;
}

/* Stop writing segments at the first error; the run's trace goes on. */
static int keep_fail(struct rec_keep *k, int rc, uint64_t ts)
{
    if (rc && !k->st.err) {
        k->st.err = rc;
        k->st.err_ns = ts;
        seg_close(k);
    }
    return rc;
}

/* Ready for an event at ts with stack: the segment of its time open, the
 * stack defined in it. */
static int keep_ready(struct rec_keep *k, uint64_t ts, uint32_t stack)
{
    if (k->st.err || !k->w)
        return k->st.err ? k->st.err : -EBADF;
    /* The next segment once ts's tick (its time as the writer rounds it)
     * is past the boundary: a segment from T holds the events a reader
     * dates after T, what it carries in is every event up to T, and the
     * aggregator's cut at T (made first: the whole run's writer then has
     * every mapping call up to T) is the same moment (rec_agg_cut_due). */
    if (ts >= k->next_at && ts - k->next_at >= k->unit) {
        uint64_t from = (ts - k->unit) / k->span * k->span, last;

        k->next_at = from + k->span;
        if (keep_fail(k, rec_agg_advance(k->agg, ts, &last), ts) ||
            keep_fail(k, seg_open(k, from), ts))
            return k->st.err;
    }
    if (stack > k->nr_stacks) {
        k->nr_stacks = fmt_writer_nr_stacks(k->main);
        return keep_fail(k, fmt_writer_copy_stacks(k->w, k->main), ts);
    }
    return 0;
}

int rec_keep_heap(struct rec_keep *k, const struct fmt_writer_who *who, unsigned kind,
                  uint64_t ts_ns, uint64_t addr, uint64_t size, uint32_t stack)
{
    int rc = keep_ready(k, ts_ns, stack);

    return rc ?: keep_fail(k, fmt_writer_heap(k->w, who, kind, ts_ns, addr, size, stack), ts_ns);
}

int rec_keep_realloc(struct rec_keep *k, const struct fmt_writer_who *who, unsigned flags,
                     uint64_t ts_ns, uint64_t old_addr, uint64_t addr, uint64_t size,
                     uint32_t stack)
{
    int rc = keep_ready(k, ts_ns, stack);

    return rc
               ?: keep_fail(
                      k, fmt_writer_realloc(k->w, who, flags, ts_ns, old_addr, addr, size, stack),
                      ts_ns);
}

int rec_keep_event(struct rec_keep *k, const struct fmt_event *ev)
{
    int rc = keep_ready(k, ev->ts_ns, ev->stack);

    if (rc)
        return rc;
    /* The new segment's beginning is of the events before this one: the
     * life it changes is followed after it is written. */
    if ((rc = fmt_writer_event(k->w, ev)))
        return keep_fail(k, rc, ev->ts_ns);
    return keep_fail(k, held_follow(k, ev), ev->ts_ns);
}

int rec_keep_flush(struct rec_keep *k)
{
    return k->w ? keep_fail(k, fmt_writer_flush(k->w), 0) : 0;
}

int rec_keep_finish(struct rec_keep *k)
{
    return keep_fail(k, seg_close(k), 0);
}

void rec_keep_get_stats(const struct rec_keep *k, struct rec_keep_stats *st)
{
    *st = k->st;
    if (!st->first_kept)
        st->first_kept = st->nr_segments ? 1 : 0;
}

void rec_keep_free(struct rec_keep *k)
{
    if (!k)
        return;
    if (k->w)
        fmt_writer_destroy(k->w);
    if (k->fd >= 0)
        close(k->fd);
    for (size_t i = 0; i < k->nr_held; i++)
        held_clear(&k->held[i]);
    free(k->held);
    free(k->items);
    free(k->maps);
    free(k->running);
    free(k->hostname);
    free(k->dir);
    free(k);
}
