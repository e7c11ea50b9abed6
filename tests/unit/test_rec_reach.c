/* SPDX-License-Identifier: MIT */
/* memcheck's leak search (rec_reach_mark.c) on a made-up address space:
 * regions of bytes the test lays out, read with process_vm_readv's
 * semantics (a read stops at the first byte no region holds). Each case
 * is a heap whose classes memcheck's rules decide: a cycle's lowest block
 * leads it, a chain's head is the definite one whatever the addresses, an
 * interior pointer makes a block possibly lost and what it points to too,
 * new[]'s count and a register make blocks reachable, an unreadable page
 * is skipped and counted. The same through the heap's copy
 * (rec_reach_snap.c), with a block in a page it cannot read; a heap of
 * 1,024 blocks found through the index of granules; a 32-bit process's
 * 4-byte words. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "memscribe/trace.h"
#include "recorder/rec_reach_internal.h"

struct region {
    uint64_t base;
    unsigned char bytes[8192];
    size_t len;
};

struct space {
    struct region r[4];
    unsigned nr;
};

static const unsigned char *space_at(const struct space *sp, uint64_t a, size_t *left)
{
    for (unsigned i = 0; i < sp->nr; i++)
        if (a >= sp->r[i].base && a < sp->r[i].base + sp->r[i].len) {
            *left = sp->r[i].base + sp->r[i].len - a;
            return sp->r[i].bytes + (a - sp->r[i].base);
        }
    return NULL;
}

static ssize_t space_read(void *arg, const struct iovec *local, unsigned long nr_local,
                          const struct iovec *remote, unsigned long nr_remote)
{
    const struct space *sp = arg;
    ssize_t done = 0;

    assert_int_equal(nr_local, nr_remote);
    for (unsigned long i = 0; i < nr_remote; i++) {
        uint64_t a = (uint64_t)(uintptr_t)remote[i].iov_base;
        size_t n = remote[i].iov_len, left;

        assert_int_equal(local[i].iov_len, n);
        while (n) {
            const unsigned char *p = space_at(sp, a, &left);
            if (!p)
                return done;
            if (left > n)
                left = n;
            memcpy((char *)local[i].iov_base + (remote[i].iov_len - n), p, left);
            n -= left;
            a += left;
            done += (ssize_t)left;
        }
    }
    return done;
}

#define HEAP 0x100000ull
#define DATA 0x200000ull

static void put(struct space *sp, uint64_t a, uint64_t v)
{
    size_t left;
    unsigned char *p = (unsigned char *)space_at(sp, a, &left);

    assert_non_null(p);
    memcpy(p, &v, sizeof(v));
}

/* A heap region of 8 KiB, a data region of 4 KiB; blocks of 64 bytes at
 * HEAP + 0x100 * i. */
static void space_init(struct space *sp)
{
    memset(sp, 0, sizeof(*sp));
    sp->r[0].base = HEAP;
    sp->r[0].len = 8192;
    sp->r[1].base = DATA;
    sp->r[1].len = 4096;
    sp->nr = 2;
}

static void run(struct space *sp, struct rec_reach_block *b, size_t n, uint64_t reg)
{
    struct rec_reach rr = {.read = space_read, .read_arg = sp, .blocks = b, .nr_blocks = n};

    assert_int_equal(rec_reach_init(&rr), 0);
    rec_reach_root_range(&rr, DATA, DATA + 4096);
    if (reg)
        rec_reach_root_word(&rr, reg);
    rec_reach_mark(&rr);
    rec_reach_free(&rr);
}

static void blocks(struct rec_reach_block *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (struct rec_reach_block){.addr = HEAP + 0x100 * i, .size = 64, .serial = i + 1};
}

static void test_cycle_and_chain(void **state)
{
    struct space sp;
    struct rec_reach_block b[4];

    (void)state;
    space_init(&sp);
    blocks(b, 4);
    put(&sp, b[0].addr, b[1].addr); /* a cycle 0 <-> 1, nothing to it */
    put(&sp, b[1].addr, b[0].addr);
    put(&sp, b[3].addr + 8, b[2].addr); /* a chain 3 -> 2: its head is the higher */
    run(&sp, b, 4, 0);
    assert_int_equal(b[0].state, FMT_REACH_DEFINITE);
    assert_int_equal(b[1].state, FMT_REACH_INDIRECT);
    assert_int_equal(b[3].state, FMT_REACH_DEFINITE);
    assert_int_equal(b[2].state, FMT_REACH_INDIRECT);
}

static void test_interior_and_heuristics(void **state)
{
    struct space sp;
    struct rec_reach_block b[5];

    (void)state;
    space_init(&sp);
    blocks(b, 5);
    put(&sp, DATA + 8, b[0].addr + 20);  /* interior: possibly lost */
    put(&sp, b[0].addr, b[1].addr);      /* from a possible block: possible too */
    put(&sp, DATA + 16, b[2].addr);      /* start: reachable */
    put(&sp, b[2].addr + 32, b[3].addr); /* from a reachable one: reachable */
    put(&sp, b[4].addr, 7);              /* new[] of 7 elements of 8 bytes */
    put(&sp, DATA + 24, b[4].addr + 8);  /* the pointer new[] returned */
    run(&sp, b, 5, 0);
    assert_int_equal(b[0].state, FMT_REACH_POSSIBLE);
    assert_int_equal(b[1].state, FMT_REACH_POSSIBLE);
    assert_int_equal(b[2].state, FMT_REACH_REACHABLE);
    assert_int_equal(b[3].state, FMT_REACH_REACHABLE);
    assert_int_equal(b[4].state, FMT_REACH_REACHABLE);
    assert_int_equal(b[4].heuristic, 1);
    /* Without the count that fits, the same pointer is an interior one. */
    space_init(&sp);
    blocks(b, 5);
    put(&sp, b[4].addr, 5); /* 56 bytes are not 5 elements */
    put(&sp, DATA + 24, b[4].addr + 8);
    run(&sp, b, 5, 0);
    assert_int_equal(b[4].state, FMT_REACH_POSSIBLE);
}

/* A register holds the only pointer; a root range with a hole in it is
 * read around the hole, whose bytes are counted as skipped. */
static void test_register_and_hole(void **state)
{
    struct space sp;
    struct rec_reach_block b[2];
    struct rec_reach rr = {.read = space_read, .read_arg = &sp, .blocks = b, .nr_blocks = 2};

    (void)state;
    space_init(&sp);
    sp.r[2].base = DATA + 0x2000; /* DATA + 0x1000 .. 0x2000 is a hole */
    sp.r[2].len = 4096;
    sp.nr = 3;
    blocks(b, 2);
    put(&sp, DATA + 0x2000 + 64, b[1].addr);
    assert_int_equal(rec_reach_init(&rr), 0);
    rec_reach_root_range(&rr, DATA, DATA + 0x3000);
    rec_reach_root_word(&rr, b[0].addr);
    rec_reach_mark(&rr);
    assert_int_equal(rr.skipped_bytes, 4096);
    assert_int_equal(rr.root_bytes, 0x3000);
    rec_reach_free(&rr);
    assert_int_equal(b[0].state, FMT_REACH_REACHABLE);
    assert_int_equal(b[1].state, FMT_REACH_REACHABLE);
}

static void put32(struct space *sp, uint64_t a, uint32_t v)
{
    size_t left;
    unsigned char *p = (unsigned char *)space_at(sp, a, &left);

    assert_non_null(p);
    memcpy(p, &v, sizeof(v));
}

/* run(), the blocks read through the copy of the heap and its view. */
static void run_snap(struct space *sp, struct rec_reach_block *b, size_t n, uint64_t *skipped)
{
    struct rec_reach_snap sn = {.read = space_read, .read_arg = sp};
    struct rec_reach rr = {.blocks = b, .nr_blocks = n};

    assert_int_equal(rec_reach_snap_make(&sn, b, n, 1 << 20), 0);
    rr.read = rec_reach_snap_read;
    rr.read_arg = rr.view_arg = &sn;
    rr.view = rec_reach_snap_view;
    assert_int_equal(rec_reach_init(&rr), 0);
    rec_reach_root_range(&rr, DATA, DATA + 4096);
    rec_reach_mark(&rr);
    *skipped = rr.skipped_bytes;
    rec_reach_free(&rr);
    rec_reach_snap_free(&sn);
}

/* Through the copy: the classes of test_cycle_and_chain and an interior
 * pointer; a block past the readable heap is read from the process page
 * by page, its bytes counted as skipped, and it is still classed. */
static void test_snapshot(void **state)
{
    struct space sp;
    struct rec_reach_block b[6];
    uint64_t skipped = 0;

    (void)state;
    space_init(&sp);
    blocks(b, 5);
    /* Past the heap region, a span of its own that cannot be read. */
    b[5] = (struct rec_reach_block){.addr = HEAP + 0x4000, .size = 64, .serial = 6};
    put(&sp, b[0].addr, b[1].addr);
    put(&sp, b[1].addr, b[0].addr);
    put(&sp, b[3].addr + 8, b[2].addr);
    put(&sp, DATA + 8, b[4].addr + 20);
    put(&sp, DATA + 16, b[5].addr);
    run_snap(&sp, b, 6, &skipped);
    assert_int_equal(b[0].state, FMT_REACH_DEFINITE);
    assert_int_equal(b[1].state, FMT_REACH_INDIRECT);
    assert_int_equal(b[3].state, FMT_REACH_DEFINITE);
    assert_int_equal(b[2].state, FMT_REACH_INDIRECT);
    assert_int_equal(b[4].state, FMT_REACH_POSSIBLE);
    assert_int_equal(b[5].state, FMT_REACH_REACHABLE);
    assert_true(skipped >= 64);
}

/* 1,024 blocks of 8 bytes side by side (the index's smallest cluster):
 * a chain from a root to block 511, cut there; 512 heads the lost rest. */
static void test_indexed_chain(void **state)
{
    static struct rec_reach_block b[1024];
    struct space sp;
    uint64_t skipped = 0;

    (void)state;
    space_init(&sp);
    for (size_t i = 0; i < 1024; i++)
        b[i] = (struct rec_reach_block){.addr = HEAP + 8 * i, .size = 8, .serial = i + 1};
    for (size_t i = 0; i < 1023; i++)
        if (i != 511)
            put(&sp, b[i].addr, b[i + 1].addr);
    put(&sp, DATA, b[0].addr);
    run_snap(&sp, b, 1024, &skipped);
    for (size_t i = 0; i < 1024; i++)
        assert_int_equal(b[i].state, i < 512    ? FMT_REACH_REACHABLE
                                     : i == 512 ? FMT_REACH_DEFINITE
                                                : FMT_REACH_INDIRECT);
    assert_int_equal(skipped, 0);
}

/* A 32-bit process: pointers are 4-byte words at 4-byte alignment. A
 * pointer at DATA + 4 and one at a block's offset 4 are seen with words of
 * 4 bytes, not with words of 8 (there they are a word's high half: both
 * blocks lost, neither pointing to the other). */
static void test_words32(void **state)
{
    struct space sp;
    struct rec_reach_block b[2];

    for (unsigned word = 4; word <= 8; word += 4) {
        struct rec_reach rr = {.word = word, .read = space_read, .read_arg = &sp};

        (void)state;
        space_init(&sp);
        blocks(b, 2);
        put32(&sp, DATA + 4, (uint32_t)b[0].addr);
        put32(&sp, b[0].addr + 4, (uint32_t)b[1].addr);
        rr.blocks = b;
        rr.nr_blocks = 2;
        assert_int_equal(rec_reach_init(&rr), 0);
        rec_reach_root_range(&rr, DATA, DATA + 4096);
        rec_reach_mark(&rr);
        rec_reach_free(&rr);
        assert_int_equal(b[0].state, word == 4 ? FMT_REACH_REACHABLE : FMT_REACH_DEFINITE);
        assert_int_equal(b[1].state, word == 4 ? FMT_REACH_REACHABLE : FMT_REACH_DEFINITE);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cycle_and_chain),   cmocka_unit_test(test_interior_and_heuristics),
        cmocka_unit_test(test_register_and_hole), cmocka_unit_test(test_snapshot),
        cmocka_unit_test(test_indexed_chain),     cmocka_unit_test(test_words32),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
