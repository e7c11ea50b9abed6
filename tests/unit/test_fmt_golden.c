/* SPDX-License-Identifier: MIT */
/* Old traces stay readable: tests/golden/v1.mscr, written by format 1.0
 * from tfmt_every_kind() with 3 events per chunk, must read back exactly;
 * so must tests/golden/v1_1.mscr, written by format 1.1 from the same
 * events and a deep recursion (stack codes) and heap blocks handed out of
 * order (freed-address ranks). (Their dumps are compared with
 * tests/golden/v1.dump and v1_1.dump by tests/e2e/dump_golden.sh.)
 * tests/golden/v1_3.mscr, format 1.3, holds v1_1's events with times in
 * ns (each a few hundred ns past a whole us) written with a time unit of
 * 1 us: they read back rounded down, in their order. tests/golden/v1_4.mscr,
 * format 1.4, holds them at other times, packed (see test_golden_v1_4).
 * MS_FMT_WRITE_GOLDEN=PATH writes v1.mscr anew with the current writer,
 * MS_FMT_WRITE_GOLDEN_1_1=PATH v1_1.mscr, MS_FMT_WRITE_GOLDEN_1_3=PATH
 * v1_3.mscr, MS_FMT_WRITE_GOLDEN_1_4=PATH v1_4.mscr, MS_FMT_WRITE_GOLDEN_1_5=PATH
 * v1_5.mscr (format 1.5, see test_golden_v1_5), MS_FMT_WRITE_GOLDEN_1_7=PATH v1_7.mscr
 * (format 1.7, see test_golden_v1_7); do that only for a new format version, into a
 * new file, and keep the old ones. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_fmt_util.h"

#ifndef MS_GOLDEN_DIR
#error "MS_GOLDEN_DIR must name tests/golden"
#endif

#define GOLDEN_CHUNK_EVENTS 3
#define GOLDEN11_CHUNK_EVENTS 45 /* the events of v1, then the new ones in a chunk */
#define GOLDEN11_LEVELS 70       /* recursion levels, past the depth limit (64) */
#define GOLDEN11_HEAP 0x5555100000ull

/* The events, with their stacks interned on w (if given) the way they were
 * when the golden file was written: ids 1..5 become 2-frame stacks. */
static size_t golden_events(struct fmt_writer *w, struct fmt_event *ev, size_t max)
{
    size_t n = tfmt_every_kind(ev, max);

    for (size_t i = 0; i < n; i++) {
        if (!ev[i].stack)
            continue;
        uint64_t frames[2] = {0x7f0000001000ull + ev[i].stack * 0x10, 0x7f0000002000ull};
        uint32_t id = 0;
        if (w)
            assert_int_equal(fmt_writer_stack(w, ev[i].image, frames, 2, &id), 0);
        ev[i].stack = id;
    }
    return n;
}

/* Frame i (leaf first) of the stack at recursion level l: three functions
 * calling each other in a fixed irregular order; the leaf is the
 * allocation's call site in the level's function. */
static uint64_t golden11_frame(int l, int i)
{
    int k = l - i;

    return 0x7f0000003000ull + (uint64_t)((k * k + k / 2) % 3) * 0x100 + (i == 0 ? 0x40 : 0);
}

/* v1's events, then on thread 0 (see the file comment): the stacks of
 * every recursion level interned on w (if given), three of them used;
 * nine blocks freed (seven to the model's tcache, two to its fastbin);
 * a fresh block (the model drops those nine as stale), then two of them
 * again, the third and the ninth freed (ranks 6 and 0), all freed. */
static size_t golden11_events(struct fmt_writer *w, struct fmt_event *ev, size_t max)
{
    size_t n = golden_events(w, ev, max);
    uint32_t deep[GOLDEN11_LEVELS] = {0};
    uint64_t ts = 1500;

    for (int l = 0; l < GOLDEN11_LEVELS; l++) {
        uint64_t frames[64];
        int depth = l + 1 < 64 ? l + 1 : 64;
        for (int i = 0; i < depth; i++)
            frames[i] = golden11_frame(l, i);
        if (w)
            assert_int_equal(fmt_writer_stack(w, 0, frames, (uint32_t)depth, &deep[l]), 0);
    }
    for (int i = 0; i < 9; i++) {
        ev[n] = tfmt_mk(FMT_EV_MALLOC, ts += 10, 0);
        ev[n].addr = GOLDEN11_HEAP + 32 * (uint64_t)i;
        ev[n].size = 24;
        ev[n++].stack = deep[GOLDEN11_LEVELS - 9 + i];
    }
    for (int i = 0; i < 9; i++) {
        ev[n] = tfmt_mk(FMT_EV_FREE, ts += 10, 0);
        ev[n++].addr = GOLDEN11_HEAP + 32 * (uint64_t)i;
    }
    static const uint64_t again[3] = {0x1000, 32 * 2, 32 * 8};
    for (int i = 0; i < 3; i++) {
        ev[n] = tfmt_mk(FMT_EV_MALLOC, ts += 10, 0);
        ev[n].addr = GOLDEN11_HEAP + again[i];
        ev[n].size = 24;
        ev[n++].stack = deep[GOLDEN11_LEVELS - 3 + i];
    }
    for (int i = 0; i < 3; i++) {
        ev[n] = tfmt_mk(FMT_EV_FREE, ts += 10, 0);
        ev[n++].addr = GOLDEN11_HEAP + again[i];
    }
    assert_true(n <= max);
    return n;
}

#define GOLDEN13_UNIT 1000 /* ns */

/* v1_1's events at 1000 times their times (so that a time unit of 1 us
 * keeps them apart), each event i a further (i * 337) % 1000 ns later
 * unless rounded: what the writer is given, and what the reader gives
 * back. */
static size_t golden13_events(struct fmt_writer *w, struct fmt_event *ev, size_t max, int rounded)
{
    size_t n = golden11_events(w, ev, max);

    for (size_t i = 0; i < n; i++)
        ev[i].ts_ns = ev[i].ts_ns * GOLDEN13_UNIT + (rounded ? 0 : (i * 337) % GOLDEN13_UNIT);
    return n;
}

static size_t golden13_written(struct fmt_writer *w, struct fmt_event *ev, size_t max)
{
    return golden13_events(w, ev, max, 0);
}

/* v1_1's events at new times, in units of 1 us: deltas of 0, 1 and 2
 * units in runs (four to a byte in format 1.4), cut by larger ones, each
 * time (i * 337) % 1000 ns past its unit unless rounded. */
static size_t golden14_events(struct fmt_writer *w, struct fmt_event *ev, size_t max, int rounded)
{
    static const uint64_t steps[] = {0, 1, 2, 1, 0, 0, 1, 2, 2, 0, 5, 1, 1, 0, 70, 2, 0, 1};
    size_t n = golden11_events(w, ev, max);
    uint64_t units = 3;

    for (size_t i = 0; i < n; i++) {
        units += steps[i % (sizeof(steps) / sizeof(steps[0]))];
        ev[i].ts_ns = units * GOLDEN13_UNIT + (rounded ? 0 : (i * 337) % GOLDEN13_UNIT);
    }
    return n;
}

static size_t golden14_written(struct fmt_writer *w, struct fmt_event *ev, size_t max)
{
    return golden14_events(w, ev, max, 0);
}

static void write_events_pack(const char *path, uint32_t chunk_events, uint32_t time_unit_ns,
                              int time_pack,
                              size_t (*events)(struct fmt_writer *, struct fmt_event *, size_t))
{
    struct tfmt t;
    struct fmt_event ev[256];

    tfmt_start_pack(&t, chunk_events, time_unit_ns, time_pack);
    size_t n = events(t.w, ev, 256);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(fmt_writer_event(t.w, &ev[i]), 0);
    tfmt_save(&t, path);
}

static void write_events(const char *path, uint32_t chunk_events, uint32_t time_unit_ns,
                         size_t (*events)(struct fmt_writer *, struct fmt_event *, size_t))
{
    write_events_pack(path, chunk_events, time_unit_ns, 0, events);
}

static void test_golden_v1(void **state)
{
    struct fmt_reader *r;
    char err[600];
    struct fmt_event want[64];

    (void)state;
    if (getenv("MS_FMT_WRITE_GOLDEN")) {
        write_events(getenv("MS_FMT_WRITE_GOLDEN"), GOLDEN_CHUNK_EVENTS, 0, golden_events);
        skip();
    }
    int rc = fmt_reader_open(&r, MS_GOLDEN_DIR "/v1.mscr", err, sizeof(err));
    if (rc)
        fail_msg("%s", err);

    /* Stack ids as the writer gave them: intern on a scratch writer. */
    struct tfmt t;
    tfmt_start(&t, GOLDEN_CHUNK_EVENTS);
    size_t n = golden_events(t.w, want, 64);
    tfmt_close(&t);

    const struct fmt_trace_info *info = fmt_reader_info(r);
    assert_int_equal(info->version_major, 1);
    assert_int_equal(info->version_minor, 0);
    assert_int_equal(info->start_realtime_ns, 1700000000123456789ull);
    assert_int_equal(info->recorder_pid, 4242);
    assert_string_equal(info->hostname, "testhost");
    assert_false(fmt_reader_incomplete(r));
    struct fmt_trace_counts c;
    fmt_reader_counts(r, &c);
    assert_int_equal(c.nr_events, n);
    assert_int_equal(c.nr_chunks, (n + GOLDEN_CHUNK_EVENTS - 1) / GOLDEN_CHUNK_EVENTS);
    assert_int_equal(c.nr_dropped, 17);
    assert_int_equal(c.nr_images, 2);
    assert_int_equal(c.nr_modules, 1);

    tfmt_read_expect(r, want, n);
    uint64_t frames[4];
    uint32_t image;
    assert_int_equal(fmt_reader_stack(r, want[3].stack, &image, frames, 4), 2);
    assert_int_equal(frames[0], 0x7f0000001010ull);
    assert_int_equal(frames[1], 0x7f0000002000ull);
    fmt_reader_close(r);
}

/* The trace holds exactly the n events want, in nr_chunks chunks. */
static void read_all(struct fmt_reader *r, struct fmt_event *want, size_t n, uint32_t nr_chunks)
{
    struct fmt_trace_counts c;
    struct fmt_event got;
    struct tmodel m;

    fmt_reader_counts(r, &c);
    assert_int_equal(c.nr_events, n);
    assert_int_equal(c.nr_chunks, nr_chunks);
    tmodel_init(&m);
    for (size_t i = 0; i < n; i++) {
        tmodel_apply(&m, &want[i]);
        assert_int_equal(fmt_reader_next(r, &got), 1);
        tfmt_assert_event(&want[i], &got, i);
    }
    tmodel_free(&m);
    assert_int_equal(fmt_reader_next(r, &got), 0);
}

static void test_golden_v1_1(void **state)
{
    struct fmt_reader *r;
    char err[600];
    struct fmt_event want[128];

    (void)state;
    if (getenv("MS_FMT_WRITE_GOLDEN_1_1")) {
        write_events(getenv("MS_FMT_WRITE_GOLDEN_1_1"), GOLDEN11_CHUNK_EVENTS, 0, golden11_events);
        skip();
    }
    int rc = fmt_reader_open(&r, MS_GOLDEN_DIR "/v1_1.mscr", err, sizeof(err));
    if (rc)
        fail_msg("%s", err);
    struct tfmt t;
    tfmt_start(&t, GOLDEN11_CHUNK_EVENTS);
    size_t n = golden11_events(t.w, want, 128);
    tfmt_close(&t);

    const struct fmt_trace_info *info = fmt_reader_info(r);
    assert_int_equal(info->version_major, 1);
    assert_int_equal(info->version_minor, 1);
    struct fmt_trace_counts c;
    fmt_reader_counts(r, &c);
    read_all(r, want, n, 2);
    /* Every level's stack reads back, the windows past the depth limit
     * included (the events name only the last twelve). */
    for (int l = 0; l < GOLDEN11_LEVELS; l++) {
        uint64_t frames[64];
        uint32_t image, id = 0;
        int depth = l + 1 < 64 ? l + 1 : 64;
        for (uint32_t s = 1; s <= c.nr_stacks && !id; s++) {
            if (fmt_reader_stack(r, s, &image, frames, 64) != depth)
                continue;
            int same = 1;
            for (int i = 0; i < depth; i++)
                same &= frames[i] == golden11_frame(l, i);
            id = same ? s : 0;
        }
        assert_true(id != 0);
    }
    fmt_reader_close(r);
}

static void test_golden_v1_3(void **state)
{
    struct fmt_reader *r;
    char err[600];
    struct fmt_event want[128];

    (void)state;
    if (getenv("MS_FMT_WRITE_GOLDEN_1_3")) {
        write_events(getenv("MS_FMT_WRITE_GOLDEN_1_3"), GOLDEN11_CHUNK_EVENTS, GOLDEN13_UNIT,
                     golden13_written);
        skip();
    }
    int rc = fmt_reader_open(&r, MS_GOLDEN_DIR "/v1_3.mscr", err, sizeof(err));
    if (rc)
        fail_msg("%s", err);
    struct tfmt t;
    tfmt_start(&t, GOLDEN11_CHUNK_EVENTS);
    size_t n = golden13_events(t.w, want, 128, 1);
    tfmt_close(&t);

    const struct fmt_trace_info *info = fmt_reader_info(r);
    assert_int_equal(info->version_major, 1);
    assert_int_equal(info->version_minor, 3);
    assert_int_equal(info->time_unit_ns, GOLDEN13_UNIT);
    /* Times rounded down to the microsecond, everything else (references
     * to earlier chunks and their times included) exactly as written. */
    read_all(r, want, n, 2);
    fmt_reader_close(r);
}

/* tests/golden/v1_4.mscr, format 1.4: golden14_events' times, packed
 * (feature bit TIME_PACK), with chunks of 7 events so that groups of
 * digits end at every length where a chunk ends. */
#define GOLDEN14_CHUNK_EVENTS 7

/* A golden file of format 1.minor with packed times (1.4 on), written in
 * chunks of chunk_events at 1 us (time_pack as tfmt_start_pack takes it)
 * when the environment variable env names a path; else read back against
 * events(..., rounded), which give at most 256. */
static void check_packed_golden(const char *file, unsigned minor, uint32_t chunk_events,
                                int time_pack, const char *env,
                                size_t (*events)(struct fmt_writer *, struct fmt_event *, size_t,
                                                 int),
                                size_t (*written)(struct fmt_writer *, struct fmt_event *, size_t))
{
    struct fmt_reader *r;
    char err[600];
    struct fmt_event want[256];

    if (getenv(env)) {
        write_events_pack(getenv(env), chunk_events, GOLDEN13_UNIT, time_pack, written);
        skip();
    }
    int rc = fmt_reader_open(&r, file, err, sizeof(err));
    if (rc)
        fail_msg("%s", err);
    struct tfmt t;
    tfmt_start(&t, GOLDEN11_CHUNK_EVENTS);
    size_t n = events(t.w, want, 256, 1);
    tfmt_close(&t);

    const struct fmt_trace_info *info = fmt_reader_info(r);
    assert_int_equal(info->version_major, 1);
    assert_int_equal(info->version_minor, minor);
    assert_int_equal(info->time_unit_ns, GOLDEN13_UNIT);
    read_all(r, want, n, (uint32_t)((n + chunk_events - 1) / chunk_events));
    fmt_reader_close(r);
}

static void test_golden_v1_4(void **state)
{
    (void)state;
    check_packed_golden(MS_GOLDEN_DIR "/v1_4.mscr", 4, GOLDEN14_CHUNK_EVENTS, 1,
                        "MS_FMT_WRITE_GOLDEN_1_4", golden14_events, golden14_written);
}

/* tests/golden/v1_5.mscr, format 1.5 (feature bit FREE_RANKS): v1_4's
 * events, then on thread 0 eight blocks of 200 bytes and sixty of 24,
 * the eight freed out of order (more than 64 blocks back: references by
 * rank past ended blocks), a block of 40 bytes at the fourth's address
 * (the model's bins and rings of its class do not hold it: named by its
 * rank among the ended addresses), a block of thread 1 freed by thread 0
 * (another context's: 4d + 1), a third of the sixty freed, in chunks of
 * 100 events, so that frees of blocks from the chunk before (serial
 * differences) come too. */
#define GOLDEN15_HEAP 0x5555200000ull
#define GOLDEN15_CHUNK_EVENTS 100

static size_t golden15_events(struct fmt_writer *w, struct fmt_event *ev, size_t max, int rounded)
{
    static const int order[8] = {3, 1, 6, 0, 2, 5, 4, 7};
    size_t n = golden14_events(w, ev, max, rounded);
    uint64_t units = ev[n - 1].ts_ns / GOLDEN13_UNIT;

    for (int i = 0; i < 8; i++) {
        ev[n] = tfmt_mk(FMT_EV_MALLOC, 0, 0);
        ev[n].addr = GOLDEN15_HEAP + 0x100 * (uint64_t)i;
        ev[n].size = 200;
        ev[n++].stack = 1 + (uint32_t)i % 3;
    }
    for (int i = 0; i < 60; i++) { /* the eight now more than 64 blocks back */
        ev[n] = tfmt_mk(FMT_EV_MALLOC, 0, 0);
        ev[n].addr = GOLDEN15_HEAP + 0x10000 + 32 * (uint64_t)i;
        ev[n].size = 24;
        ev[n++].stack = 1;
    }
    for (int i = 0; i < 8; i++) {
        if (i == 4) { /* the fourth's address handed out as another size */
            ev[n] = tfmt_mk(FMT_EV_MALLOC, 0, 0);
            ev[n].addr = GOLDEN15_HEAP + 0x100 * 3;
            ev[n].size = 40;
            ev[n++].stack = 2;
            ev[n] = tfmt_mk(FMT_EV_MALLOC, 0, 1);
            ev[n].addr = GOLDEN15_HEAP + 0x1000;
            ev[n].size = 16;
            ev[n++].stack = 3;
        }
        ev[n] = tfmt_mk(FMT_EV_FREE, 0, 0);
        ev[n++].addr = GOLDEN15_HEAP + 0x100 * (uint64_t)order[i];
    }
    ev[n] = tfmt_mk(FMT_EV_FREE, 0, 0);
    ev[n++].addr = GOLDEN15_HEAP + 0x1000;
    ev[n] = tfmt_mk(FMT_EV_FREE, 0, 0);
    ev[n++].addr = GOLDEN15_HEAP + 0x100 * 3;
    for (int i = 59; i >= 0; i -= 3) {
        ev[n] = tfmt_mk(FMT_EV_FREE, 0, 0);
        ev[n++].addr = GOLDEN15_HEAP + 0x10000 + 32 * (uint64_t)i;
    }
    for (size_t i = n - 101; i < n; i++)
        ev[i].ts_ns = (units += i % 3) * GOLDEN13_UNIT + (rounded ? 0 : (i * 337) % GOLDEN13_UNIT);
    assert_true(n <= max);
    return n;
}

static size_t golden15_written(struct fmt_writer *w, struct fmt_event *ev, size_t max)
{
    return golden15_events(w, ev, max, 0);
}

static void test_golden_v1_5(void **state)
{
    (void)state;
    check_packed_golden(MS_GOLDEN_DIR "/v1_5.mscr", 5, GOLDEN15_CHUNK_EVENTS, 2,
                        "MS_FMT_WRITE_GOLDEN_1_5", golden15_events, golden15_written);
}

/* tests/golden/v1_7.mscr, format 1.7 (feature bit REALLOC_PRED): v1_5's
 * events, then on thread 0 blocks carved from two places (a class's own
 * top, ADDR code 67), reallocs in place (growing, and shrinking with a
 * remainder that the next block of its size takes), moved to the
 * predicted place (code 68), to a class's top, to a recently freed
 * block's address (66) and elsewhere (a difference), a realloc of NULL
 * (a malloc: the tcache's block), of an address not live, to size 0
 * (returning NULL) and a failed one, in chunks of 100 events. */
#define GOLDEN16_HEAP 0x5555300000ull

static size_t golden17_realloc(struct fmt_event *ev, size_t n, uint64_t old, uint64_t addr,
                               uint64_t size)
{
    ev[n] = tfmt_mk(FMT_EV_REALLOC, 0, 0);
    ev[n].old_addr = old;
    ev[n].addr = addr;
    ev[n].size = size;
    ev[n].stack = 2;
    ev[n].flags = old && addr == old ? FMT_EVF_IN_PLACE : 0;
    return n + 1;
}

static size_t golden17_heap(struct fmt_event *ev, size_t n, unsigned kind, uint64_t addr,
                            uint64_t size)
{
    ev[n] = tfmt_mk((uint16_t)kind, 0, 0);
    ev[n].addr = addr;
    ev[n].size = kind == FMT_EV_FREE ? 0 : size;
    ev[n].stack = kind == FMT_EV_FREE ? 0 : 3;
    return n + 1;
}

static size_t golden17_events(struct fmt_writer *w, struct fmt_event *ev, size_t max, int rounded)
{
    const uint64_t h = GOLDEN16_HEAP;
    size_t n = golden15_events(w, ev, max, rounded), first = n;
    uint64_t units = ev[n - 1].ts_ns / GOLDEN13_UNIT;

    n = golden17_heap(ev, n, FMT_EV_MALLOC, h, 24);          /* A, carved */
    n = golden17_heap(ev, n, FMT_EV_MALLOC, h + 0x800, 100); /* B, carved elsewhere */
    n = golden17_heap(ev, n, FMT_EV_MALLOC, h + 0x20, 24);   /* C, after A: 67 */
    n = golden17_realloc(ev, n, h, h, 20);                   /* A in place */
    n = golden17_realloc(ev, n, h + 0x20, h + 0x40, 200);    /* C to the top: 68 */
    n = golden17_realloc(ev, n, h + 0x40, h + 0x40, 40);     /* shrunk: a remainder */
    n = golden17_heap(ev, n, FMT_EV_MALLOC, h + 0x70, 150);  /* the remainder */
    n = golden17_realloc(ev, n, 0, h + 0x20, 24);            /* of NULL: C's old block */
    n = golden17_realloc(ev, n, h + 0x800, 0, 0);            /* B to size 0: NULL */
    n = golden17_realloc(ev, n, h, 0, 1ull << 40);           /* A, failed */
    ev[n - 1].flags = FMT_EVF_FAILED;
    n = golden17_realloc(ev, n, h + 0x5000, h + 0x5000, 64); /* not live */
    n = golden17_heap(ev, n, FMT_EV_MALLOC, h + 0x2000, 500);
    n = golden17_heap(ev, n, FMT_EV_FREE, h + 0x2000, 0);
    n = golden17_realloc(ev, n, h, h + 0x2000, 600);         /* A to a freed block: 66 */
    n = golden17_heap(ev, n, FMT_EV_MALLOC, h + 0x3000, 24); /* carved: class 2's top */
    n = golden17_heap(ev, n, FMT_EV_MALLOC, h + 0x4000, 100);
    n = golden17_realloc(ev, n, h + 0x20, h + 0x3020, 20);   /* to class 2's top: 67 */
    n = golden17_realloc(ev, n, h + 0x3020, h + 0x7770, 90); /* elsewhere: a difference */
    for (size_t i = first; i < n; i++)
        ev[i].ts_ns = (units += i % 2) * GOLDEN13_UNIT + (rounded ? 0 : (i * 211) % GOLDEN13_UNIT);
    assert_true(n <= max);
    return n;
}

static size_t golden17_written(struct fmt_writer *w, struct fmt_event *ev, size_t max)
{
    return golden17_events(w, ev, max, 0);
}

static void test_golden_v1_7(void **state)
{
    (void)state;
    check_packed_golden(MS_GOLDEN_DIR "/v1_7.mscr", 7, GOLDEN15_CHUNK_EVENTS, 3,
                        "MS_FMT_WRITE_GOLDEN_1_7", golden17_events, golden17_written);
}

/* Older files say their times are nanoseconds. */
static void test_golden_ns(void **state)
{
    static const char *const files[] = {MS_GOLDEN_DIR "/v1.mscr", MS_GOLDEN_DIR "/v1_1.mscr"};
    char err[600];

    (void)state;
    for (size_t i = 0; i < 2; i++) {
        struct fmt_reader *r;
        if (fmt_reader_open(&r, files[i], err, sizeof(err)))
            fail_msg("%s", err);
        assert_int_equal(fmt_reader_info(r)->time_unit_ns, 1);
        fmt_reader_close(r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_v1),   cmocka_unit_test(test_golden_v1_1),
        cmocka_unit_test(test_golden_v1_3), cmocka_unit_test(test_golden_v1_4),
        cmocka_unit_test(test_golden_v1_5), cmocka_unit_test(test_golden_v1_7),
        cmocka_unit_test(test_golden_ns),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
