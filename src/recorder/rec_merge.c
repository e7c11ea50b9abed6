/* SPDX-License-Identifier: MIT */
/* The time-ordered merge: every ring is a stream sorted by time; the
 * watermark says how far all of them are complete; a heap of streams hands
 * the writer events in order. docs/protocol.md gives the argument. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "recorder/rec_internal.h"
#include "util/util_array.h"

/* An absolute time as the trace's: relative to its start, never going back. */
static inline uint64_t rec_trace_ts(struct rec_session *s, uint64_t abs_ts)
{
    uint64_t rel = abs_ts > s->start_mono_ns ? abs_ts - s->start_mono_ns : 0;

    if (rel < s->last_emitted_ns)
        rel = s->last_emitted_ns;
    s->last_emitted_ns = rel;
    return rel;
}

/* record --max-size: switch to aggregating once the trace's size reaches
 * SIZE less the largest growth seen between two checks (a round's). The
 * size counts the chunk being built too, at the bytes an event took in the
 * chunks written (2 before the first: a storm's most), since a chunk holds
 * up to 2^19 events: counting the bytes on disk alone, a trace asked for
 * 64K switched past 1.5 MB. Near SIZE the chunk is written to know. */
static void rec_merge_max_size(struct rec_session *s)
{
    struct fmt_writer_stats st;

    if (!s->opt.max_size || !rec_agg_exact_now(s->agg))
        return;
    fmt_writer_get_stats(s->w, &st);
    uint64_t flushed = st.nr_events - st.pending;
    double per_event = flushed ? (double)st.bytes_written / (double)flushed : 2.0;
    uint64_t size = st.bytes_written + (uint64_t)(per_event * (double)st.pending);
    if (size > s->max_size_seen && size - s->max_size_seen > s->max_size_step)
        s->max_size_step = size - s->max_size_seen;
    s->max_size_seen = size;
    if (size + s->max_size_step < s->opt.max_size)
        return;
    /* Near SIZE: the chunk written, the size known, not estimated (the
     * guess before the first chunk is a storm's, most traces take less),
     * and the growth seen scaled as the estimate was off. */
    uint64_t before = st.bytes_written;
    if (st.pending && fmt_writer_flush(s->w) == 0) {
        fmt_writer_get_stats(s->w, &st);
        if (size > before)
            s->max_size_step =
                (uint64_t)((double)s->max_size_step * (double)(st.bytes_written - before) /
                           (double)(size - before));
        size = s->max_size_seen = st.bytes_written;
    }
    if (size + s->max_size_step >= s->opt.max_size)
        rec_agg_switch(s->agg);
}

/* Under --aggregate: every event before limit is given, so the cuts up to
 * it are made (a quiet program's interval is written without waiting for
 * its next event), and what comes later is not dated before the last. */
static void rec_merge_advance(struct rec_session *s, uint64_t limit)
{
    uint64_t last;

    if (!s->agg || s->write_err)
        return;
    rec_merge_max_size(s);
    if (limit == UINT64_MAX || limit <= s->start_mono_ns)
        return;
    int rc = rec_agg_advance(s->agg, limit - s->start_mono_ns, &last);

    if (rc < 0)
        s->write_err = rc;
    if (last > s->last_emitted_ns)
        s->last_emitted_ns = last;
    /* --keep-last's next segment on time too, events or not (an error
     * stops the segments alone: rec_keep_get_stats says it) */
    if (s->keep && rc == 0)
        rec_keep_advance(s->keep, limit - s->start_mono_ns);
}

void rec_merge_write(struct rec_session *s, struct fmt_event *ev, uint64_t abs_ts)
{
    ev->ts_ns = rec_trace_ts(s, abs_ts);
    if (ev->kind == FMT_EV_DROPPED)
        s->nr_dropped += ev->arg[0];
    if (s->write_err == 0) {
        if (s->keep)
            rec_keep_event(s->keep, ev);
        int rc = s->agg ? rec_agg_event(s->agg, ev) : fmt_writer_event(s->w, ev);

        if (rc < 0)
            s->write_err = rc;
    }
    s->nr_events++;
}

void rec_merge_synth(struct rec_session *s, const struct fmt_event *ev, uint64_t abs_ts, char *str,
                     uint32_t str_len, char *str2, uint32_t str2_len)
{
    struct rec_synth *n;
    uint32_t at;

    if (UTIL_ARRAY_RESERVE(s->synth, s->cap_synth, (size_t)s->nr_synth + 1, 16)) {
        free(str);
        free(str2);
        return;
    }
    /* Few and mostly in order: insertion keeps the list sorted by time. */
    at = s->nr_synth;
    while (at > 0 && s->synth[at - 1].ev.ts_ns > abs_ts)
        at--;
    memmove(&s->synth[at + 1], &s->synth[at], (s->nr_synth - at) * sizeof(*n));
    n = &s->synth[at];
    n->ev = *ev;
    n->ev.ts_ns = abs_ts; /* absolute until written */
    n->str = str;
    n->str2 = str2;
    n->ev.str = str;
    n->ev.str_len = str ? str_len : 0;
    n->ev.str2 = str2;
    n->ev.str2_len = str2 ? str2_len : 0;
    n->seq = s->synth_seq++;
    s->nr_synth++;
}

uint64_t rec_merge_watermark(struct rec_session *s, uint64_t now_ns)
{
    uint64_t limit = now_ns > REC_GUARD_NS ? now_ns - REC_GUARD_NS : 0;

    rec_clock_follow(&s->clock); /* before this round's stamps are converted */

    for (uint32_t i = 0; i < s->nr_images; i++) {
        struct rec_image *img = s->images[i];

        if (!img->open)
            continue;
        for (uint32_t j = 0; j < img->nr_rings; j++) {
            struct rec_ring *r = img->rings[j];
            /* Read pending before draining: with MARKER, everything the
             * thread published before it is then in our copy. */
            uint64_t p = atomic_load_explicit(&r->ctl->pending, memory_order_acquire);
            uint64_t bound;

            if (p > FMT_SHM_PENDING_MARKER)
                p = rec_clock_ns(&s->clock, p, img->clock_tsc);

            if (p == 0) {
                r->seen_pending = 0;
                r->pending_dead = 0;
                continue;
            }
            if (p != r->seen_pending) {
                r->seen_pending = p;
                r->seen_pending_ns = now_ns;
                r->pending_dead = 0;
            } else if (!r->pending_dead && now_ns - r->seen_pending_ns > REC_STALE_NS) {
                uint32_t owner = atomic_load(&r->ctl->owner_tid) & ~FMT_SHM_OWNER_EXITING;

                /* A thread that died inside a hook (exec, a raw exit)
                 * never clears its word. */
                if (owner == 0 ||
                    (syscall(SYS_tgkill, (long)img->pid, (long)owner, 0L) != 0 && errno == ESRCH))
                    r->pending_dead = 1;
                r->seen_pending_ns = now_ns;
            }
            if (r->pending_dead || r->off)
                continue;
            bound = p == FMT_SHM_PENDING_MARKER ? r->last_ts : p;
            if (bound < limit)
                limit = bound;
        }
        rec_stream_drain(s, img);
    }
    /* A hello still in the socket's queue: its process's events, or a
     * new thread's in a segment it announced, may be older than now
     * (struct rec_queue). Every hello sent before in_ns is in. */
    if (s->lfd >= 0 && s->queue.in_ns < limit)
        limit = s->queue.in_ns;
    return limit;
}

static uint32_t rec_buffered_len(const unsigned char *p)
{
    if (p[0] == FMT_SHM_REC_EVENT || p[0] == FMT_SHM_REC_RELEASE)
        return FMT_SHM_EVENT_SIZE(((const struct fmt_shm_event *)(const void *)p)->origin_nargs >>
                                  4);
    return ((const struct fmt_shm_sized *)(const void *)p)->len;
}

static uint64_t rec_ring_next_ts(const struct rec_ring *r)
{
    return *rec_record_ts(r->buf + r->buf_pos);
}

static inline uint32_t rec_map_stack(struct rec_image *img, uint32_t id)
{
    uint32_t gid;

    if (id == 0)
        return 0;
    if ((gid = rec_stackmap_get(&img->stack_map, id)) != 0)
        return gid;
    img->nr_unknown_stacks++;
    return 0;
}

static void rec_thread_begin(struct rec_session *s, struct rec_ring *r, uint32_t tid)
{
    r->thread_ended = 0;
    r->tid = tid;
    r->thread = tid == r->img->pid ? r->img->main_thread : s->next_thread++;
    r->has_thread = 1;
    r->who = (struct fmt_writer_who){r->img->index, r->thread, r->img->pid, tid};
}

static void rec_release_forget(struct rec_image *img, struct rec_ring *r)
{
    for (uint32_t i = 0; i < img->nr_released; i++)
        if (img->released[i].ring == r) {
            img->released[i] = img->released[--img->nr_released];
            return;
        }
}

/* A realloc record's origin and argument count: origin 0 (a call of the
 * program), one extra word (the old address). */
#define REC_REALLOC_PLAIN (1u << 4)

/* A plain realloc (no flags but IN_PLACE, only the old address; 7 % of
 * sqlite3's heap calls), out of the inlined fast path of rec_emit_heap(). */
static __attribute__((noinline)) void rec_emit_realloc(struct rec_session *s, struct rec_ring *r,
                                                       const struct fmt_shm_event *e, uint64_t ts)
{
    ts = rec_trace_ts(s, ts);
    if (s->write_err == 0) {
        uint32_t stack = rec_map_stack(r->img, e->stack);
        if (s->keep)
            rec_keep_realloc(s->keep, &r->who, e->flags, ts, e->extra[0], e->addr, e->size, stack);
        int rc = s->agg ? rec_agg_realloc(s->agg, &r->who, e->flags, ts, e->extra[0], e->addr,
                                          e->size, stack)
                        : fmt_writer_realloc(s->w, &r->who, e->flags, ts, e->extra[0], e->addr,
                                             e->size, stack);

        if (rc < 0)
            s->write_err = rc;
    }
    s->nr_events++;
}

/* A plain malloc or free (no flags, no extra words): straight to
 * fmt_writer_heap(), the bulk of a trace without a struct fmt_event; a
 * plain realloc to fmt_writer_realloc(). An allocation waits for the
 * generic path while a released address may need settling first
 * (rec_release_settle). Returns 1 if it wrote e. */
static inline __attribute__((always_inline)) int
rec_emit_heap(struct rec_session *s, struct rec_ring *r, const struct fmt_shm_event *e, uint64_t ts)
{
    if (e->flags || e->origin_nargs ||
        !(e->kind == FMT_EV_FREE || (e->kind == FMT_EV_MALLOC && !r->img->nr_released))) {
        if ((e->flags & ~FMT_EVF_IN_PLACE) || e->origin_nargs != REC_REALLOC_PLAIN ||
            e->kind != FMT_EV_REALLOC)
            return 0;
        /* A realloc that moved its block released the old address just
         * before (rec_emit_one): forgotten first, as there. */
        if (r->img->nr_released && (rec_release_forget(r->img, r), r->img->nr_released))
            return 0;
        rec_emit_realloc(s, r, e, ts);
        return 1;
    }
    ts = rec_trace_ts(s, ts);
    if (s->write_err == 0) {
        uint64_t size = e->kind == FMT_EV_MALLOC ? e->size : 0;
        uint32_t stack = rec_map_stack(r->img, e->stack);
        /* --keep-last's segment first: a new one begins with the state
         * before this event. Its errors stop the segments alone. */
        if (__builtin_expect(s->keep != NULL, 0))
            rec_keep_heap(s->keep, &r->who, e->kind, ts, e->addr, size, stack);
        /* One branch, taken the same way for the whole recording. */
        int rc = s->agg ? rec_agg_heap(s->agg, &r->who, e->kind, ts, e->addr, size, stack)
                        : fmt_writer_heap(s->w, &r->who, e->kind, ts, e->addr, size, stack);

        if (rc < 0)
            s->write_err = rc;
    }
    s->nr_events++;
    return 1;
}

/* While a run of records is written, the writer starts loading the
 * live-block slot of the malloc or free REC_AHEAD records ahead
 * (fmt_writer_prefetch, a hint that changes nothing in the trace): with a
 * million live blocks each lookup is a cache miss otherwise. The records
 * ahead are walked by their lengths, not guessed from the common one: one
 * realloc or calloc among them would put the guess inside a record. */
#define REC_AHEAD 8

static inline void rec_prefetch_record(struct rec_session *s, const struct rec_ring *r,
                                       const unsigned char *p)
{
    const struct fmt_shm_event *e = (const void *)p;

    if (p[0] != FMT_SHM_REC_EVENT)
        return;
    if (e->kind == FMT_EV_FREE || e->kind == FMT_EV_MALLOC)
        fmt_writer_prefetch(s->w, r->who.image, e->addr);
    else if (e->kind == FMT_EV_REALLOC && e->origin_nargs >> 4) /* the block it ends */
        fmt_writer_prefetch(s->w, r->who.image, e->extra[0]);
}

/* The buffer offset REC_AHEAD records past r's next one, with a
 * prefetch for every record on the way; UINT64_MAX (no prefetches) while
 * the writer's table is small enough to stay in the caches. */
static uint64_t rec_prefetch_start(struct rec_session *s, const struct rec_ring *r)
{
    uint64_t at = r->buf_pos;

    /* Under --aggregate the writer sees few blocks: its table is small. */
    if (s->agg || !fmt_writer_prefetch_pays(s->w))
        return UINT64_MAX;
    for (int k = 0; k < REC_AHEAD && at < r->buf_len; k++) {
        rec_prefetch_record(s, r, r->buf + at);
        at += rec_buffered_len(r->buf + at);
    }
    return at;
}

/* Fill ev from an EVENT record. */
static void rec_convert_event(struct rec_image *img, const struct fmt_shm_event *e,
                              struct fmt_event *ev)
{
    const uint64_t *x = e->extra;

    ev->kind = e->kind;
    ev->flags = e->flags;
    ev->origin = e->origin_nargs & 15;
    ev->stack = rec_map_stack(img, e->stack);
    ev->addr = e->addr;
    ev->size = e->size;
    switch (e->kind) {
    case FMT_EV_CALLOC:
    case FMT_EV_POSIX_MEMALIGN:
        ev->arg[0] = x[0];
        ev->arg[1] = x[1];
        break;
    case FMT_EV_REALLOC:
        ev->old_addr = x[0];
        break;
    case FMT_EV_REALLOCARRAY:
        ev->old_addr = x[0];
        ev->arg[0] = x[1];
        ev->arg[1] = x[2];
        break;
    case FMT_EV_MEMALIGN:
    case FMT_EV_ALIGNED_ALLOC:
    case FMT_EV_MPROTECT:
    case FMT_EV_BRK:
    case FMT_EV_SBRK:
        ev->arg[0] = x[0];
        break;
    case FMT_EV_MMAP:
        memcpy(ev->arg, x, 4 * sizeof(*x));
        break;
    case FMT_EV_MREMAP:
        ev->old_addr = x[0];
        ev->old_size = x[1];
        ev->arg[1] = x[2];
        break;
    default:
        break;
    }
}

/* Zero an event field by field: `= {0}` on the whole struct became a
 * `rep stos`, half the cost of writing an event. The reader-only fields
 * are never set, so the writer sees them as zero from the first clear. */
static inline void rec_event_clear(struct fmt_event *ev)
{
    static const struct fmt_event zero;

    *ev = zero;
}

static int rec_emit_one(struct rec_session *s, struct rec_ring *r, uint64_t at_most);

/* An allocation at addr is about to be written; if a realloc or mremap on
 * another thread released addr and its REALLOC/MREMAP (next in its ring)
 * is still unwritten, write that first, so the block it ended is gone
 * before its address comes back. Returns 1 if it wrote something. */
static int rec_release_settle(struct rec_session *s, struct rec_image *img, struct rec_ring *self,
                              uint64_t addr, uint64_t ts)
{
    for (uint32_t i = 0; i < img->nr_released; i++) {
        struct rec_ring *owner = img->released[i].ring;

        if (img->released[i].addr != addr || owner == self)
            continue;
        if (owner->buf_pos < owner->buf_len)
            rec_emit_one(s, owner, ts);
        rec_release_forget(img, owner);
        return 1;
    }
    return 0;
}

/* Write the ring's next record; at_most, if not UINT64_MAX, caps its time
 * (a record written early to settle a released address). Returns 1 if
 * another ring's record was written first (the merge heap is stale). */
static int rec_emit_one(struct rec_session *s, struct rec_ring *r, uint64_t at_most)
{
    unsigned char *p = r->buf + r->buf_pos;
    struct rec_image *img = r->img;
    struct fmt_event ev;
    struct fmt_module mod;
    uint64_t ts = *rec_record_ts(p);
    int settled = 0;

    if (ts > at_most)
        ts = at_most;
    r->buf_pos += rec_buffered_len(p);
    if (p[0] == FMT_SHM_REC_PAD)
        return 0; /* a thread's exit record, moved after its late calls (rec_stream.c) */
    if (!r->has_thread && !r->thread_ended && p[0] != FMT_SHM_REC_THREAD_START)
        rec_thread_begin(s, r, img->pid); /* no start seen: a vfork child's stray event */
    if (p[0] == FMT_SHM_REC_EVENT && rec_emit_heap(s, r, (const void *)p, ts))
        return 0;
    rec_event_clear(&ev);
    ev.image = img->index;
    ev.pid = img->pid;
    switch (p[0]) {
    case FMT_SHM_REC_EVENT: {
        const struct fmt_shm_event *e = (const void *)p;

        rec_convert_event(img, e, &ev);
        if (img->nr_released) {
            if (e->kind == FMT_EV_REALLOC || e->kind == FMT_EV_REALLOCARRAY ||
                e->kind == FMT_EV_MREMAP)
                rec_release_forget(img, r);
            if ((fmt_kind_is_heap_alloc(e->kind) || e->kind == FMT_EV_MMAP ||
                 e->kind == FMT_EV_MREMAP) &&
                !(e->flags & FMT_EVF_FAILED) && e->addr)
                settled = rec_release_settle(s, img, r, e->addr, ts);
        }
        break;
    }
    case FMT_SHM_REC_RELEASE:
        /* The REALLOC/MREMAP after it says what happened; until it is
         * written, an allocation elsewhere at this address must wait. */
        if (img->nr_released < sizeof(img->released) / sizeof(img->released[0])) {
            rec_release_forget(img, r);
            img->released[img->nr_released].addr =
                ((const struct fmt_shm_event *)(const void *)p)->addr;
            img->released[img->nr_released++].ring = r;
        }
        return 0;
    case FMT_SHM_REC_THREAD_START:
    case FMT_SHM_REC_THREAD_NAME: {
        const struct fmt_shm_thread *t = (const void *)p;

        if (p[0] == FMT_SHM_REC_THREAD_START) {
            if (r->has_thread) {
                /* The ring passed to a new thread without an exit record. */
                struct fmt_event ex = {.kind = FMT_EV_THREAD_EXIT,
                                       .image = img->index,
                                       .pid = img->pid,
                                       .tid = r->tid,
                                       .thread = r->thread};

                rec_merge_write(s, &ex, ts);
            }
            rec_thread_begin(s, r, t->tid);
            ev.kind = FMT_EV_THREAD_START;
        } else {
            ev.kind = FMT_EV_THREAD_NAME;
        }
        ev.str = t->name;
        ev.str_len = t->name_len;
        break;
    }
    case FMT_SHM_REC_THREAD_EXIT:
        ev.kind = FMT_EV_THREAD_EXIT;
        r->has_thread = 0;
        /* A call the thread makes after its exit record was written out
         * still belongs to it (rec_stream.c moves the record when it can). */
        r->thread_ended = 1;
        break;
    case FMT_SHM_REC_MODULE_LOAD: {
        const struct fmt_shm_module *m = (const void *)p;

        memset(&mod, 0, sizeof(mod));
        mod.base = m->base;
        mod.path = (const char *)&m->segments[m->nr_segments];
        mod.path_len = m->path_len;
        mod.build_id_len = m->build_id_len;
        memcpy(mod.build_id, m->build_id, m->build_id_len);
        mod.nr_segments = m->nr_segments;
        for (uint32_t i = 0; i < m->nr_segments; i++) {
            mod.segments[i].vaddr = m->segments[i].vaddr;
            mod.segments[i].memsz = m->segments[i].memsz;
            mod.segments[i].offset = m->segments[i].offset;
            mod.segments[i].flags = m->segments[i].flags;
        }
        ev.kind = FMT_EV_MODULE_LOAD;
        ev.module = &mod;
        ev.addr = m->base;
        break;
    }
    case FMT_SHM_REC_MODULE_UNLOAD:
        ev.kind = FMT_EV_MODULE_UNLOAD;
        ev.addr = ((const struct fmt_shm_module *)(const void *)p)->base;
        break;
    case FMT_SHM_REC_POOL: {
        /* A block of the program's own pool, or the pool made or ended
         * (memscribe/annotate.h; docs/format-events.md, "Pools"). */
        const struct fmt_shm_pool *pl = (const void *)p;

        ev.kind = pl->kind;
        ev.flags = FMT_EVF_POOL;
        ev.stack = rec_map_stack(img, pl->stack);
        ev.arg[1] = pl->pool;
        ev.addr = pl->addr;
        ev.size = pl->size;
        ev.old_addr = pl->old_addr;
        ev.str = pl->name_len ? pl->name : NULL;
        ev.str_len = pl->name_len;
        break;
    }
    default:
        return 0;
    }
    ev.tid = r->tid;
    ev.thread = r->thread;
    rec_merge_write(s, &ev, ts);
    return settled;
}

static int rec_heap_less(struct rec_ring *a, struct rec_ring *b)
{
    uint64_t ta = rec_ring_next_ts(a), tb = rec_ring_next_ts(b);

    if (ta != tb)
        return ta < tb;
    return a->img->index != b->img->index ? a->img->index < b->img->index : a < b;
}

static void rec_heap_down(struct rec_ring **h, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, m = i;
        struct rec_ring *tmp;

        if (l < n && rec_heap_less(h[l], h[m]))
            m = l;
        if (l + 1 < n && rec_heap_less(h[l + 1], h[m]))
            m = l + 1;
        if (m == i)
            return;
        tmp = h[i];
        h[i] = h[m];
        h[m] = tmp;
        i = m;
    }
}

/* Before an image's exit: end each thread of it that started and never
 * ended, when the process did (no later). The collector ends a thread from
 * its exit hook, a key destructor, which glibc runs only for a thread that
 * had made a traced call; a thread whose first call came later (a free in
 * the last round of key destructors, or among libc's own frees after
 * them) started and would never end. So does a thread still running when
 * the program called exit() or exec'd. The main thread ends with its
 * image; an image the recording left (a detach) ends no thread. */
static void rec_end_open_threads(struct rec_session *s, uint32_t image, uint64_t ts)
{
    struct rec_image *img = s->images[image];

    for (uint32_t i = 0; i < img->nr_rings; i++) {
        struct rec_ring *r = img->rings[i];
        struct fmt_event ex = {.kind = FMT_EV_THREAD_EXIT,
                               .image = image,
                               .pid = img->pid,
                               .tid = r->tid,
                               .thread = r->thread};

        if (!img->over || !r->has_thread || r->tid == img->pid)
            continue;
        rec_merge_write(s, &ex, ts);
        r->has_thread = 0;
        r->thread_ended = 1;
    }
}

static void rec_emit_synth_head(struct rec_session *s)
{
    struct rec_synth head = s->synth[0];

    s->nr_synth--;
    memmove(&s->synth[0], &s->synth[1], s->nr_synth * sizeof(*s->synth));
    if (head.ev.kind == FMT_EV_PROCESS_EXIT) {
        rec_end_open_threads(s, head.ev.image, head.ev.ts_ns);
        s->images[head.ev.image]->exit_pending = 0;
    }
    rec_merge_write(s, &head.ev, head.ev.ts_ns);
    free(head.str);
    free(head.str2);
}

/* Fill the heap with every ring that has a record older than limit. */
static uint32_t rec_heap_build(struct rec_session *s, uint64_t limit)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < s->nr_images; i++)
        for (uint32_t j = 0; j < s->images[i]->nr_rings; j++) {
            struct rec_ring *r = s->images[i]->rings[j];

            if (r->buf_pos == r->buf_len)
                r->buf_pos = r->buf_len = 0;
            else if (rec_ring_next_ts(r) < limit)
                s->heap[n++] = r;
        }
    for (uint32_t i = n / 2; i-- > 0;)
        rec_heap_down(s->heap, n, i);
    return n;
}

/* Copy what the open images' threads published since out of their rings
 * (rec_stream_drain_ahead), in the middle of a long merge: the rings are the
 * program's only buffer, and a thread whose ring is full waits. A merge
 * emits what its round's watermark allows, and the next watermark is
 * worked out only after it: on python3's JSON round trip (8 M heap calls,
 * 1.4 s) rounds of 5-25 ms filled the 4 MiB ring and the program waited
 * 85-115 ms in all. What this copies is at or past the watermark
 * (rec_merge_watermark), so the merge leaves it for a later round. */
__attribute__((noinline, cold)) static void rec_merge_drain(struct rec_session *s)
{
    for (uint32_t i = 0; i < s->nr_images; i++)
        if (s->images[i]->open)
            rec_stream_drain_ahead(s, s->images[i]);
    /* A recorder behind the program (a loaded machine, --keep-last's two
     * writers) merges for seconds a round: what it wrote reaches the file
     * each second all the same, as a killed recorder's trace promises
     * (docs/record.md, "Exit status and messages"). */
    rec_session_flush_due(s, rec_clock_now(&s->clock));
}

/* Records a merge emits between two rec_merge_drain: about 1.5 ms of the
 * recorder's work, against 23 ms a 4 MiB ring holds of python3's calls. */
#define REC_MERGE_DRAIN_EVERY 16384u

void rec_merge_emit(struct rec_session *s, uint64_t limit)
{
    uint32_t n, total = 0, since_drain = 0;

    for (uint32_t i = 0; i < s->nr_images; i++)
        total += s->images[i]->nr_rings;
    if (total > s->heap_cap) {
        struct rec_ring **nh = realloc(s->heap, total * sizeof(*nh));

        if (!nh)
            return;
        s->heap = nh;
        s->heap_cap = total;
    }
    n = rec_heap_build(s, limit);
    for (;;) {
        int have_ring = n > 0;
        int have_synth = s->nr_synth > 0 && s->synth[0].ev.ts_ns < limit;
        struct rec_ring *r;

        if (!have_ring && !have_synth)
            break;
        if (have_synth && (!have_ring || s->synth[0].ev.ts_ns <= rec_ring_next_ts(s->heap[0]))) {
            rec_emit_synth_head(s);
            continue;
        }
        r = s->heap[0];
        if (rec_emit_one(s, r, UINT64_MAX)) {
            n = rec_heap_build(s, limit); /* another ring moved on: rare */
            continue;
        }
        /* A run: while r's next record is strictly older than every other
         * candidate (the root's children, the next synthetic event, the
         * limit), the heap would hand out r again, so skip asking it. A
         * thread writes long runs between others' on a busy machine; with
         * one ring this is every record. Ties go back to the heap. */
        {
            uint64_t bound = limit;
            int moved = 0;

            if (n > 1 && rec_ring_next_ts(s->heap[1]) < bound)
                bound = rec_ring_next_ts(s->heap[1]);
            if (n > 2 && rec_ring_next_ts(s->heap[2]) < bound)
                bound = rec_ring_next_ts(s->heap[2]);
            if (s->nr_synth > 0 && s->synth[0].ev.ts_ns < bound)
                bound = s->synth[0].ev.ts_ns;
            uint64_t ahead = rec_prefetch_start(s, r);

            while (r->buf_pos < r->buf_len) {
                const struct fmt_shm_event *e;

                if (__builtin_expect(++since_drain == REC_MERGE_DRAIN_EVERY, 0)) {
                    /* The copy may move what r's buffer holds: the
                     * prefetches start again from where the run is. */
                    since_drain = 0;
                    rec_merge_drain(s);
                    ahead = rec_prefetch_start(s, r);
                }
                e = (const void *)(r->buf + r->buf_pos);
                if (ahead < r->buf_len) {
                    rec_prefetch_record(s, r, r->buf + ahead);
                    ahead += rec_buffered_len(r->buf + ahead);
                }

                /* Plain mallocs and frees, the bulk of a run, without the
                 * detour through rec_emit_one. */
                if (e->type == FMT_SHM_REC_EVENT && r->has_thread) {
                    if (e->ts_ns >= bound)
                        break;
                    if (rec_emit_heap(s, r, e, e->ts_ns)) {
                        r->buf_pos += FMT_SHM_EVENT_SIZE(e->origin_nargs >> 4);
                        continue;
                    }
                } else if (rec_ring_next_ts(r) >= bound) {
                    break;
                }
                if ((moved = rec_emit_one(s, r, UINT64_MAX)))
                    break;
            }
            if (moved) {
                n = rec_heap_build(s, limit);
                continue;
            }
        }
        if (r->buf_pos < r->buf_len && rec_ring_next_ts(r) < limit) {
            rec_heap_down(s->heap, n, 0);
        } else {
            if (r->buf_pos == r->buf_len)
                r->buf_pos = r->buf_len = 0;
            s->heap[0] = s->heap[--n];
            rec_heap_down(s->heap, n, 0);
        }
    }
    rec_merge_advance(s, limit);
    rec_stream_retire(s);
}

void rec_merge_cut(struct rec_session *s)
{
    if (s->agg && s->write_err == 0) {
        int rc = rec_agg_cut_at(s->agg, s->last_emitted_ns);

        if (rc < 0)
            s->write_err = rc;
    }
}
