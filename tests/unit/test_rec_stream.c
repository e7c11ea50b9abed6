/* SPDX-License-Identifier: MIT */
/* The recorder's stream handling without processes: segments built in
 * memory stand in for the collector, and a recording writer for the trace
 * file. Checks validation, the time-ordered merge, the watermark, stack
 * mapping and what happens to scribbled records. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "recorder/rec_internal.h"

/* ---- a writer that remembers what it was given ---- */
struct seen {
    uint16_t kind;
    uint64_t ts;
    uint32_t tid, stack, image;
    uint64_t addr, arg0;
    char str[64];
    uint32_t str_len;
    unsigned char raw[64]; /* the first bytes of str, all str_len of them read */
};

static struct seen seen[256];
static int nr_seen;
static int count_only; /* a long merge: events counted, not kept */
static uint64_t stack_frames[16][8];
static uint32_t nr_stacks;

struct fmt_writer {
    int unused;
};
static struct fmt_writer the_writer;

/* The prefetch hints read the real writer's table: this one has none. */
int fmt_writer_prefetch_pays(const struct fmt_writer *w)
{
    (void)w;
    return 0;
}

void fmt_writer_prefetch(const struct fmt_writer *w, uint32_t image, uint64_t addr)
{
    (void)w;
    (void)image;
    (void)addr;
}

/* record --max-size asks the size written (rec_merge.c): none here. */
void fmt_writer_get_stats(const struct fmt_writer *w, struct fmt_writer_stats *st)
{
    (void)w;
    memset(st, 0, sizeof(*st));
}

/* record --keep-last's segments (rec_keep.c) are linked in but never made
 * here: the session's own writer is the one above. */
int fmt_writer_create(struct fmt_writer **out, int fd, const struct fmt_trace_info *info,
                      const struct fmt_writer_options *opt)
{
    (void)out, (void)fd, (void)info, (void)opt;
    return -ENOSYS;
}
int fmt_writer_finish(struct fmt_writer *w)
{
    (void)w;
    return -ENOSYS;
}
/* The periodic flush (rec_session_flush): counted, with how many events
 * the writer had been given at the first. */
static int nr_flushes;
static int seen_at_first_flush;
int fmt_writer_flush(struct fmt_writer *w)
{
    (void)w;
    if (nr_flushes++ == 0)
        seen_at_first_flush = nr_seen;
    return 0;
}
void fmt_writer_destroy(struct fmt_writer *w)
{
    (void)w;
}
int fmt_writer_copy_stacks(struct fmt_writer *dst, const struct fmt_writer *src)
{
    (void)dst, (void)src;
    return -ENOSYS;
}
uint32_t fmt_writer_time_unit(const struct fmt_writer *w)
{
    (void)w;
    return 1;
}
uint32_t fmt_writer_nr_stacks(const struct fmt_writer *w)
{
    (void)w;
    return 0;
}
int fmt_writer_live_maps(const struct fmt_writer *w, fmt_writer_map_fn *fn, void *arg)
{
    (void)w, (void)fn, (void)arg;
    return -ENOSYS;
}

int fmt_writer_stack(struct fmt_writer *w, uint32_t image, const uint64_t *frames,
                     uint32_t nr_frames, uint32_t *id)
{
    (void)w;
    (void)image;
    memcpy(stack_frames[nr_stacks], frames, (nr_frames < 8 ? nr_frames : 8) * sizeof(*frames));
    *id = 100 + nr_stacks++;
    return 0;
}

int fmt_writer_event(struct fmt_writer *w, const struct fmt_event *ev)
{
    struct seen *s;

    (void)w;
    if (count_only) {
        nr_seen++;
        return 0;
    }
    s = &seen[nr_seen++];
    assert_true(nr_seen < 256);
    s->kind = ev->kind;
    s->ts = ev->ts_ns;
    s->tid = ev->tid;
    s->stack = ev->stack;
    s->image = ev->image;
    s->addr = ev->addr;
    s->arg0 = ev->arg[0];
    snprintf(s->str, sizeof(s->str), "%.*s", (int)ev->str_len, ev->str ? ev->str : "");
    s->str_len = ev->str_len;
    for (uint32_t i = 0; i < ev->str_len; i++) /* the writer reads every byte it is told of */
        if (i < sizeof(s->raw))
            s->raw[i] = (unsigned char)ev->str[i];
        else
            (void)*(volatile const char *)&ev->str[i];
    return 0;
}

/* The recorder's paths for plain mallocs, frees and reallocs: seen the
 * same way. */
static int heap_event(struct fmt_writer *w, const struct fmt_writer_who *who, unsigned kind,
                      unsigned flags, uint64_t ts_ns, uint64_t old_addr, uint64_t addr,
                      uint64_t size, uint32_t stack)
{
    struct fmt_event ev = {.kind = (uint16_t)kind,
                           .flags = (uint16_t)flags,
                           .ts_ns = ts_ns,
                           .image = who->image,
                           .thread = who->thread,
                           .pid = who->pid,
                           .tid = who->tid,
                           .stack = stack,
                           .addr = addr,
                           .size = size,
                           .old_addr = old_addr};

    return fmt_writer_event(w, &ev);
}

int fmt_writer_heap(struct fmt_writer *w, const struct fmt_writer_who *who, unsigned kind,
                    uint64_t ts_ns, uint64_t addr, uint64_t size, uint32_t stack)
{
    return heap_event(w, who, kind, 0, ts_ns, 0, addr, size, stack);
}

int fmt_writer_realloc(struct fmt_writer *w, const struct fmt_writer_who *who, unsigned flags,
                       uint64_t ts_ns, uint64_t old_addr, uint64_t addr, uint64_t size,
                       uint32_t stack)
{
    return heap_event(w, who, FMT_EV_REALLOC, flags, ts_ns, old_addr, addr, size, stack);
}

/* ---- a collector stand-in ---- */
#define RINGS 2
#define RING_SIZE 4096u
static uint32_t ring_size = RING_SIZE; /* the next segment's (a long merge's is larger) */

static void *seg_new(uint32_t pid, uint64_t stream, size_t *size)
{
    struct fmt_shm_header *h;

    *size = fmt_shm_segment_bytes(0, RINGS, ring_size);
    h = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(h != MAP_FAILED);
    fmt_shm_header_layout(h, 0, RINGS, ring_size);
    h->pid = pid;
    h->stream_id = stream;
    memcpy((char *)h + FMT_SHM_INFO_OFFSET, "/bin/x\0x\0-v", 11);
    h->exe_len = 6;
    h->argv_len = 5;
    return h;
}

static struct fmt_shm_hello hello_for(uint32_t pid, uint64_t stream)
{
    struct fmt_shm_hello h = {.magic = FMT_SHM_HELLO_MAGIC,
                              .version = FMT_SHM_VERSION,
                              .kind = FMT_SHM_HELLO_IMAGE,
                              .pid = pid,
                              .ppid = 1,
                              .stream_id = stream,
                              .ts_ns = 1000};

    return h;
}

/* Append raw bytes to ring i and publish them. */
static void put(void *seg, uint32_t i, const void *rec, uint32_t len)
{
    struct fmt_shm_ring_ctl *c = fmt_shm_ring_ctl(seg, i);
    uint64_t head = atomic_load(&c->head);

    uint32_t size = ((const struct fmt_shm_header *)seg)->ring_size;

    memcpy(fmt_shm_ring_data(seg, i) + (head & (size - 1)), rec, len);
    atomic_store(&c->head, head + len);
}

static void put_thread(void *seg, uint32_t i, uint64_t ts, uint32_t tid)
{
    unsigned char buf[64] = {0};
    struct fmt_shm_thread *t = (void *)buf;

    t->h.type = FMT_SHM_REC_THREAD_START;
    t->h.len = fmt_shm_thread_size(2);
    t->ts_ns = ts;
    t->tid = tid;
    t->name_len = 2;
    memcpy(t->name, "th", 2);
    put(seg, i, buf, t->h.len);
}

static void put_malloc(void *seg, uint32_t i, uint64_t ts, uint64_t addr, uint32_t stack)
{
    struct fmt_shm_event e = {.type = FMT_SHM_REC_EVENT,
                              .kind = FMT_EV_MALLOC,
                              .stack = stack,
                              .ts_ns = ts,
                              .addr = addr,
                              .size = 16};

    put(seg, i, &e, sizeof(e));
}

static void put_stack(void *seg, uint32_t i, uint32_t id)
{
    unsigned char buf[64] = {0};
    struct fmt_shm_stack *s = (void *)buf;

    s->h.type = FMT_SHM_REC_STACK;
    s->h.len = fmt_shm_stack_size(2);
    s->id = id;
    s->nr_frames = 2;
    s->frames[0] = 0x1234;
    s->frames[1] = 0x5678;
    put(seg, i, buf, s->h.len);
}

static struct rec_session session(void)
{
    struct rec_session s = {0};

    nr_seen = 0;
    nr_stacks = 0;
    nr_flushes = 0;
    count_only = 0;
    s.w = &the_writer;
    s.root_pid = 42;
    s.recorder_pid = 1;
    s.lfd = -1; /* no socket: every hello is in (rec_merge_watermark) */
    return s;
}

static int setup_attach(struct rec_session *s, void **seg)
{
    size_t size;
    struct fmt_shm_hello h = hello_for(42, 7);

    *seg = seg_new(42, 7, &size);
    return rec_stream_attach(s, &h, *seg, size, -1, 0);
}

/* ---- tests ---- */
static void test_attach_rejects_bad_segments(void **state)
{
    struct rec_session s = session();
    struct fmt_shm_hello h = hello_for(42, 7);
    size_t size;
    struct fmt_shm_header *seg = seg_new(42, 7, &size);

    (void)state;
    seg->magic ^= 1;
    assert_int_equal(rec_stream_attach(&s, &h, seg, size, -1, 0), -EPROTO);
    seg->magic ^= 1;
    assert_int_equal(rec_stream_attach(&s, &h, seg, size - 4096, -1, 0), -EPROTO);
    seg->ring_size = 3000; /* not a power of two */
    assert_int_equal(rec_stream_attach(&s, &h, seg, size, -1, 0), -EPROTO);
    seg->ring_size = RING_SIZE;
    h.pid = 43; /* header and hello disagree */
    assert_int_equal(rec_stream_attach(&s, &h, seg, size, -1, 0), -EPROTO);
    h = hello_for(42, 7);
    h.kind = FMT_SHM_HELLO_SEGMENT; /* a segment of an unknown stream */
    assert_int_equal(rec_stream_attach(&s, &h, seg, size, -1, 0), -EPROTO);
    assert_int_equal(s.nr_images, 0);
    munmap(seg, size);
    rec_session_clear(&s);
}

static void test_merge_orders_by_time_and_maps_stacks(void **state)
{
    struct rec_session s = session();
    void *seg;

    (void)state;
    assert_int_equal(setup_attach(&s, &seg), 0);
    put_thread(seg, 0, 2000, 42);
    put_thread(seg, 1, 2001, 43);
    put_stack(seg, 0, 1);
    put_malloc(seg, 0, 3000, 0xa0, 1);
    put_malloc(seg, 0, 5000, 0xa1, 1);
    put_malloc(seg, 1, 4000, 0xb0, 0);
    put_malloc(seg, 1, 6000, 0xb1, 0);
    rec_stream_close(&s, s.images[0], 0, 1, 7000);
    rec_merge_emit(&s, UINT64_MAX);

    /* process start (ts 1000), 2 thread starts, 4 mallocs, process exit */
    assert_int_equal(nr_seen, 8);
    assert_int_equal(seen[0].kind, FMT_EV_PROCESS_START);
    assert_string_equal(seen[0].str, "/bin/x");
    assert_int_equal(seen[1].kind, FMT_EV_THREAD_START);
    assert_int_equal(seen[2].kind, FMT_EV_THREAD_START);
    assert_int_equal(seen[3].addr, 0xa0);
    assert_int_equal(seen[3].stack, 100);
    assert_int_equal(seen[3].tid, 42);
    assert_int_equal(seen[4].addr, 0xb0);
    assert_int_equal(seen[4].tid, 43);
    assert_int_equal(seen[5].addr, 0xa1);
    assert_int_equal(seen[6].addr, 0xb1);
    assert_int_equal(seen[7].kind, FMT_EV_PROCESS_EXIT);
    assert_int_equal(nr_stacks, 1);
    assert_int_equal(stack_frames[0][1], 0x5678);
    for (int i = 1; i < nr_seen; i++)
        assert_true(seen[i].ts >= seen[i - 1].ts);
    rec_session_clear(&s);
}

static void test_watermark_waits_for_pending_hooks(void **state)
{
    struct rec_session s = session();
    struct fmt_shm_ring_ctl *c1;
    void *seg;

    (void)state;
    assert_int_equal(setup_attach(&s, &seg), 0);
    c1 = fmt_shm_ring_ctl(seg, 1);
    put_thread(seg, 0, 2000, 42);
    put_malloc(seg, 0, 3000, 0xa0, 0);
    put_malloc(seg, 0, 9000, 0xa1, 0);
    /* Ring 1 is inside a hook stamped 5000: nothing from 5000 on may go. */
    atomic_store(&c1->pending, 5000);
    assert_int_equal(rec_merge_watermark(&s, 100 * REC_GUARD_NS), 5000);
    rec_merge_emit(&s, 5000);
    assert_int_equal(nr_seen, 3); /* start, thread, malloc 0xa0 */
    assert_int_equal(seen[2].addr, 0xa0);
    /* Caught between marker and clock: bounded by its last record. */
    put_thread(seg, 1, 4000, 43);
    atomic_store(&c1->pending, FMT_SHM_PENDING_MARKER);
    rec_merge_watermark(&s, 100 * REC_GUARD_NS);
    assert_int_equal(rec_merge_watermark(&s, 100 * REC_GUARD_NS), 4000);
    /* Idle: only the guard holds back. */
    atomic_store(&c1->pending, 0);
    assert_int_equal(rec_merge_watermark(&s, 100 * REC_GUARD_NS), 99 * REC_GUARD_NS);
    rec_merge_emit(&s, 99 * REC_GUARD_NS);
    assert_int_equal(nr_seen, 5);
    assert_int_equal(seen[3].kind, FMT_EV_THREAD_START);
    assert_int_equal(seen[4].addr, 0xa1);
    rec_stream_close(&s, s.images[0], 0, 1, 7000);
    rec_session_clear(&s);
}

static void test_scribbled_record_turns_stream_off(void **state)
{
    struct rec_session s = session();
    unsigned char junk[32];
    void *seg;
    int dropped = -1, mallocs = 0;

    (void)state;
    assert_int_equal(setup_attach(&s, &seg), 0);
    put_thread(seg, 0, 2000, 42);
    put_thread(seg, 1, 2000, 43);
    put_malloc(seg, 0, 3000, 0xa0, 0);
    memset(junk, 0x5a, sizeof(junk)); /* type 0x5a: no such record */
    put(seg, 0, junk, sizeof(junk));
    put_malloc(seg, 0, 3500, 0xa1, 0); /* lost behind the junk */
    put_malloc(seg, 1, 4000, 0xb0, 0); /* another stream: unharmed */
    put_malloc(seg, 0, 2500, 0xa2, 0);
    rec_stream_close(&s, s.images[0], 0, 1, 7000);
    rec_merge_emit(&s, UINT64_MAX);
    for (int i = 0; i < nr_seen; i++) {
        if (seen[i].kind == FMT_EV_DROPPED)
            dropped = (int)seen[i].arg0;
        mallocs += seen[i].kind == FMT_EV_MALLOC;
    }
    assert_int_equal(mallocs, 2);
    assert_true(dropped >= 1);
    assert_int_equal(s.nr_dropped, (uint64_t)dropped);
    rec_session_clear(&s);
}

static void test_times_never_go_back(void **state)
{
    struct rec_session s = session();
    void *seg;

    (void)state;
    assert_int_equal(setup_attach(&s, &seg), 0);
    put_thread(seg, 0, 2000, 42);
    put_malloc(seg, 0, 3000, 0xa0, 0);
    put_malloc(seg, 0, 2500, 0xa1, 0); /* scribbled time */
    put_malloc(seg, 0, 3200, 0xa2, 7); /* stack 7 never defined */
    rec_stream_close(&s, s.images[0], 0, 1, 7000);
    rec_merge_emit(&s, UINT64_MAX);
    assert_int_equal(seen[2].addr, 0xa0);
    assert_int_equal(seen[3].addr, 0xa1);
    assert_int_equal(seen[3].ts, seen[2].ts);
    assert_int_equal(seen[4].addr, 0xa2);
    assert_int_equal(seen[4].stack, 0);
    assert_int_equal(s.images[0]->nr_unknown_stacks, 1);
    rec_session_clear(&s);
}

/* A recorder behind its program merges for seconds a round, and what it
 * merged reaches the file each flush period all the same: the merge flushes
 * inside itself once the period has passed, not at the round's end
 * (docs/record.md, "Exit status and messages": a killed recorder's trace
 * holds what was flushed). The period here is 1 ns, so every drain point of
 * a 40,000-event merge (REC_MERGE_DRAIN_EVERY, 16,384 records) is due; with
 * an hour's period, none is. */
#define LONG_MERGE 40000u
static void long_merge(uint64_t flush_ns, int *flushes, int *seen_first, int *emitted)
{
    struct rec_session s = session();
    void *seg;

    ring_size = 2u << 20; /* 65,536 events of 32 bytes */
    assert_int_equal(setup_attach(&s, &seg), 0);
    ring_size = RING_SIZE;
    put_thread(seg, 0, 2000, 42);
    for (uint32_t i = 0; i < LONG_MERGE; i++)
        put_malloc(seg, 0, 3000 + i, 0x1000 + 16 * (uint64_t)i, 0);
    rec_stream_close(&s, s.images[0], 0, 1, 3000 + LONG_MERGE);
    count_only = 1;
    s.opt.flush_ns = flush_ns;
    s.last_flush_ns = rec_clock_now(&s.clock);
    rec_merge_emit(&s, UINT64_MAX);
    *flushes = nr_flushes;
    *seen_first = seen_at_first_flush;
    *emitted = nr_seen;
    rec_session_clear(&s); /* the close unmapped the segment */
}

static void test_long_merge_flushes_inside(void **state)
{
    int flushes, first, emitted;

    (void)state;
    long_merge(1, &flushes, &first, &emitted);
    /* process start, thread start, the mallocs, process exit */
    assert_int_equal(emitted, LONG_MERGE + 3);
    assert_int_equal(flushes, LONG_MERGE / 16384);
    assert_true(first > 0 && first < emitted);
    long_merge(3600ull * 1000000000ull, &flushes, &first, &emitted);
    assert_int_equal(emitted, LONG_MERGE + 3);
    assert_int_equal(flushes, 0);
}

/* Stack ids come from the program's memory: a huge one costs the recorder
 * no more than a small one (an id of 2^30 once made it grow
 * its map to 2^31 entries, 8 GiB), and any id a STACK record defined
 * maps. */
static void test_stack_ids_cost_what_was_defined(void **state)
{
    struct rec_session s = session();
    void *seg;

    (void)state;
    assert_int_equal(setup_attach(&s, &seg), 0);
    put_thread(seg, 0, 2000, 42);
    put_stack(seg, 0, 0x80000001u);
    put_stack(seg, 0, 0xfffffff0u);
    put_stack(seg, 0, 3);
    put_malloc(seg, 0, 3000, 0xa0, 0xfffffff0u);
    put_malloc(seg, 0, 3100, 0xa1, 0x80000001u);
    put_malloc(seg, 0, 3200, 0xa2, 3);
    put_malloc(seg, 0, 3300, 0xa3, 0x40000000u); /* never defined */
    rec_stream_close(&s, s.images[0], 0, 1, 7000);
    assert_int_equal(s.images[0]->stack_map.nr_entries, 3);
    assert_true(s.images[0]->stack_map.cap <= 1024);
    rec_merge_emit(&s, UINT64_MAX);
    assert_int_equal(nr_stacks, 3);
    assert_int_equal(seen[2].stack, 101);
    assert_int_equal(seen[3].stack, 100);
    assert_int_equal(seen[4].stack, 102);
    assert_int_equal(seen[5].stack, 0);
    assert_int_equal(s.images[0]->nr_unknown_stacks, 1);
    rec_session_clear(&s);
}

static void test_exec_closes_the_earlier_image(void **state)
{
    struct rec_session s = session();
    struct fmt_shm_hello h = hello_for(42, 8);
    size_t size;
    void *seg, *seg2;
    int exits = 0;

    (void)state;
    assert_int_equal(setup_attach(&s, &seg), 0);
    put_thread(seg, 0, 2000, 42);
    put_malloc(seg, 0, 3000, 0xa0, 0);
    h.ts_ns = 4000;
    seg2 = seg_new(42, 8, &size);
    assert_int_equal(rec_stream_attach(&s, &h, seg2, size, -1, 5000), 0);
    assert_int_equal(s.nr_images, 2);
    assert_false(s.images[0]->open);
    assert_int_equal(s.images[1]->how, FMT_START_EXEC);
    assert_int_equal(s.images[0]->how, FMT_START_INITIAL);
    rec_stream_close(&s, s.images[1], 0, 1, 7000);
    rec_merge_emit(&s, UINT64_MAX);
    for (int i = 0; i < nr_seen; i++)
        exits += seen[i].kind == FMT_EV_PROCESS_EXIT;
    assert_int_equal(exits, 2);
    assert_int_equal(seen[2].addr, 0xa0);
    /* The first image ends before the second starts. */
    assert_int_equal(seen[3].kind, FMT_EV_PROCESS_EXIT);
    assert_int_equal(seen[3].image, 0);
    assert_int_equal(seen[4].kind, FMT_EV_PROCESS_START);
    assert_int_equal(seen[4].image, 1);
    rec_session_clear(&s);
}

/* An RSS sample the recorder took for an image after its process exec'd
 * (after the new image's hello) read the new image: it is dropped, and the
 * earlier image still ends when the new one starts, not after the sample. */
static void test_exec_drops_a_later_rss_sample(void **state)
{
    struct rec_session s = session();
    struct fmt_shm_hello h = hello_for(42, 8);
    struct fmt_event rss = {.kind = FMT_EV_RSS, .pid = 42, .tid = 42, .size = 4096};
    size_t size;
    void *seg, *seg2;
    uint64_t end0 = 0, start1 = 0;

    (void)state;
    assert_int_equal(setup_attach(&s, &seg), 0);
    put_thread(seg, 0, 2000, 42);
    put_malloc(seg, 0, 3000, 0xa0, 0);
    rss.image = s.images[0]->index;
    rss.thread = s.images[0]->main_thread;
    rec_merge_synth(&s, &rss, 3500, NULL, 0, NULL, 0); /* before the exec: kept */
    rec_merge_synth(&s, &rss, 4500, NULL, 0, NULL, 0); /* after it */
    s.images[0]->rss_sample_ns = 4500;
    h.ts_ns = 4000;
    seg2 = seg_new(42, 8, &size);
    assert_int_equal(rec_stream_attach(&s, &h, seg2, size, -1, 5000), 0);
    rec_stream_close(&s, s.images[1], 0, 1, 7000);
    rec_merge_emit(&s, UINT64_MAX);
    int rss_seen = 0;
    for (int i = 0; i < nr_seen; i++) {
        if (seen[i].kind == FMT_EV_PROCESS_EXIT && seen[i].image == 0)
            end0 = seen[i].ts;
        if (seen[i].kind == FMT_EV_PROCESS_START && seen[i].image == 1)
            start1 = seen[i].ts;
        if (seen[i].kind == FMT_EV_RSS) {
            rss_seen++;
            assert_true(end0 == 0); /* every sample of image 0 before its end */
        }
    }
    assert_int_equal(rss_seen, 1);
    assert_true(start1 > 0);
    assert_true(end0 <= start1);
    rec_session_clear(&s);
}

/* A hello's time is clamped to the round's start (now); the earlier
 * image's last event may come after that: the new image starts when the
 * earlier one ended, never before (a pipeline's exec'd programs started
 * before the shell image they replaced had ended). */
static void test_exec_starts_after_the_earlier_image_ends(void **state)
{
    struct rec_session s = session();
    struct fmt_shm_hello h = hello_for(42, 8);
    size_t size;
    void *seg, *seg2;
    uint64_t end0 = 0, start1 = 0, last0 = 0;

    (void)state;
    assert_int_equal(setup_attach(&s, &seg), 0);
    put_thread(seg, 0, 2000, 42);
    put_malloc(seg, 0, 4500, 0xa0, 0);
    h.ts_ns = 6000; /* after now: clamped to now, 4000 */
    seg2 = seg_new(42, 8, &size);
    assert_int_equal(rec_stream_attach(&s, &h, seg2, size, -1, 4000), 0);
    rec_stream_close(&s, s.images[1], 0, 1, 7000);
    rec_merge_emit(&s, UINT64_MAX);
    for (int i = 0; i < nr_seen; i++) {
        if (seen[i].image == 0 && seen[i].kind != FMT_EV_PROCESS_EXIT && seen[i].ts > last0)
            last0 = seen[i].ts;
        if (seen[i].kind == FMT_EV_PROCESS_EXIT && seen[i].image == 0)
            end0 = seen[i].ts;
        if (seen[i].kind == FMT_EV_PROCESS_START && seen[i].image == 1)
            start1 = seen[i].ts;
    }
    assert_true(last0 > 0);
    assert_true(end0 > last0);
    assert_true(start1 >= end0);
    rec_session_clear(&s);
}

static void test_released_address_reused_elsewhere(void **state)
{
    struct rec_session s = session();
    unsigned char buf[64] = {0};
    struct fmt_shm_event *e = (void *)buf;
    void *seg;

    (void)state;
    assert_int_equal(setup_attach(&s, &seg), 0);
    put_thread(seg, 0, 2000, 42);
    put_thread(seg, 1, 2000, 43);
    /* Thread 42: realloc(0xa0) moves to 0xc0; released at 3000, done at 5000. */
    e->type = FMT_SHM_REC_RELEASE;
    e->kind = FMT_EV_REALLOC;
    e->ts_ns = 3000;
    e->addr = 0xa0;
    put(seg, 0, buf, FMT_SHM_EVENT_SIZE(0));
    e->type = FMT_SHM_REC_EVENT;
    e->origin_nargs = 1 << 4;
    e->ts_ns = 5000;
    e->addr = 0xc0;
    e->size = 64;
    e->extra[0] = 0xa0;
    put(seg, 0, buf, FMT_SHM_EVENT_SIZE(1));
    /* Thread 43 gets 0xa0 back in between. */
    put_malloc(seg, 1, 4000, 0xa0, 0);
    rec_stream_close(&s, s.images[0], 0, 1, 7000);
    rec_merge_emit(&s, UINT64_MAX);
    assert_int_equal(seen[3].kind, FMT_EV_REALLOC);
    assert_int_equal(seen[3].addr, 0xc0);
    assert_int_equal(seen[3].tid, 42);
    assert_int_equal(seen[4].kind, FMT_EV_MALLOC);
    assert_int_equal(seen[4].addr, 0xa0);
    assert_int_equal(seen[4].tid, 43);
    assert_int_equal(seen[3].ts, seen[4].ts);
    assert_int_equal(nr_seen, 6);
    rec_session_clear(&s);
}

/* The program's path is copied by the length the header gives, bytes the
 * recorder actually has: a NUL inside it once made a shorter string that
 * the writer then read past. */
static void test_info_lengths_bound_the_copy(void **state)
{
    struct rec_session s = session();
    struct fmt_shm_hello h = hello_for(42, 7);
    size_t size;
    struct fmt_shm_header *seg = seg_new(42, 7, &size);

    (void)state;
    memcpy((char *)seg + FMT_SHM_INFO_OFFSET, "/bin/x\0hidden-bytes-x\0-v", 25);
    seg->exe_len = 22;
    seg->argv_len = 3;
    assert_int_equal(rec_stream_attach(&s, &h, seg, size, -1, 0), 0);
    memset((char *)seg + FMT_SHM_INFO_OFFSET, 'Z', 64); /* later scribbles change nothing */
    seg->exe_len = 3000;
    rec_stream_close(&s, s.images[0], 0, 1, 7000);
    rec_merge_emit(&s, UINT64_MAX);
    assert_int_equal(seen[0].kind, FMT_EV_PROCESS_START);
    assert_int_equal(seen[0].str_len, 22);
    assert_memory_equal(seen[0].raw, "/bin/x\0hidden-bytes-x", 22);
    rec_session_clear(&s);
}

/* What the program writes in its segment is bounded by what could have
 * happened: no time after the recorder's clock, no
 * successful call larger than the address space, no more dropped calls
 * than one per ns per CPU. */
static void test_scribbled_values_are_bounded(void **state)
{
    struct rec_session s = session();
    struct fmt_shm_event big = {.type = FMT_SHM_REC_EVENT,
                                .kind = FMT_EV_MALLOC,
                                .ts_ns = 3500,
                                .addr = 0xc0,
                                .size = 1ull << 62};
    struct fmt_shm_header *h;
    uint64_t before = rec_clock_now(&s.clock), after, last;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int mallocs = 0;
    void *seg;

    (void)state;
    assert_int_equal(setup_attach(&s, &seg), 0);
    h = seg;
    put_thread(seg, 0, 2000, 42);
    put_thread(seg, 1, 2000, 43);
    put_malloc(seg, 0, 3000, 0xa0, 0);
    put(seg, 0, &big, sizeof(big));              /* 4 EiB allocated: a scribble, ring 0 goes off */
    put_malloc(seg, 1, UINT64_MAX / 4, 0xb0, 0); /* 146 years from now */
    rec_merge_watermark(&s, 0);
    after = rec_clock_now(&s.clock);
    atomic_store(&h->nr_dropped, 1ull << 61);
    rec_stream_close(&s, s.images[0], 0, 1, 7000);
    last = s.images[0]->rings[1]->last_ts;
    rec_merge_emit(&s, UINT64_MAX);
    for (int i = 0; i < nr_seen; i++) {
        if (seen[i].kind == FMT_EV_MALLOC) {
            mallocs++;
            assert_int_not_equal(seen[i].addr, 0xc0);
            if (seen[i].addr == 0xb0) {
                assert_true(seen[i].ts >= before);
                assert_true(seen[i].ts <= after);
            }
        }
        if (seen[i].kind == FMT_EV_DROPPED) {
            /* ring 0's rest (32-byte estimate) + the counter, capped at
             * one call per ns per CPU from the hello (0) to the last
             * record, plus 1 ms */
            assert_true(seen[i].arg0 <= (last + 1000000) * (uint64_t)cpus + 8);
            assert_true(seen[i].arg0 >= 1000000 * (uint64_t)cpus);
        }
    }
    assert_int_equal(mallocs, 2);
    assert_true(s.nr_dropped < (1ull << 61));
    rec_session_clear(&s);
}

static void test_check_program(void **state)
{
    char msg[512], path[] = "/tmp/test_rec_check.XXXXXX";
    int fd = mkstemp(path);

    (void)state;
    assert_int_equal(rec_check_program("/bin/sh", msg, sizeof(msg)), 0);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "hello\n", 6), 6);
    assert_int_equal(rec_check_program(path, msg, sizeof(msg)), -1);
    assert_non_null(strstr(msg, path));
    assert_int_equal(pwrite(fd, "#!/bin/sh\n", 10, 0), 10);
    assert_int_equal(rec_check_program(path, msg, sizeof(msg)), 0);
    fchmod(fd, 04755);
    assert_int_equal(rec_check_program(path, msg, sizeof(msg)), -1);
    assert_non_null(strstr(msg, "set-user-ID"));
    close(fd);
    unlink(path);
    assert_int_equal(rec_check_program("/no/such/file", msg, sizeof(msg)), -1);
    assert_non_null(strstr(msg, "/no/such/file"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attach_rejects_bad_segments),
        cmocka_unit_test(test_merge_orders_by_time_and_maps_stacks),
        cmocka_unit_test(test_watermark_waits_for_pending_hooks),
        cmocka_unit_test(test_scribbled_record_turns_stream_off),
        cmocka_unit_test(test_times_never_go_back),
        cmocka_unit_test(test_long_merge_flushes_inside),
        cmocka_unit_test(test_stack_ids_cost_what_was_defined),
        cmocka_unit_test(test_exec_closes_the_earlier_image),
        cmocka_unit_test(test_exec_drops_a_later_rss_sample),
        cmocka_unit_test(test_exec_starts_after_the_earlier_image_ends),
        cmocka_unit_test(test_released_address_reused_elsewhere),
        cmocka_unit_test(test_info_lengths_bound_the_copy),
        cmocka_unit_test(test_scribbled_values_are_bounded),
        cmocka_unit_test(test_check_program),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
