/* SPDX-License-Identifier: MIT */
/* Format 1.4, feature bit POOLS (docs/format-events.md, "Pools"): the program's
 * own pools as heaps. tests/golden/v1_4_pools.mscr, written from
 * pool_events() with the bit, must read back exactly (its dump is
 * compared with v1_4_pools.dump by tests/e2e/dump_golden.sh); a pool block
 * sharing its address with a malloc block, or with another pool's block,
 * is a block of its own; a destroyed pool's blocks end before it; a
 * writer without the bit refuses pool events. MS_FMT_WRITE_GOLDEN_1_4_POOLS
 * =PATH writes the golden file anew: only for a new format version, into
 * a new file. */
#include <errno.h>
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

#define ARENA 0x55550000a000ull /* malloc's block that pool A carves */
#define POOL_A 0x7ffd1000ull    /* handles: what the program passes */
#define POOL_B 0x7ffd2000ull
#define POOL_C 0x7ffd3000ull /* used without being created: no name */

static struct fmt_event mk(uint16_t kind, uint64_t *ts, uint32_t thread, uint32_t stack)
{
    struct fmt_event ev = tfmt_mk(kind, *ts += 100, thread);

    ev.stack = stack;
    return ev;
}

static struct fmt_event pool_ev(uint16_t kind, uint64_t *ts, uint32_t thread, uint32_t stack,
                                uint64_t pool, uint64_t addr, uint64_t size)
{
    struct fmt_event ev = mk(kind, ts, thread, stack);

    ev.flags = FMT_EVF_POOL;
    ev.arg[1] = pool;
    ev.addr = addr;
    ev.size = size;
    return ev;
}

/* A process whose pool A lives in a malloc'd arena: A's first block has
 * the arena's address, pool B hands out an address A's block has too,
 * blocks are freed and reallocated in their pools, B is destroyed with a
 * block in it, C is used without a name, and blocks of A and C leak.
 * Stacks 1..2. The reader's events: these, with the frees the writer adds
 * before B's destroy (expect()). */
static size_t pool_events(struct fmt_event *ev)
{
    uint64_t ts = 1000;
    size_t n = 0;

    ev[n] = mk(FMT_EV_PROCESS_START, &ts, 0, 0);
    ev[n].str = "/usr/bin/pools";
    ev[n++].str_len = 14;
    ev[n] = mk(FMT_EV_MALLOC, &ts, 0, 1);
    ev[n].addr = ARENA;
    ev[n++].size = 4096;
    ev[n] = pool_ev(FMT_EV_HEAP_CREATE, &ts, 0, 1, POOL_A, POOL_A, 0);
    ev[n].str = "arena";
    ev[n++].str_len = 5;
    ev[n++] = pool_ev(FMT_EV_MALLOC, &ts, 0, 2, POOL_A, ARENA, 64);
    ev[n++] = pool_ev(FMT_EV_MALLOC, &ts, 0, 2, POOL_A, ARENA + 64, 32);
    ev[n] = pool_ev(FMT_EV_HEAP_CREATE, &ts, 1, 1, POOL_B, POOL_B, 0);
    ev[n].str = "nodes";
    ev[n++].str_len = 5;
    ev[n++] = pool_ev(FMT_EV_MALLOC, &ts, 1, 2, POOL_B, ARENA + 64, 16);
    ev[n++] = pool_ev(FMT_EV_MALLOC, &ts, 1, 2, POOL_B, ARENA + 80, 16);
    ev[n++] = pool_ev(FMT_EV_FREE, &ts, 0, 2, POOL_A, ARENA, 0);
    ev[n] = pool_ev(FMT_EV_REALLOC, &ts, 0, 2, POOL_A, ARENA + 128, 48);
    ev[n++].old_addr = ARENA + 64;
    ev[n++] = pool_ev(FMT_EV_FREE, &ts, 1, 2, POOL_B, ARENA + 80, 0);
    ev[n++] = pool_ev(FMT_EV_MALLOC, &ts, 1, 1, POOL_C, ARENA + 512, 8);
    ev[n++] = pool_ev(FMT_EV_HEAP_DESTROY, &ts, 1, 1, POOL_B, POOL_B, 0);
    ev[n++] = pool_ev(FMT_EV_FREE, &ts, 0, 2, POOL_B, ARENA + 64, 0); /* gone with B: none */
    ev[n] = mk(FMT_EV_FREE, &ts, 0, 1);
    ev[n++].addr = ARENA; /* malloc's arena, not pool A's block */
    ev[n] = mk(FMT_EV_PROCESS_EXIT, &ts, 0, 0);
    ev[n++].arg[1] = 1;
    return n;
}

/* What the reader gives: the events, with before each pool destroy a free
 * flagged HEAP_DESTROYED of each block still in it (oldest first). */
static size_t expect(const struct fmt_event *in, size_t n, struct fmt_event *out)
{
    size_t m = 0;

    for (size_t i = 0; i < n; i++) {
        if (in[i].kind == FMT_EV_HEAP_DESTROY && in[i].arg[1] == POOL_B) {
            struct fmt_event f = in[i];

            f.kind = FMT_EV_FREE;
            f.flags = FMT_EVF_POOL | FMT_EVF_HEAP_DESTROYED;
            f.addr = ARENA + 64;
            out[m++] = f;
        }
        out[m++] = in[i];
    }
    return m;
}

static void start(struct tfmt *t, int pools, uint32_t chunk_events)
{
    struct fmt_writer_options opt = {
        .chunk_events = chunk_events, .time_unit_ns = 1, .pools = pools};

    tfmt_start_short(t, &opt, NULL);
}

static size_t events(struct tfmt *t, struct fmt_event *ev)
{
    static const uint64_t frames[2] = {0x401000ull, 0x401200ull};

    return tfmt_two_stacks(t, frames, 2, ev, pool_events(ev));
}

static void test_golden_v1_4_pools(void **state)
{
    struct fmt_event in[32], want[40];
    struct fmt_reader *r;
    struct tfmt t;

    (void)state;
    start(&t, 1, 8);
    size_t n = events(&t, in);
    r = tfmt_golden_open(&t, in, n, "MS_FMT_WRITE_GOLDEN_1_4_POOLS",
                         MS_GOLDEN_DIR "/v1_4_pools.mscr");
    assert_int_equal(fmt_reader_info(r)->version_minor, 4);
    assert_true(fmt_reader_pools(r));
    assert_false(fmt_reader_pe(r));
    /* The names, from the definitions, before any event is read. */
    assert_int_equal(fmt_reader_nr_pools(r), 3);
    assert_string_equal(fmt_reader_find_pool(r, 0, POOL_A)->name, "arena");
    assert_string_equal(fmt_reader_find_pool(r, 0, POOL_B)->name, "nodes");
    assert_int_equal(fmt_reader_find_pool(r, 0, POOL_B)->create_ns, 1600);
    assert_string_equal(fmt_reader_find_pool(r, 0, POOL_C)->name, "");     /* never created */
    assert_int_equal(fmt_reader_find_pool(r, 0, POOL_C)->create_ns, 2200); /* first used */
    assert_null(fmt_reader_find_pool(r, 1, POOL_A));
    tfmt_read_expect(r, want, expect(in, n, want));
    fmt_reader_close(r);
}

/* The same events in chunks of 1..5 events: every reference (a pool block
 * at an address malloc's heap or another pool also has live) resolves to
 * its own block, from any chunk. */
static void test_pools_any_chunking(void **state)
{
    struct fmt_event in[32], want[40], got;

    (void)state;
    for (uint32_t ce = 1; ce <= 5; ce++) {
        struct tfmt t;

        start(&t, 1, ce);
        size_t n = events(&t, in);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(fmt_writer_event(t.w, &in[i]), 0);
        tfmt_finish(&t);
        struct fmt_reader *r = tfmt_open(&t);
        size_t m = expect(in, n, want);
        tfmt_read_expect(r, want, m);
        /* From each chunk on its own: the arena's free names the arena
         * (serial 1, 4096 bytes), not pool A's first block, also from a
         * chunk after the one that started both. */
        uint32_t last = 0;
        for (uint32_t k = 0; k < fmt_reader_nr_chunks(r); k++) {
            assert_int_equal(fmt_reader_seek_chunk(r, k), 0);
            while (fmt_reader_next(r, &got) == 1)
                if (got.kind == FMT_EV_FREE && !(got.flags & FMT_EVF_POOL)) {
                    assert_int_equal(got.ref, 1);
                    assert_int_equal(got.ref_size, 4096);
                    last = k;
                }
        }
        assert_true(last > 0);
        fmt_reader_close(r);
        tfmt_close(&t);
    }
}

/* Without the bit: pool events refused, the rest written as before. */
static void test_pools_need_the_bit(void **state)
{
    struct fmt_event ev[32];
    struct tfmt t;

    (void)state;
    start(&t, 0, 8);
    size_t n = events(&t, ev);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(fmt_writer_event(t.w, &ev[i]), ev[i].flags & FMT_EVF_POOL ? -EINVAL : 0);
    /* A Linux trace's HEAP_CREATE is a pool's, flagged so. */
    struct fmt_event hc = tfmt_mk(FMT_EV_HEAP_CREATE, 9000, 0);
    assert_int_equal(fmt_writer_event(t.w, &hc), -EINVAL);
    tfmt_finish(&t);
    struct fmt_reader *r = tfmt_open(&t);
    assert_int_equal(fmt_reader_info(r)->version_minor, 3);
    assert_false(fmt_reader_pools(r));
    fmt_reader_close(r);
    tfmt_close(&t);

    start(&t, 1, 8);
    assert_int_equal(fmt_writer_event(t.w, &hc), -EINVAL); /* not flagged POOL */
    tfmt_close(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_v1_4_pools),
        cmocka_unit_test(test_pools_any_chunking),
        cmocka_unit_test(test_pools_need_the_bit),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
