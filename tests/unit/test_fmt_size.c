/* SPDX-License-Identifier: MIT */
/* Size and speed of the encoding on a synthetic malloc/free storm shaped
 * like glibc's: per-thread tcache reuse (LIFO per size class), mixed small
 * sizes, timestamps some tens of nanoseconds apart with jitter. Asserts the
 * size target (docs/format.md: at most 2 bytes per event) and prints the
 * writer's and reader's speed (meaningful in an optimised build without
 * sanitizers: MS_FMT_STORM_PAIRS=10000000 for the full benchmark size). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_fmt_util.h"
#include "test_xorshift.h"

#define STORM_CLASSES 64
#define STORM_TCACHE 7
#define STORM_RING 16 /* blocks each thread keeps alive, as bench/bench_storm.c */

/* A thread's heap as glibc runs it for small chunks: a tcache of 7 chunks
 * per size class, then an unbounded LIFO bin behind it, then fresh chunks
 * carved from the top. */
struct storm_thread {
    uint64_t top;
    uint64_t tcache[STORM_CLASSES][STORM_TCACHE];
    uint32_t nr_tcache[STORM_CLASSES];
    uint64_t *bin[STORM_CLASSES];
    uint32_t nr_bin[STORM_CLASSES];
    uint64_t ring_addr[STORM_RING];
    uint64_t ring_size[STORM_RING];
    uint64_t n;
};

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    return test_xorshift64(&rng);
}

/* CPU time of this thread: on a shared machine wall time measures the
 * neighbours. */
static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint32_t storm_class(uint64_t size, uint64_t *csize)
{
    *csize = (size + 8 + 15) & ~15ull;
    if (*csize < 32)
        *csize = 32;
    return (uint32_t)(*csize >> 4) % STORM_CLASSES;
}

static uint64_t storm_malloc(struct storm_thread *t, uint64_t size)
{
    uint64_t csize;
    uint32_t cls = storm_class(size, &csize);

    if (t->nr_tcache[cls])
        return t->tcache[cls][--t->nr_tcache[cls]];
    if (t->nr_bin[cls])
        return t->bin[cls][--t->nr_bin[cls]];
    uint64_t p = t->top + 16;
    t->top += csize;
    return p;
}

static void storm_free(struct storm_thread *t, uint64_t addr, uint64_t size)
{
    uint64_t csize;
    uint32_t cls = storm_class(size, &csize);

    if (t->nr_tcache[cls] < STORM_TCACHE) {
        t->tcache[cls][t->nr_tcache[cls]++] = addr;
        return;
    }
    if (!t->bin[cls]) {
        t->bin[cls] = malloc(4096 * sizeof(uint64_t));
        assert_non_null(t->bin[cls]);
    }
    assert_true(t->nr_bin[cls] < 4096);
    t->bin[cls][t->nr_bin[cls]++] = addr;
}

struct storm_result {
    double bytes_per_event;
    double write_ns;
    double read_ns;
};

/* pairs malloc/free pairs over nr_threads threads shaped like
 * bench/bench_storm.c (sizes 8..512, each thread frees its oldest of 16
 * live blocks before the next malloc), interleaved in runs of up to 32
 * pairs per thread as a recorder draining per-thread buffers would. */
static void storm(uint64_t pairs, uint32_t nr_threads, int level, struct storm_result *res)
{
    struct tfmt t;
    struct storm_thread *th = calloc(4, sizeof(*th));
    uint32_t stacks[4];
    uint64_t ts = 1000;
    uint64_t t0, t1;

    assert_non_null(th);
    for (uint32_t i = 0; i < 4; i++)
        th[i].top = 0x7f0000000000ull + ((uint64_t)i << 32) + 0x10;
    tfmt_start(&t, 0);
    tfmt_restart(&t, level, 0, 64);
    for (uint32_t i = 0; i < 4; i++) {
        uint64_t frames[6] = {0x401100 + i * 16, 0x401500,     0x402000,
                              0x7f00001234,      0x7f00005678, 0x400800};
        assert_int_equal(fmt_writer_stack(t.w, 0, frames, 6, &stacks[i]), 0);
    }

    t0 = now_ns();
    uint64_t done = 0;
    uint32_t cur = 0;
    struct fmt_event ev = {0};
    ev.pid = 1000;
    while (done < pairs) {
        uint32_t run = 1 + (uint32_t)(rnd() % 32);
        struct storm_thread *s = &th[cur];
        ev.thread = cur;
        ev.tid = 1000 + cur;
        for (uint32_t k = 0; k < run && done < pairs; k++, done++) {
            uint32_t slot = (uint32_t)(s->n++ % STORM_RING);
            if (s->ring_addr[slot]) {
                ev.kind = FMT_EV_FREE;
                ts += 15 + rnd() % 30;
                ev.ts_ns = ts;
                ev.addr = s->ring_addr[slot];
                ev.size = 0;
                ev.stack = 0;
                storm_free(s, ev.addr, s->ring_size[slot]);
                assert_int_equal(fmt_writer_event(t.w, &ev), 0);
            }
            uint64_t size = 8 + rnd() % 505;
            ev.kind = FMT_EV_MALLOC;
            ts += 20 + rnd() % 40;
            ev.ts_ns = ts;
            ev.size = size;
            ev.addr = storm_malloc(s, size);
            ev.stack = stacks[cur];
            s->ring_addr[slot] = ev.addr;
            s->ring_size[slot] = size;
            assert_int_equal(fmt_writer_event(t.w, &ev), 0);
        }
        cur = (cur + 1) % nr_threads;
    }
    /* What is still live stays live: the trace ends with it. */
    uint64_t nr_live = 0;
    for (uint32_t i = 0; i < 4; i++) {
        for (uint32_t c = 0; c < STORM_CLASSES; c++)
            free(th[i].bin[c]);
        nr_live += th[i].n < STORM_RING ? th[i].n : (th[i].n ? STORM_RING : 0);
    }
    free(th);
    assert_int_equal(fmt_writer_finish(t.w), 0);
    t1 = now_ns();
    struct fmt_writer_stats st;
    fmt_writer_get_stats(t.w, &st);
    uint64_t nr_events = 2 * pairs - nr_live;
    assert_int_equal(st.nr_events, nr_events);
    res->bytes_per_event = (double)st.bytes_written / (double)nr_events;
    res->write_ns = (double)(t1 - t0) / (double)nr_events;

    struct fmt_reader *r = tfmt_open(&t);
    uint64_t n = 0, refs = 0;
    int rc;
    t0 = now_ns();
    while ((rc = fmt_reader_next(r, &ev)) > 0) {
        n++;
        refs += ev.ref != 0;
    }
    t1 = now_ns();
    assert_int_equal(rc, 0);
    assert_int_equal(n, nr_events);
    assert_int_equal(refs, pairs - nr_live); /* every free found its block */
    res->read_ns = (double)(t1 - t0) / (double)n;
    fmt_reader_close(r);
    tfmt_close(&t);
}

static uint64_t storm_pairs(void)
{
    const char *s = getenv("MS_FMT_STORM_PAIRS");

    return s ? strtoull(s, NULL, 10) : 1000000;
}

static void report(const char *what, int level, uint64_t pairs, const struct storm_result *r)
{
    printf("storm %s, zstd level %d, %llu pairs: %.3f bytes/event, write %.1f CPU ns/event, "
           "read %.1f CPU ns/event (%.1f M events/s)\n",
           what, level, (unsigned long long)pairs, r->bytes_per_event, r->write_ns, r->read_ns,
           1000.0 / r->read_ns);
}

static void test_storm_one_thread(void **state)
{
    struct storm_result r;
    uint64_t pairs = storm_pairs();

    (void)state;
    storm(pairs, 1, 0, &r);
    report("1 thread", 0, pairs, &r);
    assert_true(r.bytes_per_event <= 2.0);
}

static void test_storm_four_threads(void **state)
{
    struct storm_result r;
    uint64_t pairs = storm_pairs();

    (void)state;
    storm(pairs, 4, 0, &r);
    report("4 threads", 0, pairs, &r);
    assert_true(r.bytes_per_event <= 2.0);
}

/* Every zstd level the writer accepts reads back event for event (storm()
 * asserts the count and that every free finds its block), and a stronger
 * level never writes more than the fastest one. With MS_FMT_LEVELS set, the
 * levels are printed side by side at the benchmark size, to choose the
 * default. */
static void test_storm_levels(void **state)
{
    uint64_t pairs = getenv("MS_FMT_LEVELS") ? storm_pairs() : 100000;
    double fastest = 0;

    (void)state;
    for (int level = -3; level <= 9; level += (level < 3 ? 1 : 3)) {
        struct storm_result r;
        if (!level)
            continue;
        storm(pairs, 1, level, &r);
        if (getenv("MS_FMT_LEVELS"))
            report("1 thread", level, pairs, &r);
        if (level == -3)
            fastest = r.bytes_per_event;
        assert_true(r.bytes_per_event <= fastest);
    }
}

/* A trace whose mallocs are phrases of PHRASE_LEN events (address and
 * size) drawn at random from NR_PHRASES: a phrase recurs every ~64 KB of
 * the ADDR column (about 4 bytes an event), farther than zstd's level 1
 * mostly finds and within the window of the writer's deeper search
 * (fmt_zc.c), as a real program's sizes, addresses and stacks recur.
 * Chunks of 2^16 events, then of chunk_events: format 1.5 at level (0:
 * the default). Returns the file's size. */
#define NR_PHRASES 2000
#define PHRASE_LEN 8
static size_t phrases_trace(int level, uint32_t chunk_events, uint32_t nr_events)
{
    struct fmt_writer_options opt = {.zstd_level = level,
                                     .chunk_events = chunk_events,
                                     .time_unit_ns = 10000,
                                     .time_pack = 1,
                                     .free_ranks = 1};
    static uint64_t addr[NR_PHRASES][PHRASE_LEN], size[NR_PHRASES][PHRASE_LEN];
    uint64_t state = 0x9e3779b97f4a7c15ull, p = 0;
    struct tfmt t;
    size_t bytes;

    for (uint32_t i = 0; i < NR_PHRASES; i++)
        for (uint32_t k = 0; k < PHRASE_LEN; k++) {
            addr[i][k] = 0x7f0000000000ull + (test_xorshift64(&state) & 0xffffff0ull);
            size[i][k] = 16 + test_xorshift64(&state) % 4000;
        }
    tfmt_start_opt(&t, &opt);
    for (uint32_t i = 0; i < nr_events; i++) {
        struct fmt_event ev = tfmt_mk(FMT_EV_MALLOC, 1000 * (uint64_t)i, 0);

        if (i % PHRASE_LEN == 0)
            p = test_xorshift64(&state) % NR_PHRASES;
        ev.addr = addr[p][i % PHRASE_LEN];
        ev.size = size[p][i % PHRASE_LEN];
        assert_int_equal(fmt_writer_event(t.w, &ev), 0);
    }
    tfmt_finish(&t);
    free(tfmt_bytes(t.fd, &bytes));
    tfmt_close(&t);
    return bytes;
}

/* The writer keeps the deeper search for the columns whose repeats it
 * finds. ADDR, most of the bytes, is longer than 256 KiB in chunks of 2^16
 * events and is tried on its first 256 KiB: with chunks of 2^17, the first
 * full chunk is tried and the two after it are not, and keep what it chose
 * (the test fails when that try never chooses the deeper search). */
static void test_deeper_search(void **state)
{
    uint32_t chunk_events[] = {1u << 16, 1u << 17};

    (void)state;
    for (int i = 0; i < 2; i++) {
        uint32_t n = (1u << 16) + 3 * chunk_events[i];
        size_t deep = phrases_trace(0, chunk_events[i], n),
               fast = phrases_trace(1, chunk_events[i], n);

        printf("phrases, chunks of %u events: %zu bytes, %zu at level 1\n", chunk_events[i], deep,
               fast);
        assert_true(deep * 8 < fast * 7);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_storm_one_thread),
        cmocka_unit_test(test_storm_four_threads),
        cmocka_unit_test(test_storm_levels),
        cmocka_unit_test(test_deeper_search),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
