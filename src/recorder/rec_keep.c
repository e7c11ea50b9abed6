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

/* A segment on disk: its number and its start (trace time). */
struct keep_seg {
    uint32_t nr;
    uint64_t from;
};

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
    uint64_t keep_ns, span, next_at;
    uint64_t unit;         /* the writers' time unit */
    uint64_t last_ts;      /* the latest event's time (not rounded: no division per event) */
    struct keep_seg *segs; /* on disk, oldest first; the last one being written */
    size_t nr_segs, cap_segs;
    struct fmt_writer *w; /* NULL: none open (stopped, or finished) */
    int fd;
    uint32_t nr_stacks; /* the main writer's stacks the segment has */
    struct keep_held *held;
    size_t nr_held, cap_held;
    /* A new segment's beginning, while it is gathered. */
    struct keep_item *items, *sorted; /* sorted: the radix sort's other half */
    size_t nr_items, cap_items, cap_sorted;
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
    keep_match_fn *ended = NULL; /* which held events this one ends */

    /* A switch, not a table walked: this runs for every event kept. */
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
        ended = same_image;
        break;
    case FMT_EV_THREAD_EXIT:
        ended = same_thread;
        break;
    case FMT_EV_MODULE_UNLOAD:
        ended = same_module;
        break;
    case FMT_EV_HEAP_DESTROY:
        ended = same_heap;
        break;
    }
    if (ended)
        held_drop(k, ev, ended);
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

/* Sort v[0..n) stably by the key (the time, or the index), in place: a
 * radix sort, a byte a pass, skipping the bytes all keys share. A carry
 * sorts every live block: with a million, qsort's comparisons took 690
 * instructions a block, half of what a segment's beginning cost
 * (bench/notes/aggregate.md, "The flight recorder"). */
static void item_radix(struct keep_item *v, struct keep_item *tmp, size_t n, int by_ts)
{
    struct keep_item *from = v, *to = tmp, *swap;
    uint64_t most = 0;

    for (size_t i = 0; i < n; i++)
        most |= by_ts ? v[i].ts : v[i].idx;
    for (unsigned shift = 0; shift < 64 && most >> shift; shift += 8) {
        size_t count[257] = {0};

        for (size_t i = 0; i < n; i++)
            count[((by_ts ? from[i].ts : from[i].idx) >> shift & 0xff) + 1]++;
        if (count[((by_ts ? from[0].ts : from[0].idx) >> shift & 0xff) + 1] == n)
            continue; /* one byte value: the order stays */
        for (unsigned b = 1; b < 257; b++)
            count[b] += count[b - 1];
        for (size_t i = 0; i < n; i++)
            to[count[(by_ts ? from[i].ts : from[i].idx) >> shift & 0xff]++] = from[i];
        swap = from;
        from = to;
        to = swap;
    }
    if (from != v)
        memcpy(v, from, n * sizeof(*v));
}

/* By time; at one time a process before its threads, modules, heaps and
 * blocks (held events come first and keep their order), then mappings,
 * then blocks by index: the held events and mappings are gathered in that
 * order, the blocks (first_block on) in the aggregator's and sorted by
 * index first. */
static int items_sort(struct rec_keep *k, size_t first_block)
{
    if (UTIL_ARRAY_RESERVE(k->sorted, k->cap_sorted, k->nr_items, 4096))
        return -ENOMEM;
    item_radix(k->items + first_block, k->sorted, k->nr_items - first_block, 0);
    item_radix(k->items, k->sorted, k->nr_items, 1);
    return 0;
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
    if ((rc = fmt_writer_live_maps(k->main, gather_map, k)))
        return rc;
    size_t first_block = k->nr_items;
    if ((rc = rec_agg_live_each(k->agg, gather_block, k)) ||
        (k->nr_items && (rc = items_sort(k, first_block))))
        return rc;
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

/* Where a segment is begun: it takes its name once its header is on disk,
 * so a recorder killed in between leaves no empty seg-*.mscr, which no
 * reader could read (the next recording's clear_dir removes this one). */
static void seg_new_path(const struct rec_keep *k, uint32_t nr, char *out, size_t size)
{
    snprintf(out, size, "%s/.seg-%06u.mscr.new", k->dir, nr);
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

/* A time as the writers round it, as a reader of the segments sees it. */
static uint64_t keep_tick(const struct rec_keep *k, uint64_t ts)
{
    return ts - ts % k->unit;
}

/* Remove the oldest segments while the ones after them hold keep_ns up to
 * now (what they hold is on disk: finished, or flushed up to now), as a
 * reader dates it. */
static void seg_trim(struct rec_keep *k, uint64_t now)
{
    char path[4096];
    size_t n = 0;

    now = keep_tick(k, now);
    while (k->nr_segs - n >= 2 && now >= k->segs[n + 1].from &&
           now - k->segs[n + 1].from >= k->keep_ns) {
        seg_path(k, k->segs[n].nr, path, sizeof(path));
        unlink(path);
        n++;
    }
    if (!n)
        return;
    memmove(k->segs, k->segs + n, (k->nr_segs - n) * sizeof(*k->segs));
    k->nr_segs -= n;
}

/* The next segment, from `from` on: the one before finished, and those no
 * longer needed removed (the finished ones hold every event up to from). */
static int seg_open(struct rec_keep *k, uint64_t from)
{
    char path[4096], begun[4096];
    struct util_outfile made;
    int rc = seg_close(k);

    if (rc)
        return rc;
    if (UTIL_ARRAY_RESERVE(k->segs, k->cap_segs, k->nr_segs + 1, 8))
        return -ENOMEM;
    seg_trim(k, from);
    uint32_t nr = ++k->st.nr_segments;
    seg_new_path(k, nr, begun, sizeof(begun));
    k->fd = util_outfile_open(begun, O_WRONLY, REC_TRACE_MODE, &made);
    if (k->fd < 0)
        return k->fd;
    k->info.segment_nr = nr;
    k->info.segment_from_ns = from;
    k->nr_stacks = 0;
    rc = fmt_writer_create(&k->w, k->fd, &k->info, &k->wopt);
    seg_path(k, nr, path, sizeof(path));
    if (!rc && rename(begun, path) != 0)
        rc = -errno;
    if (rc) {
        fmt_writer_destroy(k->w);
        k->w = NULL;
        close(k->fd);
        k->fd = -1;
        unlink(begun);
        return rc;
    }
    k->segs[k->nr_segs++] = (struct keep_seg){nr, from};
    rc = fmt_writer_copy_stacks(k->w, k->main);
    k->nr_stacks = fmt_writer_nr_stacks(k->main);
    return rc ?: carry(k);
}

/* Is name BEFORE, six digits, AFTER: a segment's name (seg_path,
 * seg_new_path)? */
static int seg_named(const char *name, const char *before, const char *after)
{
    size_t n = strlen(before);

    if (strncmp(name, before, n) != 0)
        return 0;
    for (size_t i = n; i < n + 6; i++)
        if (name[i] < '0' || name[i] > '9')
            return 0;
    return strcmp(name + n + 6, after) == 0;
}

/* Remove the segments an earlier recording left in the folder (and one
 * begun but not named). */
static void clear_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    while (d && (e = readdir(d)))
        if (seg_named(e->d_name, "seg-", ".mscr") || seg_named(e->d_name, ".seg-", ".mscr.new"))
            unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
}

int rec_keep_new(struct rec_keep **out, const char *dir, const struct fmt_trace_info *info,
                 const struct fmt_writer_options *wopt, uint64_t keep_ns, uint64_t period_ns,
                 struct fmt_writer *main, struct rec_agg *agg, char *why, size_t why_size)
{
    struct util_outfile made;
    struct rec_keep *k;
    int rc;

    *out = NULL;
    if (!period_ns || keep_ns < period_ns) {
        snprintf(why, why_size, "%s", strerror(EINVAL));
        return -EINVAL;
    }
    /* Another user's folder, a link or a file planted at the name is
     * refused naming its owner, as every output is (util_outfile.h). */
    if ((rc = util_outfile_dir(dir, 0700, &made))) {
        snprintf(why, why_size, "%s", made.why);
        return rc;
    }
    clear_dir(dir);
    if (!(k = calloc(1, sizeof(*k))) || !(k->dir = strdup(dir)) ||
        (info->hostname && !(k->hostname = strdup(info->hostname)))) {
        if (k)
            free(k->dir);
        free(k);
        if (made.created)
            rmdir(dir);
        snprintf(why, why_size, "%s", strerror(ENOMEM));
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
    /* REC_KEEP_PARTS spans hold D (rounded down: the most kept is D and
     * one span); a span ends at a cut, where the whole run's writer has
     * every mapping call before it (the aggregator holds an interval's
     * events back until its cut). */
    k->keep_ns = keep_ns;
    k->span = keep_ns / REC_KEEP_PARTS / period_ns * period_ns;
    if (!k->span)
        k->span = period_ns;
    k->unit = fmt_writer_time_unit(main);
    k->fd = -1;
    rec_agg_keep_fields(agg);
    k->next_at = k->span;
    if ((rc = seg_open(k, 0))) {
        /* Take back what the failed start made: the first segment (the
         * folder was emptied of segments above), and the folder. */
        char path[PATH_MAX];
        seg_path(k, 1, path, sizeof(path));
        rec_keep_free(k);
        unlink(path);
        if (made.created)
            rmdir(dir);
        snprintf(why, why_size, "%s", strerror(-rc));
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

/* Whether time ts (an event's, or the merge's watermark) begins the next
 * segment: its tick (its time as the writer rounds it) is past the
 * boundary. A segment from T holds the events a reader dates after T, what
 * it carries in is every event up to T, and the aggregator's cut at T
 * (made first: the whole run's writer then has every mapping call up to
 * T) is the same moment (rec_agg_cut_due). */
static inline int keep_due(const struct rec_keep *k, uint64_t ts)
{
    return ts >= k->next_at && ts - k->next_at >= k->unit;
}

/* The next segments, up to the one from the last boundary before ts's
 * tick. Nothing happened between the boundary due and ts (an event there
 * would have begun its segment), so a boundary passed meanwhile (a quiet
 * program, a recorder behind it) begins a segment of that silence: every
 * segment is one span long, which bounds what is kept. Of a long silence,
 * only the segments that the trim could keep are made. */
__attribute__((noinline, cold)) static int keep_next(struct rec_keep *k, uint64_t ts)
{
    uint64_t to = (ts - k->unit) / k->span * k->span, last;
    uint64_t most = (k->keep_ns + k->span - 1) / k->span * k->span;
    uint64_t from = to - k->next_at > most ? to - most : k->next_at;

    k->next_at = to + k->span;
    if (keep_fail(k, rec_agg_advance(k->agg, ts, &last), ts))
        return k->st.err;
    for (; from <= to; from += k->span)
        if (keep_fail(k, seg_open(k, from), ts))
            return k->st.err;
    return 0;
}

/* Ready for an event at ts with stack: the segment of its time open, the
 * stack defined in it. */
static int keep_ready(struct rec_keep *k, uint64_t ts, uint32_t stack)
{
    if (k->st.err || !k->w)
        return k->st.err ? k->st.err : -EBADF;
    if (keep_due(k, ts) && keep_next(k, ts))
        return k->st.err;
    /* The merge gives events in time order: the latest is the last. */
    k->last_ts = ts;
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

/* Whether a traced process runs (its PROCESS_START held). */
static int any_running(const struct rec_keep *k)
{
    for (size_t i = 0; i < k->nr_held; i++)
        if (k->held[i].ev.kind == FMT_EV_PROCESS_START)
            return 1;
    return 0;
}

int rec_keep_advance(struct rec_keep *k, uint64_t ts_ns)
{
    if (k->st.err || !k->w)
        return k->st.err ? k->st.err : -EBADF;
    /* Only while a process runs: the recorder's own last moments after the
     * program ended (reaping, draining) are no history of it, and segments
     * of them would push the program's last D out. */
    return keep_due(k, ts_ns) && any_running(k) ? keep_next(k, ts_ns) : 0;
}

int rec_keep_flush(struct rec_keep *k)
{
    int rc;

    if (!k->w)
        return 0;
    if ((rc = keep_fail(k, fmt_writer_flush(k->w), k->last_ts)))
        return rc;
    seg_trim(k, k->last_ts);
    return 0;
}

int rec_keep_finish(struct rec_keep *k)
{
    int rc = keep_fail(k, seg_close(k), k->last_ts);

    if (!rc)
        seg_trim(k, k->last_ts);
    return rc;
}

void rec_keep_get_stats(const struct rec_keep *k, struct rec_keep_stats *st)
{
    *st = k->st;
    st->segment_ns = k->span;
    st->nr_kept = (uint32_t)k->nr_segs;
    st->first_kept = k->nr_segs ? k->segs[0].nr : 0;
    st->kept_from_ns = k->nr_segs ? k->segs[0].from : 0;
    /* A quiet program's last segment may hold no event of its own: it
     * holds the time from its start all the same. */
    st->kept_to_ns = keep_tick(k, k->last_ts);
    if (k->nr_segs && k->segs[k->nr_segs - 1].from > st->kept_to_ns)
        st->kept_to_ns = k->segs[k->nr_segs - 1].from;
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
    free(k->sorted);
    free(k->maps);
    free(k->segs);
    free(k->running);
    free(k->hostname);
    free(k->dir);
    free(k);
}
