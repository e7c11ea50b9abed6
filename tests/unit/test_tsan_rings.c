/* SPDX-License-Identifier: MIT */
/* The memory the collector shares with the recorder, under
 * ThreadSanitizer (docs/protocol.md, "Memory order"): the collector's own
 * ring writer, stack table and counters (col_ring.c, col_stack.c,
 * col_count.c) in producer threads, and the recorder's own copy, merge and
 * sums (rec_stream.c, rec_merge.c, rec_counters.c) in a consumer thread,
 * in one process, since TSan sees no other. Rings of 4 KiB (COL_RING_SIZE,
 * tests/tsan.cmake) fill at once: every thread waits for room, spinning
 * and on the futex, and the recorder wakes it. Every record must arrive
 * intact, in order per thread and in time order overall, each event's
 * stack defined with its frames, and the counters must add up. A
 * non-atomic access, or one too weakly ordered for what it publishes, is
 * a TSan report, which fails the test (TSAN_OPTIONS=halt_on_error=1). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "collector/col_internal.h"
#include "recorder/rec_counters.h"
#include "recorder/rec_internal.h"

_Static_assert(COL_RING_SIZE == 4096, "a small ring, for back-pressure");

#define NR_PRODUCERS 4
#define NR_EVENTS 6000 /* per producer */
#define NR_SITES 48    /* call sites: 0..31 interned by hash, 32..47 by the node tree */
#define NODE_SITES 32
#define USABLE 16           /* every block's usable size (fake_usable) */
#define MAX_GIDS (1u << 16) /* STACK records the recorder may see */
#define PAUSE_EVERY 16      /* recorder rounds between two pauses */
#define PAUSE_NS 3000000    /* its pause: longer than a producer spins */

/* ---- the rest of the collector, stood in for ---- */
COL_TLS struct col_thread col_thread;
static struct col_process the_proc;
struct col_process *col_proc = &the_proc;
_Atomic int col_state = COL_READY;
uint32_t col_depth = 64;
int col_clock_fast, col_clock_tsc, col_glibc_malloc;
uint64_t col_sample_bytes = 1;
struct col_real col_real;
int col_unwind_verify;
static _Atomic int turned_off;

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t col_now_slow(void)
{
    return now_ns();
}
void col_say(const char *msg, int err)
{
    (void)msg, (void)err;
}
void col_turn_off(const char *why, int err)
{
    (void)why, (void)err;
    atomic_store(&turned_off, 1);
}
int col_selfrec_start(char *sock_name, size_t sock_size, uint8_t secret[FMT_SHM_SECRET_BYTES])
{
    (void)sock_name, (void)sock_size, (void)secret;
    return -1;
}
void col_reach_publish(struct fmt_shm_header *h)
{
    (void)h;
}
int col_self_range(uintptr_t *lo, uintptr_t *hi)
{
    *lo = *hi = 0; /* no frame is ours */
    return 0;
}
void *col_sys_mmap(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    return p == MAP_FAILED ? NULL : p;
}
void *col_sys_mmap_table(size_t len)
{
    return col_sys_mmap(len);
}
void col_sys_munmap(void *p, size_t len)
{
    if (p)
        munmap(p, len);
}
void col_sys_zero_table(void *p, size_t len)
{
    if (p)
        memset(p, 0, len);
}
int col_unwind_init(void)
{
    return 0;
}
void col_unwind_verify_init(void)
{
}
int col_unwind_backtrace(void **buf, int max, struct col_unwind_memo **memo)
{
    (void)buf, (void)max, (void)memo;
    return 0;
}
int col_unwind_from_context(const void *uc, void **buf, int max)
{
    (void)uc, (void)buf, (void)max;
    return 0;
}
void col_unwind_check_same(const char *why, const char *what_a, const uint64_t *a, int ka,
                           const char *what_b, const uint64_t *b, int kb)
{
    (void)why, (void)what_a, (void)a, (void)ka, (void)what_b, (void)b, (void)kb;
}

static size_t fake_usable(void *p)
{
    (void)p;
    return USABLE;
}

/* ---- the rest of the recorder: no aggregator, no --keep-last ---- */
void rec_session_flush_due(struct rec_session *s, uint64_t now)
{
    (void)s, (void)now;
}
void rec_agg_free(struct rec_agg *a)
{
    (void)a;
}
int rec_agg_heap(struct rec_agg *a, const struct fmt_writer_who *who, unsigned kind, uint64_t ts_ns,
                 uint64_t addr, uint64_t size, uint32_t stack)
{
    (void)a, (void)who, (void)kind, (void)ts_ns, (void)addr, (void)size, (void)stack;
    return -ENOSYS;
}
int rec_agg_realloc(struct rec_agg *a, const struct fmt_writer_who *who, unsigned flags,
                    uint64_t ts_ns, uint64_t old_addr, uint64_t addr, uint64_t size, uint32_t stack)
{
    (void)a, (void)who, (void)flags, (void)ts_ns, (void)old_addr, (void)addr, (void)size;
    (void)stack;
    return -ENOSYS;
}
int rec_agg_event(struct rec_agg *a, const struct fmt_event *ev)
{
    (void)a, (void)ev;
    return -ENOSYS;
}
int rec_agg_advance(struct rec_agg *a, uint64_t ts_ns, uint64_t *last)
{
    (void)a, (void)ts_ns, (void)last;
    return -ENOSYS;
}
int rec_agg_cut_at(struct rec_agg *a, uint64_t ts_ns)
{
    (void)a, (void)ts_ns;
    return -ENOSYS;
}
void rec_agg_switch(struct rec_agg *a)
{
    (void)a;
}
int rec_agg_exact_now(const struct rec_agg *a)
{
    (void)a;
    return 1;
}
int rec_keep_heap(struct rec_keep *k, const struct fmt_writer_who *who, unsigned kind,
                  uint64_t ts_ns, uint64_t addr, uint64_t size, uint32_t stack)
{
    (void)k, (void)who, (void)kind, (void)ts_ns, (void)addr, (void)size, (void)stack;
    return -ENOSYS;
}
int rec_keep_realloc(struct rec_keep *k, const struct fmt_writer_who *who, unsigned flags,
                     uint64_t ts_ns, uint64_t old_addr, uint64_t addr, uint64_t size,
                     uint32_t stack)
{
    (void)k, (void)who, (void)flags, (void)ts_ns, (void)old_addr, (void)addr, (void)size;
    (void)stack;
    return -ENOSYS;
}
int rec_keep_event(struct rec_keep *k, const struct fmt_event *ev)
{
    (void)k, (void)ev;
    return -ENOSYS;
}
int rec_keep_advance(struct rec_keep *k, uint64_t ts_ns)
{
    (void)k, (void)ts_ns;
    return -ENOSYS;
}
void rec_keep_free(struct rec_keep *k)
{
    (void)k;
}

/* ---- what a run asks and what the recorder's writer saw ---- */
struct run {
    int stacks;   /* events carry interned stacks */
    int counters; /* every call counted, summed by the recorder as it goes */
};

/* Written by the consumer thread only; read by the main thread after the
 * join. */
static struct seen {
    uint32_t tids[NR_PRODUCERS];
    uint32_t next_seq[NR_PRODUCERS];
    uint64_t allocs, frees, thread_starts, last_ts;
    uint64_t bad_tid, bad_seq, bad_order, bad_stack, bad_kind, dropped;
    uint32_t nr_gids;
    uint64_t gid_leaf[MAX_GIDS];
    uint32_t gid_frames[MAX_GIDS];
    uint64_t ctr[FMT_CTR_ALL];    /* the sums after the producers ended */
    uint64_t ctr_reads, ctr_back; /* sums read meanwhile; times one went back */
    uint32_t wakes;               /* wake_seq over the rings, before the close */
} seen;

static struct run the_run;

struct fmt_writer {
    int unused;
};
static struct fmt_writer the_writer;

static uint64_t site_leaf(uint32_t site)
{
    return site < NODE_SITES ? 0x400000 + site * 0x100 : 0x510000 + site * 0x10;
}

/* A site's frames, leaf first: by hash 3 to 7 frames of their own; in
 * the tree a leaf of its own under two frames every node site shares. */
static uint32_t site_frames(uint32_t site, uint64_t *f)
{
    uint32_t n = site < NODE_SITES ? 3 + site % 5 : 3 + site % 3;

    f[0] = site_leaf(site);
    for (uint32_t k = 1; k < n; k++)
        f[k] = site < NODE_SITES ? f[0] + 8 * k : 0x500000 + 0x100 * (n - k) + 0x10 * (site % 2);
    return n;
}

static void seen_alloc(uint32_t tid, unsigned kind, uint64_t ts, uint64_t addr, uint64_t size,
                       uint32_t stack)
{
    /* addr: producer i + 1 above bit 40, the event's number from bit 4 */
    uint64_t i = (addr >> 40) - 1, seq = (addr & ((1ull << 40) - 1)) >> 4;

    if (i >= NR_PRODUCERS || (seen.tids[i] && seen.tids[i] != tid)) {
        seen.bad_tid++;
        return;
    }
    seen.tids[i] = tid;
    if (ts < seen.last_ts)
        seen.bad_order++;
    seen.last_ts = ts;
    if (kind == FMT_EV_FREE) {
        seen.frees++;
        return;
    }
    if (kind != FMT_EV_MALLOC && kind != FMT_EV_CALLOC) {
        seen.bad_kind++;
        return;
    }
    if (seq != seen.next_seq[i])
        seen.bad_seq++;
    seen.next_seq[i] = (uint32_t)seq + 1;
    seen.allocs++;
    if (the_run.stacks) {
        uint64_t f[8];
        uint32_t site = (uint32_t)size - 1;

        if (site >= NR_SITES || stack == 0 || stack > seen.nr_gids ||
            seen.gid_leaf[stack - 1] != site_leaf(site) ||
            seen.gid_frames[stack - 1] != site_frames(site, f))
            seen.bad_stack++;
    } else if (stack != 0) {
        seen.bad_stack++;
    }
}

int fmt_writer_stack(struct fmt_writer *w, uint32_t image, const uint64_t *frames,
                     uint32_t nr_frames, uint32_t *id)
{
    (void)w, (void)image;
    if (seen.nr_gids == MAX_GIDS || nr_frames == 0)
        return -ENOMEM;
    seen.gid_leaf[seen.nr_gids] = frames[0];
    seen.gid_frames[seen.nr_gids] = nr_frames;
    *id = ++seen.nr_gids;
    return 0;
}

int fmt_writer_event(struct fmt_writer *w, const struct fmt_event *ev)
{
    (void)w;
    switch (ev->kind) {
    case FMT_EV_MALLOC:
    case FMT_EV_CALLOC:
    case FMT_EV_FREE:
        seen_alloc(ev->tid, ev->kind, ev->ts_ns, ev->addr, ev->size, ev->stack);
        break;
    case FMT_EV_THREAD_START:
        seen.thread_starts++;
        break;
    case FMT_EV_DROPPED:
        seen.dropped += ev->arg[0] + ev->arg[1];
        break;
    default:
        break;
    }
    return 0;
}

int fmt_writer_heap(struct fmt_writer *w, const struct fmt_writer_who *who, unsigned kind,
                    uint64_t ts_ns, uint64_t addr, uint64_t size, uint32_t stack)
{
    (void)w;
    seen_alloc(who->tid, kind, ts_ns, addr, size, stack);
    return 0;
}

int fmt_writer_realloc(struct fmt_writer *w, const struct fmt_writer_who *who, unsigned flags,
                       uint64_t ts_ns, uint64_t old_addr, uint64_t addr, uint64_t size,
                       uint32_t stack)
{
    (void)w, (void)who, (void)flags, (void)ts_ns, (void)old_addr, (void)addr, (void)size;
    (void)stack;
    seen.bad_kind++;
    return 0;
}

int fmt_writer_flush(struct fmt_writer *w)
{
    (void)w;
    return 0;
}
void fmt_writer_get_stats(const struct fmt_writer *w, struct fmt_writer_stats *st)
{
    (void)w;
    memset(st, 0, sizeof(*st));
}
int fmt_writer_prefetch_pays(const struct fmt_writer *w)
{
    (void)w;
    return 0;
}
void fmt_writer_prefetch(const struct fmt_writer *w, uint32_t image, uint64_t addr)
{
    (void)w, (void)image, (void)addr;
}

/* ---- the producers: a hook's steps, as the collector's hooks take them ---- */
static void *the_seg;
static _Atomic int producers_done;
static struct rec_session the_session;

struct producer {
    pthread_t th;
    int index;
    struct col_ring ring;
    struct col_thread t;
};

/* Site's stack id, interned as a walk would be: by hash, or through the
 * node tree with a walk of the site's frames as the memo's own. */
static uint32_t producer_stack(struct col_thread *t, uint32_t site)
{
    uint64_t f[8];
    uint32_t n = site_frames(site, f);

    if (site < NODE_SITES)
        return col_stack_intern(t, f, n);
    {
        struct col_unwind_fresh s[8] = {{0}};
        struct col_unwind_frame fr[2] = {{0}};
        struct col_unwind_memo m = {.nr_s = n, .max = 8, .s = s, .f = fr};
        void *buf[8];

        for (uint32_t k = 0; k < n; k++) {
            s[k].ip = f[k];
            buf[k] = (void *)(uintptr_t)f[k];
        }
        return col_stack_finish_walk(t, buf, (int)n, 8 + 4, &m);
    }
}

static void producer_event(struct col_thread *t, unsigned kind, uint64_t addr, uint64_t size,
                           uint32_t stack)
{
    uint64_t extra[2] = {1, size};
    uint64_t ts = col_stamp(t); /* after the stack: its definition is in a ring by then */

    col_emit_event(t, FMT_SHM_REC_EVENT, (uint8_t)kind, 0, 0, stack, ts, addr, size, extra,
                   (unsigned)fmt_shm_event_nargs(kind));
    col_stamp_done(t);
    if (!the_run.counters)
        return;
    if (kind == FMT_EV_FREE)
        col_count_free(t, (void *)(uintptr_t)addr);
    else
        col_count_alloc(t, kind, (void *)(uintptr_t)addr, size);
}

static void *producer_main(void *arg)
{
    struct producer *p = arg;
    struct col_thread *t = &p->t;
    struct fmt_shm_ring_ctl *c = fmt_shm_ring_ctl(the_seg, (uint32_t)p->index);

    t->tid = gettid();
    t->gen = the_proc.gen;
    p->ring.ctl = c;
    p->ring.data = fmt_shm_ring_data(the_seg, (uint32_t)p->index);
    p->ring.seg = the_seg;
    p->ring.index = (uint32_t)p->index;
    p->ring.cache = col_stack_cache_new();
    t->ring = &p->ring;
    /* as col_ring_claim's compare-and-swap leaves it */
    atomic_store(&c->owner_tid, (uint32_t)t->tid);
    col_emit_thread(t, FMT_SHM_REC_THREAD_START, "producer", 8);
    for (uint32_t seq = 0; seq < NR_EVENTS; seq++) {
        uint32_t site = (seq * 7 + (uint32_t)p->index) % NR_SITES;
        uint64_t addr = ((uint64_t)p->index + 1) << 40 | (uint64_t)seq << 4;
        uint32_t stack = the_run.stacks ? producer_stack(t, site) : 0;

        producer_event(t, seq % 3 ? FMT_EV_MALLOC : FMT_EV_CALLOC, addr, site + 1, stack);
        if (seq % 4 == 3)
            producer_event(t, FMT_EV_FREE, addr, 0, 0);
    }
    col_ring_release(t);
    return NULL;
}

/* ---- the recorder: rounds as rec_session's loop makes them ---- */
static void *consumer_main(void *arg)
{
    struct rec_session *s = &the_session;
    struct rec_image *img = s->images[0];
    uint64_t ctr[FMT_CTR_ALL], allocs = 0;
    unsigned round = 0;

    (void)arg;
    while (!atomic_load_explicit(&producers_done, memory_order_acquire)) {
        rec_merge_emit(s, rec_merge_watermark(s, now_ns()));
        if (the_run.counters && rec_counters_read(s, img, ctr)) {
            seen.ctr_reads++;
            seen.ctr_back += ctr[FMT_CTR_ALLOCS] < allocs;
            allocs = ctr[FMT_CTR_ALLOCS];
        }
        if (++round % PAUSE_EVERY == 0) {
            /* The rings fill meanwhile: their threads spin, then sleep. */
            struct timespec ts = {0, PAUSE_NS};

            nanosleep(&ts, NULL);
        }
    }
    if (the_run.counters)
        rec_counters_read(s, img, seen.ctr);
    for (uint32_t i = 0; i < NR_PRODUCERS; i++)
        seen.wakes += atomic_load(&fmt_shm_ring_ctl(the_seg, i)->wake_seq);
    rec_stream_close(s, img, 0, 1, now_ns()); /* drains, unmaps the segment */
    rec_merge_emit(s, UINT64_MAX);
    return NULL;
}

static void run(struct run r)
{
    struct producer prod[NR_PRODUCERS];
    struct rec_session *s = &the_session;
    size_t size = fmt_shm_segment_bytes(0, NR_PRODUCERS, COL_RING_SIZE);
    struct fmt_shm_hello hello = {.magic = FMT_SHM_HELLO_MAGIC,
                                  .version = FMT_SHM_VERSION,
                                  .kind = FMT_SHM_HELLO_IMAGE,
                                  .pid = (uint32_t)getpid(),
                                  .ppid = (uint32_t)getppid(),
                                  .stream_id = 7,
                                  .ts_ns = now_ns()};
    struct fmt_shm_header *h;
    pthread_t consumer;

    the_run = r;
    memset(&seen, 0, sizeof(seen));
    memset(s, 0, sizeof(*s));
    atomic_store(&producers_done, 0);
    the_proc.gen = 1;
    the_proc.pid = getpid();
    col_real.malloc_usable_size = fake_usable;
    col_stack_reset();

    /* The segment as col_segment_new makes it, in ordinary shared memory. */
    h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(h != MAP_FAILED);
    fmt_shm_header_layout(h, 0, NR_PRODUCERS, COL_RING_SIZE);
    h->pid = hello.pid;
    h->stream_id = hello.stream_id;
    h->max_frames = col_depth;
    the_seg = h;
    col_counters = NULL; /* a case before left its own */
    if (r.counters)
        col_count_start(h);

    s->w = &the_writer;
    s->root_pid = hello.pid;
    s->recorder_pid = hello.pid; /* alive: the producers' check passes */
    s->lfd = -1;
    s->opt.sample_bytes = r.counters;
    assert_int_equal(rec_stream_attach(s, &hello, h, size, -1, hello.ts_ns), 0);
    if (r.counters)
        col_count_threads(); /* as the pthread_create hook does */

    assert_int_equal(pthread_create(&consumer, NULL, consumer_main, NULL), 0);
    for (int i = 0; i < NR_PRODUCERS; i++) {
        memset(&prod[i], 0, sizeof(prod[i]));
        prod[i].index = i;
        assert_int_equal(pthread_create(&prod[i].th, NULL, producer_main, &prod[i]), 0);
    }
    for (int i = 0; i < NR_PRODUCERS; i++)
        assert_int_equal(pthread_join(prod[i].th, NULL), 0);
    atomic_store_explicit(&producers_done, 1, memory_order_release);
    assert_int_equal(pthread_join(consumer, NULL), 0);
    for (int i = 0; i < NR_PRODUCERS; i++)
        col_stack_cache_free(prod[i].ring.cache);

    assert_int_equal(atomic_load(&turned_off), 0);
    assert_int_equal(seen.bad_tid, 0);
    assert_int_equal(seen.bad_seq, 0);
    assert_int_equal(seen.bad_order, 0);
    assert_int_equal(seen.bad_stack, 0);
    assert_int_equal(seen.bad_kind, 0);
    assert_int_equal(seen.dropped, 0);
    assert_int_equal(seen.thread_starts, NR_PRODUCERS);
    assert_int_equal(seen.allocs, (uint64_t)NR_PRODUCERS * NR_EVENTS);
    assert_int_equal(seen.frees, (uint64_t)NR_PRODUCERS * (NR_EVENTS / 4));
    for (int i = 0; i < NR_PRODUCERS; i++) {
        assert_int_equal(seen.next_seq[i], NR_EVENTS);
        assert_int_equal(seen.tids[i], prod[i].t.tid);
    }
    /* Each ring held 4 KiB of ~200 KiB: its thread slept and was woken. */
    assert_true(seen.wakes > 0);
    if (r.counters) {
        uint64_t n = (uint64_t)NR_PRODUCERS * NR_EVENTS,
                 f = (uint64_t)NR_PRODUCERS * (NR_EVENTS / 4);

        assert_true(seen.ctr_reads > 0);
        assert_int_equal(seen.ctr_back, 0);
        assert_int_equal(seen.ctr[FMT_CTR_ALLOCS], n);
        assert_int_equal(seen.ctr[FMT_CTR_CALLS + FMT_EV_CALLOC], (uint64_t)NR_PRODUCERS * 2000);
        assert_int_equal(seen.ctr[FMT_CTR_FREES], f);
        assert_int_equal(seen.ctr[FMT_CTR_ALLOC_USABLE], n * USABLE);
        assert_int_equal(seen.ctr[FMT_CTR_HEAP_USABLE], (n - f) * USABLE);
        assert_true(seen.ctr[FMT_CTR_PEAK_USABLE] >= (n - f) * USABLE);
    }
    /* The session's buffers are left: rec_session_clear is the whole
     * session's (rec_session.c), not linked here. */
}

/* ---- tests ---- */
static void test_rings_copy_every_record(void **state)
{
    (void)state;
    run((struct run){0});
}

static void test_stacks_interned_by_threads_at_once(void **state)
{
    (void)state;
    run((struct run){.stacks = 1});
}

static void test_counters_summed_while_added(void **state)
{
    (void)state;
    run((struct run){.stacks = 1, .counters = 1});
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rings_copy_every_record),
        cmocka_unit_test(test_stacks_interned_by_threads_at_once),
        cmocka_unit_test(test_counters_summed_while_added),
    };

    if (col_stack_init() != 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
