/* SPDX-License-Identifier: MIT */
/* Round trip: events written come back exactly, every kind and field, with
 * back-references resolved, across chunk boundaries, and after seeking. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/fmt_buf_internal.h"
#include "format/fmt_layout_internal.h"
#include "test_fmt_util.h"
#include "test_xorshift.h"

/* A deterministic generator (xorshift), so failures reproduce. */
static uint64_t rng_state;
static uint64_t rnd(void)
{
    return test_xorshift64(&rng_state);
}

/* Write evs with a time unit (0: ns, format 1.1; else format 1.3, or 1.4
 * with packed times), read them back, compare with the model's
 * expectations: times rounded down to the unit, all else exact. */
static void roundtrip_pack(struct fmt_event *evs, size_t n, uint32_t chunk_events,
                           uint32_t time_unit_ns, int time_pack)
{
    struct tfmt t;
    struct tmodel m;
    struct fmt_event *want = calloc(n, sizeof(*want));

    assert_non_null(want);
    tfmt_start_pack(&t, chunk_events, time_unit_ns, time_pack);
    tmodel_init(&m);
    for (size_t i = 0; i < n; i++) {
        if (evs[i].stack > 0) {
            /* Stacks must exist before use: intern a small one per id. */
            uint32_t id;
            uint64_t frames[2] = {0x401000 + evs[i].stack, 0x400500};
            assert_int_equal(fmt_writer_stack(t.w, evs[i].image, frames, 2, &id), 0);
            evs[i].stack = id;
        }
        assert_int_equal(fmt_writer_event(t.w, &evs[i]), 0);
        want[i] = evs[i];
        if (time_unit_ns > 1)
            want[i].ts_ns -= want[i].ts_ns % time_unit_ns;
        tmodel_apply(&m, &want[i]);
    }
    tfmt_finish(&t);

    struct fmt_reader *r = tfmt_open(&t);
    struct fmt_event got;
    size_t i = 0;
    int rc;
    assert_false(fmt_reader_incomplete(r));
    while ((rc = fmt_reader_next(r, &got)) > 0) {
        assert_true(i < n);
        tfmt_assert_event(&want[i], &got, i);
        i++;
    }
    if (rc < 0)
        fail_msg("read failed: %s", fmt_reader_error(r));
    assert_int_equal(i, n);

    /* Every chunk read on its own gives the same events. */
    uint32_t nr_chunks = fmt_reader_nr_chunks(r);
    size_t first = 0;
    for (uint32_t k = 0; k < nr_chunks; k++) {
        const struct fmt_chunk_info *ci = fmt_reader_chunk(r, k);
        assert_int_equal(fmt_reader_seek_chunk(r, k), 0);
        for (uint32_t e = 0; e < ci->nr_events; e++) {
            assert_int_equal(fmt_reader_next(r, &got), 1);
            tfmt_assert_event(&want[first + e], &got, first + e);
        }
        first += ci->nr_events;
    }
    assert_int_equal(first, n);
    fmt_reader_close(r);
    tfmt_close(&t);
    tmodel_free(&m);
    free(want);
}

static void roundtrip_unit(struct fmt_event *evs, size_t n, uint32_t chunk_events,
                           uint32_t time_unit_ns)
{
    roundtrip_pack(evs, n, chunk_events, time_unit_ns, 0);
}

static void roundtrip(struct fmt_event *evs, size_t n, uint32_t chunk_events)
{
    roundtrip_unit(evs, n, chunk_events, 0);
}

/* One event of every kind with every field it has. */
static void test_every_kind(void **state)
{
    struct fmt_event ev[64];
    size_t n = tfmt_every_kind(ev, 64);

    (void)state;
    roundtrip(ev, n, 0);
    roundtrip(ev, n, 1); /* every event its own chunk */
    roundtrip(ev, n, 3);
    /* Format 1.3: split references and the facts' columns, in ns, then
     * with times rounded to 7 ns (the writer's general division). */
    roundtrip_unit(ev, n, 3, 1);
    roundtrip_unit(ev, n, 3, 7);
    /* Format 1.4: the same with packed times. */
    roundtrip_pack(ev, n, 3, 1, 1);
    roundtrip_pack(ev, n, 3, 7, 1);
    /* Format 1.5: recent addresses, ranked references. */
    roundtrip_pack(ev, n, 3, 7, 2);
    roundtrip_pack(ev, n, 0, 1000, 2);
}

/* A random storm over several threads and images with small chunks, so
 * most references cross chunk boundaries. */
static void test_random_storm(void **state)
{
    size_t n = 200000;
    struct fmt_event *evs = calloc(n, sizeof(*evs));
    uint64_t live[3][512] = {{0}};
    uint64_t ts = 1;

    (void)state;
    assert_non_null(evs);
    rng_state = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < n; i++) {
        uint32_t th = (uint32_t)(rnd() % 3);
        uint32_t slot = (uint32_t)(rnd() % 512);
        ts += rnd() % 100;
        if (rnd() % 50 == 0)
            ts -= rnd() % 20; /* the writer copes with slight disorder */
        uint64_t base = 0x100000000ull * (th + 1);
        if (rnd() % 16 == 0) {
            /* Mappings in a 64-page window, overlapping at random: every
             * kind of partial, multiple and replacing unmap. */
            static const uint16_t kinds[4] = {FMT_EV_MMAP, FMT_EV_MUNMAP, FMT_EV_MREMAP,
                                              FMT_EV_MPROTECT};
            uint64_t win = 0x7f0000000000ull;
            evs[i] = tfmt_mk(kinds[rnd() % 4], ts, th);
            evs[i].addr = win + (rnd() % 64) * 4096;
            evs[i].size = (1 + rnd() % 12) * 4096;
            evs[i].stack = (uint32_t)(rnd() % 20);
            evs[i].arg[0] = rnd() % 8;
            evs[i].arg[1] = rnd() % 2 ? 0x22 : 0x32;
            if (evs[i].kind == FMT_EV_MREMAP) {
                evs[i].old_addr = win + (rnd() % 64) * 4096;
                evs[i].old_size = (1 + rnd() % 12) * 4096;
                evs[i].arg[1] = 1;
            }
            if (rnd() % 10 == 0) {
                evs[i].flags = FMT_EVF_FAILED;
                evs[i].addr = UINT64_MAX;
            }
            continue;
        }
        if (!live[th][slot]) {
            evs[i] = tfmt_mk(rnd() % 4 ? FMT_EV_MALLOC : FMT_EV_CALLOC, ts, th);
            evs[i].addr = base + slot * 0x1000 + (rnd() % 16) * 16;
            evs[i].size = rnd() % 300;
            if (evs[i].kind == FMT_EV_CALLOC) {
                evs[i].arg[0] = evs[i].size;
                evs[i].arg[1] = 1;
            }
            evs[i].stack = (uint32_t)(rnd() % 20);
            live[th][slot] = evs[i].addr;
        } else if (rnd() % 5 == 0) {
            evs[i] = tfmt_mk(FMT_EV_REALLOC, ts, th);
            evs[i].old_addr = live[th][slot];
            evs[i].addr = base + slot * 0x1000 + (rnd() % 16) * 16;
            evs[i].size = rnd() % 5000;
            evs[i].stack = (uint32_t)(rnd() % 20);
            live[th][slot] = evs[i].addr;
        } else {
            evs[i] = tfmt_mk(FMT_EV_FREE, ts, th);
            evs[i].addr = rnd() % 100 ? live[th][slot] : 0;
            live[th][slot] = 0;
        }
    }
    roundtrip(evs, n, 997);
    roundtrip(evs, n, 0);
    roundtrip_unit(evs, n, 997, 1); /* format 1.3 */
    roundtrip_unit(evs, n, 997, 1000);
    /* Format 1.4: packed times; in ns most deltas are too large for a
     * digit and some negative, at 1 us most are digits. */
    roundtrip_pack(evs, n, 997, 1, 1);
    roundtrip_pack(evs, n, 997, 1000, 1);
    roundtrip_pack(evs, n, 997, 1000, 2); /* format 1.5 */
    roundtrip_pack(evs, n, 0, 1000, 2);
    free(evs);
}

/* Packed times (format 1.4): deltas of every token kind (groups of four
 * digits, groups cut short by a large delta or by the chunk's end at each
 * length, single deltas below 64 units and far above), in TIME and in
 * FREE_TIME, with chunks of 1 to 9 events so that groups end at every
 * position of a chunk; every event read back exactly. */
static void test_time_pack(void **state)
{
    static const uint64_t steps[] = {0,  1, 2, 0, 1, 1,       2, 2, 0,          3, 0, 1, 63,
                                     64, 2, 2, 0, 1, 5000000, 0, 0, 1ull << 40, 1, 0, 2, 7};
    size_t n = 2000;
    struct fmt_event *evs = calloc(n, sizeof(*evs));
    uint64_t ts = 1000, unit = 1000;

    (void)state;
    assert_non_null(evs);
    for (size_t i = 0; i < n; i++) {
        /* A step a little past whole units: the writer rounds down. */
        ts += steps[(i * 7 + i / 26) % (sizeof(steps) / sizeof(steps[0]))] * unit;
        evs[i] = tfmt_mk(i % 2 ? FMT_EV_FREE : FMT_EV_MALLOC, ts + i % unit, 0);
        evs[i].addr = 0x10000 + 64 * (i / 2 % 8);
        evs[i].size = i % 2 ? 0 : 24;
        evs[i].stack = 1 + (uint32_t)(i % 3);
    }
    for (uint32_t chunk = 1; chunk <= 9; chunk++)
        roundtrip_pack(evs, n, chunk, (uint32_t)unit, 1);
    roundtrip_pack(evs, n, 0, (uint32_t)unit, 1);
    free(evs);
}

/* Addresses glibc hands back out of order (format 1.1 codes them as the
 * rank among the class's freed addresses): allocations that reuse one of
 * the thread's recently freed addresses at random, in the same or another
 * size class, beside fresh ones, failed ones, addresses far from any
 * prediction and two whose difference to it does not fit beside the codes
 * (the escape), over two threads and small chunks. */
static void test_freed_reuse(void **state)
{
    size_t n = 100000;
    struct fmt_event *evs = calloc(n, sizeof(*evs));
    uint64_t live[2][64] = {{0}}, freed[2][128] = {{0}};
    uint32_t nr_freed[2] = {0, 0};
    uint64_t ts = 1;

    (void)state;
    assert_non_null(evs);
    rng_state = 777;
    /* The first in its chunk is predicted at 0, the next right after it
     * (0x1020): 2^63 bytes from the prediction, either way, does not fit
     * beside the codes and escapes. */
    evs[0] = tfmt_mk(FMT_EV_MALLOC, ts, 0);
    evs[0].addr = 0x1000;
    evs[0].size = 24;
    evs[1] = evs[0];
    evs[1].addr = 0x8000000000001020ull;
    evs[2] = evs[0];
    evs[2].addr = 0x1040; /* the guess is 0x8000000000001040 now */
    for (size_t i = 3; i < n; i++) {
        uint32_t th = (uint32_t)(rnd() % 2);
        uint32_t slot = (uint32_t)(rnd() % 64);
        ts += rnd() % 50;
        if (live[th][slot]) {
            evs[i] = tfmt_mk(FMT_EV_FREE, ts, th);
            evs[i].addr = live[th][slot];
            freed[th][nr_freed[th]++ % 128] = live[th][slot];
            live[th][slot] = 0;
            continue;
        }
        evs[i] = tfmt_mk(FMT_EV_MALLOC, ts, th);
        evs[i].size = 8 + (rnd() % 4) * 16 + (rnd() % 30 == 0) * 600;
        evs[i].stack = 1;
        uint64_t r = rnd() % 100;
        if (r < 60 && nr_freed[th])
            evs[i].addr = freed[th][(nr_freed[th] - 1 - rnd() % 80) % 128];
        else if (r < 62)
            evs[i].addr = 0xfffffffff0000000ull - th * 0x1000000 - (rnd() % 4) * 16; /* far */
        else if (r < 63)
            evs[i].addr = 0;
        else
            evs[i].addr = 0x100000000ull * (th + 1) + (rnd() % 4096) * 16;
        for (int k = 0; k < 64; k++)
            if (live[th][k] == evs[i].addr)
                evs[i].addr += 0x100000; /* not live twice */
        if (!evs[i].addr)
            evs[i].flags = FMT_EVF_FAILED;
        live[th][slot] = evs[i].addr;
    }
    roundtrip(evs, n, 501);
    roundtrip(evs, n, 0);
    roundtrip_pack(evs, n, 501, 1000, 2); /* format 1.5: recent addresses */
    roundtrip_pack(evs, n, 0, 1, 2);
    free(evs);
}

/* The stored bytes of column id in the chunks of t's file (0: absent). */
static uint64_t column_bytes(struct tfmt *t, unsigned id)
{
    size_t size;
    uint8_t *p = tfmt_bytes(t->fd, &size);
    uint64_t sum = 0;

    for (size_t off = 64; off + 24 <= size && !memcmp(p + off, "MSBK", 4);) {
        uint32_t stored = (uint32_t)p[off + 8] | (uint32_t)p[off + 9] << 8 |
                          (uint32_t)p[off + 10] << 16 | (uint32_t)p[off + 11] << 24;
        if (p[off + 4] == 2) { /* a CHUNK: number, events, serial, time, columns */
            struct fmt_cur c;
            fmt_cur_init(&c, p + off + 24, stored);
            for (int i = 0; i < 4; i++)
                (void)fmt_cur_varint(&c);
            uint64_t nr = fmt_cur_varint(&c);
            for (uint64_t i = 0; i < nr; i++) {
                uint64_t cid = fmt_cur_varint(&c);
                (void)fmt_cur_varint(&c);
                (void)fmt_cur_varint(&c);
                uint64_t z = fmt_cur_varint(&c);
                sum += cid == id ? z : 0;
            }
        }
        off += 24 + stored;
    }
    free(p);
    return sum;
}

/* Format 1.5's references by rank and recent addresses over long spans:
 * one thread keeps up to 6,000 blocks live and frees one at random (ranks
 * past many 512-block counts, both ways), a second thread frees some of
 * them (another context's blocks, which stay counted), and every other
 * allocation takes an address freed a little earlier as another size (the
 * recent ring; ADDR_REC must be used). Small chunks as well: blocks of
 * earlier chunks by serial differences, both signs. */
static void test_ranks(void **state)
{
    enum { LIVE = 6000 };
    size_t n = 120000;
    struct fmt_event *evs = calloc(n, sizeof(*evs));
    uint64_t *live = calloc(LIVE, sizeof(*live));
    uint64_t freed[16] = {0}, ts = 1, next = 0x10000000;
    uint32_t nr_freed = 0;
    size_t i = 0;

    (void)state;
    assert_non_null(evs);
    assert_non_null(live);
    rng_state = 4242;
    for (int k = 0; k < LIVE; k++) {
        evs[i] = tfmt_mk(FMT_EV_MALLOC, ts += rnd() % 300, 0);
        evs[i].addr = live[k] = next += 0x400;
        evs[i].size = 16 + rnd() % 900;
        evs[i++].stack = 1 + (uint32_t)(rnd() % 4);
    }
    while (i + 2 < n) {
        uint32_t k = (uint32_t)(rnd() % LIVE);
        evs[i] = tfmt_mk(FMT_EV_FREE, ts += rnd() % 300, rnd() % 8 == 0);
        evs[i++].addr = live[k];
        freed[nr_freed++ % 16] = live[k];
        evs[i] = tfmt_mk(FMT_EV_MALLOC, ts += rnd() % 300, 0);
        evs[i].size = 16 + rnd() % 900;
        evs[i].stack = 1 + (uint32_t)(rnd() % 4);
        /* a freed address at most once (0 once taken), or a fresh one */
        uint64_t *a = &freed[(nr_freed - 1 - rnd() % 8) % 16];
        evs[i++].addr = live[k] = *a && rnd() % 2 ? *a : (next += 0x400);
        if (live[k] == *a)
            *a = 0;
    }
    n = i;
    struct fmt_event *copy = malloc(n * sizeof(*copy));
    assert_non_null(copy);
    memcpy(copy, evs, n * sizeof(*copy));
    roundtrip_pack(evs, n, 0, 1000, 2);
    memcpy(evs, copy, n * sizeof(*copy));
    roundtrip_pack(evs, n, 7001, 1000, 2);

    /* The recent ring named addresses: ADDR_REC holds their ranks. */
    struct tfmt t;
    tfmt_start_pack(&t, 0, 1000, 2);
    memcpy(evs, copy, n * sizeof(*copy));
    for (size_t j = 0; j < n; j++) {
        uint32_t id;
        uint64_t frames[2] = {0x401000 + evs[j].stack, 0x400500};
        assert_int_equal(fmt_writer_stack(t.w, 0, frames, 2, &id), 0);
        evs[j].stack = id;
        assert_int_equal(fmt_writer_event(t.w, &evs[j]), 0);
    }
    tfmt_finish(&t);
    assert_true(column_bytes(&t, FMT_COL_ADDR_REC) > 0);
    tfmt_close(&t);
    free(copy);
    free(live);
    free(evs);
}

/* A program with more threads than a chunk may hold: the writer ends
 * chunks early (docs/format.md, "Contexts"), and everything reads back. */
static void test_many_threads(void **state)
{
    enum { THREADS = 10000 };
    struct fmt_event *evs = calloc(2 * THREADS, sizeof(*evs));
    size_t n = 0;

    (void)state;
    assert_non_null(evs);
    for (uint32_t t = 0; t < THREADS; t++) {
        evs[n] = tfmt_mk(FMT_EV_MALLOC, n, t);
        evs[n].addr = 0x10000 + (uint64_t)t * 0x100;
        evs[n++].size = 10 + t % 100;
    }
    for (uint32_t t = 0; t < THREADS; t++) {
        evs[n] = tfmt_mk(FMT_EV_FREE, n, t);
        evs[n++].addr = 0x10000 + (uint64_t)t * 0x100;
    }
    roundtrip(evs, n, 0);

    struct tfmt tf;
    tfmt_start(&tf, 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(fmt_writer_event(tf.w, &evs[i]), 0);
    tfmt_finish(&tf);
    struct fmt_reader *r = tfmt_open(&tf);
    /* 4096 threads at most per chunk: 20000 events need 5 chunks. */
    assert_int_equal(fmt_reader_nr_chunks(r), 5);
    assert_int_equal(fmt_reader_nr_threads(r), THREADS);
    fmt_reader_close(r);
    tfmt_close(&tf);
    free(evs);
}

/* Stacks come back leaf first; shared prefixes share nodes. */
static void test_stacks(void **state)
{
    struct tfmt t;
    uint64_t deep[300];
    uint32_t a, b, c, d, e, again;
    uint64_t frames[400];
    uint32_t image;

    (void)state;
    for (int i = 0; i < 300; i++)
        deep[i] = i % 3 ? 0x401234 : 0x401300; /* recursion: repeated addresses */
    tfmt_start(&t, 0);
    uint64_t s1[3] = {0x1000, 0x2000, 0x3000};
    uint64_t s2[3] = {0x1111, 0x2000, 0x3000};
    assert_int_equal(fmt_writer_stack(t.w, 0, s1, 3, &a), 0);
    assert_int_equal(fmt_writer_stack(t.w, 0, s2, 3, &b), 0);
    assert_int_equal(fmt_writer_stack(t.w, 1, s1, 3, &c), 0);
    assert_int_equal(fmt_writer_stack(t.w, 0, deep, 300, &d), 0);
    assert_int_equal(fmt_writer_stack(t.w, 0, NULL, 0, &e), 0);
    assert_int_equal(fmt_writer_stack(t.w, 0, s1, 3, &again), 0);
    assert_int_equal(a, again);
    assert_int_not_equal(a, b);
    assert_int_not_equal(a, c);
    assert_int_not_equal(e, 0);
    /* s1 and s2 share two nodes: 3 + 1 for image 0, 3 for image 1,
     * 300 for the deep one, 1 for the empty stack. */
    struct fmt_writer_stats st;
    fmt_writer_get_stats(t.w, &st);
    assert_int_equal(st.nr_stacks, 3 + 1 + 3 + 300 + 1);
    tfmt_finish(&t);

    struct fmt_reader *r = tfmt_open(&t);
    assert_int_equal(fmt_reader_stack(r, a, &image, frames, 400), 3);
    assert_int_equal(image, 0);
    assert_memory_equal(frames, s1, sizeof(s1));
    assert_int_equal(fmt_reader_stack(r, b, &image, frames, 400), 3);
    assert_memory_equal(frames, s2, sizeof(s2));
    assert_int_equal(fmt_reader_stack(r, c, &image, frames, 400), 3);
    assert_int_equal(image, 1);
    assert_int_equal(fmt_reader_stack(r, d, &image, frames, 400), 300);
    assert_memory_equal(frames, deep, sizeof(deep));
    assert_int_equal(fmt_reader_stack(r, d, &image, frames, 10), 300); /* depth, 10 written */
    assert_int_equal(fmt_reader_stack(r, e, &image, frames, 400), 0);
    assert_int_equal(fmt_reader_stack(r, 0, &image, frames, 400), -EINVAL);
    assert_int_equal(fmt_reader_stack(r, 100000, &image, frames, 400), -EINVAL);
    uint32_t parent;
    uint64_t addr;
    assert_int_equal(fmt_reader_stack_node(r, a, &parent, &addr, &image), 0);
    assert_int_equal(addr, 0x1000);
    assert_int_equal(fmt_reader_stack_node(r, parent, NULL, &addr, NULL), 0);
    assert_int_equal(addr, 0x2000);
    fmt_reader_close(r);
    tfmt_close(&t);
}

/* Deep recursion cut at the depth limit: consecutive stacks are windows of
 * one path shifted by a frame. Each must cost one node, not a stack's
 * worth, and read back exactly. */
static uint64_t window_frame(const uint64_t *path, int l, uint32_t i, int leaf_differs)
{
    /* With leaf_differs, the leaf is the malloc call's return address in
     * the level's function, the other frames the recursive calls'. */
    return path[l - (int)i] + (leaf_differs && i == 0 ? 0x10 : 0);
}

static void stack_windows(int leaf_differs)
{
    enum { DEPTH = 16, LEVELS = 3000, WALKS = 3 };
    struct tfmt t;
    uint64_t path[LEVELS];
    static uint32_t ids[WALKS][LEVELS];
    uint64_t frames[64];
    uint32_t image;

    tfmt_start(&t, 0);
    tfmt_restart(&t, 0, 0, DEPTH);
    for (int w = 0; w < WALKS; w++) {
        rng_state = 99 + (uint64_t)w;
        for (int l = 0; l < LEVELS; l++)
            path[l] = 0x401000 + (rnd() % 8) * 0x40; /* 8 functions calling each other */
        for (int l = 0; l < LEVELS; l++) {
            uint64_t win[DEPTH];
            uint32_t n = l + 1 < DEPTH ? (uint32_t)l + 1 : DEPTH;
            for (uint32_t i = 0; i < n; i++)
                win[i] = window_frame(path, l, i, leaf_differs);
            assert_int_equal(fmt_writer_stack(t.w, 0, win, n, &ids[w][l]), 0);
        }
    }
    struct fmt_writer_stats st;
    fmt_writer_get_stats(t.w, &st);
    /* Up to DEPTH nodes to start each walk, then at most two per level
     * (fewer where windows repeat); without windows it would be DEPTH. */
    assert_true(st.nr_stacks <= WALKS * (2 * LEVELS + DEPTH));
    assert_true(st.nr_stacks >= LEVELS);
    tfmt_finish(&t);

    struct fmt_reader *r = tfmt_open(&t);
    for (int w = 0; w < WALKS; w++) {
        rng_state = 99 + (uint64_t)w;
        for (int l = 0; l < LEVELS; l++)
            path[l] = 0x401000 + (rnd() % 8) * 0x40;
        for (int l = 0; l < LEVELS; l++) {
            uint32_t n = l + 1 < DEPTH ? (uint32_t)l + 1 : DEPTH;
            assert_int_equal(fmt_reader_stack(r, ids[w][l], &image, frames, 64), (int)n);
            for (uint32_t i = 0; i < n; i++)
                assert_int_equal(frames[i], window_frame(path, l, i, leaf_differs));
        }
    }
    fmt_reader_close(r);
    tfmt_close(&t);
}

static void test_stack_windows(void **state)
{
    (void)state;
    stack_windows(0);
    stack_windows(1);
}

/* Stack node addresses coded as candidates (STACK_CODES): random stacks
 * over a small set of return addresses, many more parent addresses than
 * the candidate tables have slots (so lists are evicted and rebuilt), in
 * two images and over many DEFS blocks, read back exactly. */
static void test_stack_codes(void **state)
{
    enum { NR = 20000, MAXD = 12 };
    struct tfmt t;
    static uint32_t ids[NR];
    uint64_t frames[MAXD];
    uint32_t image;

    (void)state;
    tfmt_start(&t, 7);
    for (int pass = 0; pass < 2; pass++) {
        rng_state = 4242;
        struct fmt_reader *r = pass ? tfmt_open(&t) : NULL;
        for (int i = 0; i < NR; i++) {
            uint32_t n = (uint32_t)(rnd() % MAXD) + 1;
            uint32_t img = (uint32_t)(rnd() % 2);
            uint64_t f[MAXD];
            for (uint32_t k = 0; k < n; k++)
                f[k] = 0x400000 + (rnd() % (i < NR / 2 ? 12000 : 6)) * 16;
            if (!pass) {
                assert_int_equal(fmt_writer_stack(t.w, img, f, n, &ids[i]), 0);
                struct fmt_event ev = tfmt_mk(FMT_EV_MALLOC, (uint64_t)i, 0);
                ev.addr = 0x10000 + (uint64_t)i * 64;
                ev.size = 24;
                ev.stack = ids[i];
                assert_int_equal(fmt_writer_event(t.w, &ev), 0);
                continue;
            }
            assert_int_equal(fmt_reader_stack(r, ids[i], &image, frames, MAXD), (int)n);
            assert_int_equal(image, img);
            assert_memory_equal(frames, f, n * sizeof(*f));
        }
        if (pass)
            fmt_reader_close(r);
        else
            tfmt_finish(&t);
    }
    tfmt_close(&t);
}

/* Header, metadata and the tables of images, threads and modules. */
static void test_tables(void **state)
{
    struct tfmt t;
    struct fmt_event ev;

    (void)state;
    tfmt_start(&t, 2);
    ev = tfmt_mk(FMT_EV_PROCESS_START, 10, 0);
    ev.arg[0] = 1;
    ev.str = "/bin/true";
    ev.str_len = 9;
    ev.str2 = "true\0--help";
    ev.str2_len = 11;
    assert_int_equal(fmt_writer_event(t.w, &ev), 0);
    ev = tfmt_mk(FMT_EV_THREAD_START, 11, 1);
    ev.str = "first";
    ev.str_len = 5;
    assert_int_equal(fmt_writer_event(t.w, &ev), 0);
    ev = tfmt_mk(FMT_EV_THREAD_NAME, 12, 1);
    ev.str = "renamed";
    ev.str_len = 7;
    assert_int_equal(fmt_writer_event(t.w, &ev), 0);
    ev = tfmt_mk(FMT_EV_MODULE_LOAD, 13, 0);
    ev.module = &tfmt_test_module;
    assert_int_equal(fmt_writer_event(t.w, &ev), 0);
    ev = tfmt_mk(FMT_EV_THREAD_EXIT, 14, 1);
    assert_int_equal(fmt_writer_event(t.w, &ev), 0);
    ev = tfmt_mk(FMT_EV_PROCESS_EXIT, 15, 0);
    ev.arg[0] = 3 << 8;
    ev.arg[1] = 1;
    assert_int_equal(fmt_writer_event(t.w, &ev), 0);
    tfmt_finish(&t);

    struct fmt_reader *r = tfmt_open(&t);
    const struct fmt_trace_info *info = fmt_reader_info(r);
    assert_int_equal(info->version_major, 1);
    assert_int_equal(info->start_realtime_ns, 1700000000123456789ull);
    assert_int_equal(info->start_monotonic_ns, 5000000000ull);
    assert_int_equal(info->recorder_pid, 4242);
    assert_int_equal(info->stack_depth, 64);
    assert_int_equal(info->command_len, 15);
    assert_memory_equal(info->command, "prog\0arg1\0arg 2", 15);
    assert_string_equal(info->hostname, "testhost");
    assert_null(info->only); /* not filtered by record --only */

    struct fmt_trace_counts c;
    fmt_reader_counts(r, &c);
    assert_int_equal(c.nr_events, 6);
    assert_int_equal(c.nr_chunks, 3);
    assert_int_equal(c.nr_images, 1);
    assert_int_equal(c.nr_threads, 2);
    assert_int_equal(c.nr_modules, 1);
    assert_int_equal(c.first_ts_ns, 10);
    assert_int_equal(c.last_ts_ns, 15);

    const struct fmt_image_info *im = fmt_reader_image(r, 0);
    assert_non_null(im);
    assert_true(im->has_start);
    assert_int_equal(im->pid, 100);
    assert_int_equal(im->ppid, 1);
    assert_string_equal(im->exe, "/bin/true");
    assert_int_equal(im->argv_len, 11);
    assert_true(im->ended);
    assert_int_equal(im->end_ns, 15);
    assert_true(im->status_known);
    assert_int_equal(im->exit_status, 3 << 8);
    assert_null(fmt_reader_image(r, 1));

    const struct fmt_thread_info *th = fmt_reader_thread(r, 1);
    assert_non_null(th);
    assert_int_equal(th->thread, 1);
    assert_int_equal(th->tid, 107);
    assert_string_equal(th->name, "renamed");
    assert_int_equal(th->start_ns, 11);
    assert_true(th->ended);
    assert_int_equal(th->end_ns, 14);

    const struct fmt_module_info *mi = fmt_reader_module(r, 0);
    assert_non_null(mi);
    assert_int_equal(mi->id, 1);
    assert_int_equal(mi->load_ns, 13);
    assert_string_equal(mi->m.path, tfmt_test_module.path);
    assert_ptr_equal(fmt_reader_find_module(r, 0, tfmt_test_module.base + 0x1234), mi);
    assert_null(fmt_reader_find_module(r, 0, tfmt_test_module.base + 0x7000));
    assert_null(fmt_reader_find_module(r, 1, tfmt_test_module.base + 0x1234));

    /* Chunk index and seeking by time. */
    assert_int_equal(fmt_reader_nr_chunks(r), 3);
    assert_int_equal(fmt_reader_chunk(r, 1)->first_ts_ns, 12);
    assert_int_equal(fmt_reader_chunk(r, 1)->last_ts_ns, 13);
    assert_int_equal(fmt_reader_find_chunk(r, 0), 0);
    assert_int_equal(fmt_reader_find_chunk(r, 13), 1);
    assert_int_equal(fmt_reader_find_chunk(r, 14), 2);
    assert_int_equal(fmt_reader_find_chunk(r, 16), 3);
    assert_int_equal(fmt_reader_seek_time(r, 14), 0);
    assert_int_equal(fmt_reader_next(r, &ev), 1);
    assert_int_equal(ev.ts_ns, 14);
    assert_int_equal(ev.kind, FMT_EV_THREAD_EXIT);
    assert_int_equal(fmt_reader_seek_chunk(r, 4), -EINVAL);
    assert_int_equal(fmt_reader_seek_chunk(r, 3), 0);
    assert_int_equal(fmt_reader_next(r, &ev), 0);
    /* A range of chunks (a parallel replay's): chunk 1 alone, then to the
     * end again after a plain seek. */
    assert_int_equal(fmt_reader_seek_range(r, 1, 4), -EINVAL);
    assert_int_equal(fmt_reader_seek_range(r, 1, 2), 0);
    uint64_t n = 0;
    while (fmt_reader_next(r, &ev) == 1) {
        assert_true(ev.ts_ns >= 12 && ev.ts_ns <= 13);
        n++;
    }
    assert_int_equal(n, fmt_reader_chunk(r, 1)->nr_events);
    assert_int_equal(fmt_reader_seek_chunk(r, 1), 0);
    n = 0;
    while (fmt_reader_next(r, &ev) == 1)
        n++;
    assert_int_equal(n, fmt_reader_chunk(r, 1)->nr_events + fmt_reader_chunk(r, 2)->nr_events);
    /* Every chunk held against its summary: the writer's are right. */
    fmt_reader_verify_summaries(r, 1);
    n = 0;
    while (fmt_reader_next(r, &ev) == 1)
        n++;
    assert_int_equal(n, c.nr_events);
    fmt_reader_close(r);
    tfmt_close(&t);
}

/* An image seen only through its events still has its pid and start. */
/* record --only's glob travels in the metadata (META record 4). */
static void test_only_meta(void **state)
{
    struct tfmt t;

    (void)state;
    tfmt_start(&t, 0);
    t.info.only = "cc1*";
    tfmt_restart(&t, 0, 0, 64);
    tfmt_finish(&t);

    struct fmt_reader *r = tfmt_open(&t);
    const struct fmt_trace_info *info = fmt_reader_info(r);
    assert_string_equal(info->only, "cc1*");
    assert_string_equal(info->hostname, "testhost");
    assert_int_equal(info->stack_depth, 64);
    fmt_reader_close(r);
    tfmt_close(&t);
}

static void test_image_without_start(void **state)
{
    struct tfmt t;
    struct fmt_event ev = tfmt_mk(FMT_EV_MALLOC, 77, 0);

    (void)state;
    ev.image = 3;
    ev.pid = 4321;
    ev.addr = 0x1000;
    ev.size = 8;
    tfmt_start(&t, 0);
    assert_int_equal(fmt_writer_event(t.w, &ev), 0);
    tfmt_finish(&t);
    struct fmt_reader *r = tfmt_open(&t);
    assert_int_equal(fmt_reader_nr_images(r), 4);
    const struct fmt_image_info *im = fmt_reader_image(r, 3);
    assert_false(im->has_start);
    assert_int_equal(im->pid, 4321);
    assert_int_equal(im->start_ns, 77);
    assert_null(im->exe);
    assert_int_equal(fmt_reader_image(r, 1)->pid, 0); /* never named at all */
    fmt_reader_close(r);
    tfmt_close(&t);
}

struct live_sum {
    int64_t bytes[64];
    int64_t blocks[64];
};

static void live_visit(void *arg, uint32_t stack, int64_t bytes, int64_t blocks)
{
    struct live_sum *s = arg;

    assert_true(stack < 64);
    s->bytes[stack] += bytes;
    s->blocks[stack] += blocks;
}

/* Live heap per stack at each chunk start equals what replaying gives. */
static void test_live_at_chunk(void **state)
{
    struct tfmt t;
    uint32_t ids[8];
    uint64_t live_addr[100] = {0}, live_size[100] = {0};
    uint32_t live_stack[100] = {0};
    int64_t want_bytes[20][64], want_blocks[20][64];
    int64_t cur_bytes[64] = {0}, cur_blocks[64] = {0};
    uint64_t ts = 0;

    (void)state;
    rng_state = 12345;
    tfmt_start(&t, 50);
    for (int i = 0; i < 8; i++) {
        uint64_t f[2] = {0x1000 + (uint64_t)i, 0x9000};
        assert_int_equal(fmt_writer_stack(t.w, 0, f, 2, &ids[i]), 0);
        assert_true(ids[i] < 64);
    }
    for (int i = 0; i < 1000; i++) {
        if (i % 50 == 0) {
            memcpy(want_bytes[i / 50], cur_bytes, sizeof(cur_bytes));
            memcpy(want_blocks[i / 50], cur_blocks, sizeof(cur_blocks));
        }
        int slot = (int)(rnd() % 100);
        struct fmt_event ev = tfmt_mk(FMT_EV_MALLOC, ts++, 0);
        if (live_addr[slot]) {
            ev.kind = FMT_EV_FREE;
            ev.addr = live_addr[slot];
            cur_bytes[live_stack[slot]] -= (int64_t)live_size[slot];
            cur_blocks[live_stack[slot]]--;
            live_addr[slot] = 0;
        } else {
            ev.addr = 0x10000 + (uint64_t)slot * 64;
            ev.size = rnd() % 1000;
            ev.stack = ids[rnd() % 8];
            live_addr[slot] = ev.addr;
            live_size[slot] = ev.size;
            live_stack[slot] = ev.stack;
            cur_bytes[ev.stack] += (int64_t)ev.size;
            cur_blocks[ev.stack]++;
        }
        assert_int_equal(fmt_writer_event(t.w, &ev), 0);
    }
    tfmt_finish(&t);
    struct fmt_reader *r = tfmt_open(&t);
    assert_int_equal(fmt_reader_nr_chunks(r), 20);
    for (uint32_t k = 0; k < 20; k++) {
        struct live_sum s;
        memset(&s, 0, sizeof(s));
        assert_int_equal(fmt_reader_live_at_chunk(r, k, live_visit, &s), 0);
        assert_memory_equal(s.bytes, want_bytes[k], sizeof(s.bytes));
        assert_memory_equal(s.blocks, want_blocks[k], sizeof(s.blocks));
    }
    fmt_reader_close(r);
    tfmt_close(&t);
}

/* fmt_writer_flush() ends a chunk at once: what was flushed can be read
 * while the trace is still being written (as incomplete), and the stats
 * count the file exactly. */
/* Chunk sizes: the first holds 65,536 events and each next twice as many
 * up to the writer's chunk_events (262,144 by default), or chunk_events
 * from the first if that is less; the events of every size read back
 * whole (format 1.5, whose level try runs on each growing chunk). */
static void chunk_sizes(uint32_t chunk_events, const uint32_t *want, uint32_t nr_want)
{
    struct tfmt t;
    struct fmt_event ev = tfmt_mk(FMT_EV_MALLOC, 10, 0);
    uint64_t n = 0;

    for (uint32_t k = 0; k < nr_want; k++)
        n += want[k];
    tfmt_start_pack(&t, chunk_events, 1000, 2);
    for (uint64_t i = 0; i < n; i++) {
        ev.kind = i % 2 ? FMT_EV_FREE : FMT_EV_MALLOC;
        ev.ts_ns = 1000 * i;
        ev.addr = 0x10000 + 64 * (i / 2 % 100);
        ev.size = i % 2 ? 0 : 24 + i % 7;
        assert_int_equal(fmt_writer_event(t.w, &ev), 0);
    }
    tfmt_finish(&t);

    struct fmt_reader *r = tfmt_open(&t);
    struct fmt_event got;
    uint64_t nr_read = 0;
    int rc;

    assert_int_equal(fmt_reader_nr_chunks(r), nr_want);
    for (uint32_t k = 0; k < nr_want; k++)
        assert_int_equal(fmt_reader_chunk(r, k)->nr_events, want[k]);
    while ((rc = fmt_reader_next(r, &got)) > 0) {
        assert_int_equal(got.ts_ns, 1000 * nr_read);
        nr_read++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(nr_read, n);
    fmt_reader_close(r);
    tfmt_close(&t);
}

static void test_chunk_growth(void **state)
{
    static const uint32_t by_default[] = {65536, 131072, 262144, 524288, 12345};
    static const uint32_t to_100k[] = {65536, 100000, 100000, 7};
    static const uint32_t small[] = {1000, 1000, 1};

    (void)state;
    chunk_sizes(0, by_default, 5);
    chunk_sizes(100000, to_100k, 4);
    chunk_sizes(1000, small, 3);
}

static void test_flush(void **state)
{
    struct tfmt t;
    struct fmt_event ev = tfmt_mk(FMT_EV_MALLOC, 10, 0);
    struct fmt_writer_stats st;

    (void)state;
    tfmt_start(&t, 0);
    for (int i = 0; i < 5; i++) {
        ev.ts_ns = 10 + (uint64_t)i;
        ev.addr = 0x1000 + (uint64_t)i * 64;
        ev.size = 16;
        assert_int_equal(fmt_writer_event(t.w, &ev), 0);
    }
    assert_int_equal(fmt_writer_flush(t.w), 0);
    assert_int_equal(fmt_writer_flush(t.w), 0); /* nothing new: no empty chunk */
    ev.ts_ns = 20;
    ev.addr = 0x9000;
    assert_int_equal(fmt_writer_event(t.w, &ev), 0); /* pending, not flushed */

    struct fmt_reader *r = tfmt_open(&t);
    assert_true(fmt_reader_incomplete(r));
    assert_int_equal(fmt_reader_nr_chunks(r), 1);
    struct fmt_trace_counts c;
    fmt_reader_counts(r, &c);
    assert_int_equal(c.nr_events, 5);
    assert_int_equal(c.nr_heap_allocs, 5);
    fmt_reader_close(r);

    assert_int_equal(fmt_writer_finish(t.w), 0);
    fmt_writer_get_stats(t.w, &st);
    assert_int_equal(st.nr_events, 6);
    assert_int_equal(st.nr_allocs, 6);
    assert_int_equal(st.bytes_written, (uint64_t)lseek(t.fd, 0, SEEK_END));
    r = tfmt_open(&t);
    assert_false(fmt_reader_incomplete(r));
    assert_int_equal(fmt_reader_nr_chunks(r), 2);
    fmt_reader_close(r);
    tfmt_close(&t);
}

/* The writer refuses what it cannot store, and says so. */
/* The recorder's paths for plain mallocs and frees, fmt_writer_heap(),
 * and for reallocs (in place or not), fmt_writer_realloc(), write exactly
 * the bytes fmt_writer_event() writes for the same events,
 * whatever comes between them (reallocs, flagged and failed calls,
 * mappings, other threads, chunk ends). */
static void write_mixed(struct tfmt *t, int use_heap_path)
{
    uint64_t live[2][64] = {{0}}, ts = 10;
    uint32_t id;
    uint64_t frames[2] = {0x401000, 0x400500};

    rng_state = 0x2545f4914f6cdd1dull;
    for (uint32_t s = 0; s < 8; s++) {
        frames[0] = 0x401000 + s;
        assert_int_equal(fmt_writer_stack(t->w, 0, frames, 2, &id), 0);
    }
    for (int i = 0; i < 50000; i++) {
        uint32_t th = (uint32_t)(rnd() % 2), slot = (uint32_t)(rnd() % 64);
        struct fmt_event ev;

        ts += rnd() % 200;
        if (rnd() % 40 == 0) {
            ev = tfmt_mk(FMT_EV_MMAP, ts, th);
            ev.addr = 0x7f0000000000ull + (rnd() % 32) * 4096;
            ev.size = 4096;
            ev.arg[0] = 3;
            ev.arg[1] = 0x22;
        } else if (!live[th][slot]) {
            ev = tfmt_mk(FMT_EV_MALLOC, ts, th);
            ev.addr = 0x100000000ull * (th + 1) + slot * 0x1000 + (rnd() % 16) * 16;
            ev.size = rnd() % 600;
            ev.stack = 1 + (uint32_t)(rnd() % 8);
            if (rnd() % 30 == 0)
                ev.flags = FMT_EVF_LIBC_MMAP;
            if (rnd() % 50 == 0) {
                ev.flags = FMT_EVF_FAILED;
                ev.addr = 0;
            }
            live[th][slot] = ev.addr;
        } else if (rnd() % 6 == 0) {
            ev = tfmt_mk(FMT_EV_REALLOC, ts, th);
            ev.old_addr = live[th][slot];
            ev.addr = ev.old_addr + 16 * (rnd() % 3);
            ev.size = rnd() % 2000;
            ev.stack = 1 + (uint32_t)(rnd() % 8);
            if (ev.addr == ev.old_addr)
                ev.flags = FMT_EVF_IN_PLACE;
            live[th][slot] = ev.addr;
        } else {
            ev = tfmt_mk(FMT_EV_FREE, ts, th);
            ev.addr = rnd() % 50 ? live[th][slot] : 0;
            live[th][slot] = 0;
        }
        if (use_heap_path && !ev.flags && (ev.kind == FMT_EV_MALLOC || ev.kind == FMT_EV_FREE)) {
            struct fmt_writer_who who = {ev.image, ev.thread, ev.pid, ev.tid};

            assert_int_equal(fmt_writer_heap(t->w, &who, ev.kind, ev.ts_ns, ev.addr,
                                             ev.kind == FMT_EV_MALLOC ? ev.size : 0, ev.stack),
                             0);
        } else if (use_heap_path && !(ev.flags & ~FMT_EVF_IN_PLACE) && ev.kind == FMT_EV_REALLOC) {
            struct fmt_writer_who who = {ev.image, ev.thread, ev.pid, ev.tid};

            assert_int_equal(fmt_writer_realloc(t->w, &who, ev.flags, ev.ts_ns, ev.old_addr,
                                                ev.addr, ev.size, ev.stack),
                             0);
        } else {
            assert_int_equal(fmt_writer_event(t->w, &ev), 0);
        }
    }
    tfmt_finish(t);
}

static void test_heap_path_same_bytes(void **state)
{
    struct tfmt a, b;
    uint8_t *pa, *pb;
    size_t na, nb;
    struct fmt_writer_who who = {0, 0, 1, 1};

    (void)state;
    tfmt_start(&a, 4096);
    tfmt_start(&b, 4096);
    write_mixed(&a, 0);
    write_mixed(&b, 1);
    pa = tfmt_bytes(a.fd, &na);
    pb = tfmt_bytes(b.fd, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(pa, pb, na);
    free(pa);
    free(pb);
    tfmt_close(&a);
    tfmt_close(&b);

    /* Only mallocs and frees, and only known stacks. */
    tfmt_start(&a, 0);
    assert_int_equal(fmt_writer_heap(a.w, &who, FMT_EV_REALLOC, 1, 0x1000, 8, 0), -EINVAL);
    assert_int_equal(fmt_writer_heap(a.w, &who, FMT_EV_MALLOC, 1, 0x1000, 8, 99), -EINVAL);
    assert_int_equal(fmt_writer_heap(a.w, &who, FMT_EV_MALLOC, 1, 0x1000, 8, 0), 0);
    assert_int_equal(fmt_writer_realloc(a.w, &who, FMT_EVF_FAILED, 2, 0x1000, 0, 8, 0), -EINVAL);
    assert_int_equal(fmt_writer_realloc(a.w, &who, 0, 2, 0x1000, 0x2000, 8, 99), -EINVAL);
    assert_int_equal(fmt_writer_realloc(a.w, &who, 0, 2, 0x1000, 0x2000, 8, 0), 0);
    tfmt_finish(&a);
    tfmt_close(&a);
}

static void test_writer_rejects(void **state)
{
    struct tfmt t;
    struct fmt_event ev = tfmt_mk(FMT_EV_MALLOC, 1, 0);

    (void)state;
    tfmt_start(&t, 0);
    ev.stack = 5; /* never interned */
    assert_int_equal(fmt_writer_event(t.w, &ev), -EINVAL);
    ev = tfmt_mk(22, 1, 0); /* not a kind */
    assert_int_equal(fmt_writer_event(t.w, &ev), -EINVAL);
    ev = tfmt_mk(FMT_EV_MODULE_LOAD, 1, 0); /* no module */
    assert_int_equal(fmt_writer_event(t.w, &ev), -EINVAL);
    tfmt_close(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind),     cmocka_unit_test(test_random_storm),
        cmocka_unit_test(test_freed_reuse),    cmocka_unit_test(test_ranks),
        cmocka_unit_test(test_time_pack),      cmocka_unit_test(test_stacks),
        cmocka_unit_test(test_only_meta),      cmocka_unit_test(test_stack_windows),
        cmocka_unit_test(test_stack_codes),    cmocka_unit_test(test_tables),
        cmocka_unit_test(test_many_threads),   cmocka_unit_test(test_image_without_start),
        cmocka_unit_test(test_flush),          cmocka_unit_test(test_chunk_growth),
        cmocka_unit_test(test_live_at_chunk),  cmocka_unit_test(test_heap_path_same_bytes),
        cmocka_unit_test(test_writer_rejects),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
