/* SPDX-License-Identifier: MIT */
/* Format 1.10's chunk totals (docs/format-blocks.md, "TOTALS"; feature bit 33)
 * and 1.11's all-processes part (feature bit 34):
 * a trace of two processes, two threads in the first, in chunks of 6
 * events, whose every chunk's totals are held against numbers worked out
 * here by hand from the events: calls by kind, failed calls, a free of an
 * address never allocated and free(NULL), temporary allocations by
 * heaptrack's rule per thread (one thread's allocation between another's
 * malloc and free does not spoil it, nor does a free of an address not
 * live; a realloc of the latest block is one; a block freed by another
 * thread is not), the heap's change and its highest and when, pymalloc's arenas, a
 * snapshot's mapping, RSS samples, dropped events and an exit; the
 * stacks' allocations and temporaries; a trace without the option has no
 * totals (-EINVAL); the running processes' heap of every chunk, which an
 * exit lowers by that process's whole heap and a block the exited process
 * frees after does not move; and tests/golden/v1_10.mscr (no all-processes
 * part) and v1_11.mscr, which must read back as they always did.
 * And format 1.12's programs' parts (feature bit 35, test_programs), with
 * its golden trace v1_12.mscr. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_fmt_util.h"

#ifndef MS_GOLDEN_DIR
#error "MS_GOLDEN_DIR must name tests/golden"
#endif

#define H 0x5555400000ull

static const struct fmt_writer_options tot_opt = {.time_unit_ns = 1000,
                                                  .time_pack = 1,
                                                  .free_ranks = 1,
                                                  .realloc_pred = 1,
                                                  .totals = 1,
                                                  .chunk_events = 6};

static struct fmt_event heap(uint16_t kind, uint64_t us, uint32_t thread, uint64_t addr,
                             uint64_t size, uint32_t stack)
{
    return tfmt_heap(kind, us * 1000, thread, addr, size, stack);
}

/* 18 events, three chunks of 6 (threads 0 and 1: image 0; thread 2:
 * image 1). Stacks 1..3 are interned by the writer in that order. */
static size_t events(struct fmt_event *ev)
{
    size_t n = 0;

    /* chunk 0 */
    ev[n] = tfmt_mk(FMT_EV_MMAP, 10000, 0); /* mapped at start: not a call */
    ev[n].addr = 0x7f0000000000ull;
    ev[n].size = 4096;
    ev[n].arg[0] = 1;
    ev[n].arg[1] = 2;
    ev[n++].origin = FMT_ORIGIN_SNAPSHOT;
    ev[n++] = heap(FMT_EV_MALLOC, 20, 0, H, 100, 1);        /* #2, freed at 40: temporary */
    ev[n++] = heap(FMT_EV_MALLOC, 30, 1, H + 0x100, 50, 2); /* #3, another thread's */
    ev[n++] = heap(FMT_EV_FREE, 40, 0, H, 0, 0);
    ev[n++] = heap(FMT_EV_MALLOC, 50, 0, H + 0x200, 300, 1); /* #4, lives: the peak 350 */
    ev[n] = heap(FMT_EV_MALLOC, 60, 0, 0, 1ull << 40, 3);    /* failed */
    ev[n++].flags = FMT_EVF_FAILED;
    /* chunk 1 */
    ev[n++] = heap(FMT_EV_FREE, 70, 1, H + 0x900, 0, 0);   /* never allocated */
    ev[n++] = heap(FMT_EV_FREE, 80, 1, 0, 0, 0);           /* free(NULL) */
    ev[n] = heap(FMT_EV_REALLOC, 90, 1, H + 0x100, 80, 2); /* #5 from #3, its latest: temporary */
    ev[n++].old_addr = H + 0x100;
    ev[n] = tfmt_mk(FMT_EV_RSS, 100000, 0);
    ev[n++].size = 8192;
    ev[n] = tfmt_mk(FMT_EV_RSS, 110000, 0);
    ev[n++].size = 4096;
    ev[n] = tfmt_mk(FMT_EV_MMAP, 120000, 0); /* a pymalloc arena */
    ev[n].addr = 0x7f0000100000ull;
    ev[n].size = 1u << 20;
    ev[n].arg[0] = 3;
    ev[n++].arg[1] = 0x22;
    /* chunk 2 */
    ev[n++] = heap(FMT_EV_MALLOC, 130, 2, H + 0x1000, 64, 3); /* image 1 */
    ev[n] = tfmt_mk(FMT_EV_DROPPED, 140000, 2);
    ev[n++].arg[0] = 7;
    ev[n++] = heap(FMT_EV_FREE, 150, 1, H + 0x200, 0, 0); /* #4, another thread's block */
    ev[n++] = heap(FMT_EV_FREE, 160, 0, H + 0x100, 0, 0); /* #5 (thread 0's latest is #4) */
    ev[n] = tfmt_mk(FMT_EV_PROCESS_EXIT, 170000, 0);
    ev[n++].arg[1] = 1;
    ev[n++] = heap(FMT_EV_FREE, 180, 2, H + 0x1000, 0, 0); /* #6, its latest: temporary */
    return n;
}

static void write_trace(struct tfmt *t)
{
    static const uint64_t frames[3][2] = {
        {0x401000, 0x402000}, {0x401100, 0x402000}, {0x401200, 0x402000}};
    struct fmt_event ev[32];
    size_t n = events(ev);
    uint32_t id;

    memset(t, 0, sizeof(*t));
    tfmt_start_opt(t, &tot_opt);
    for (int i = 0; i < 3; i++)
        assert_int_equal(fmt_writer_stack(t->w, 0, frames[i], 2, &id), 0);
    for (size_t i = 0; i < n; i++) {
        ev[i].stack = ev[i].stack ? ev[i].stack + 1 : 0; /* the leaves' ids: a shared root */
        assert_int_equal(fmt_writer_event(t->w, &ev[i]), 0);
    }
}

/* What a chunk's totals must say. */
struct want_image {
    uint32_t image;
    uint64_t first_us, last_us;
    uint64_t malloc_calls, malloc_failed, free_calls, realloc_calls, mmap_calls, rss_calls;
    uint64_t start_maps, arena_maps, unmatched, dropped, allocs, alloc_bytes;
    int64_t heap, blocks;
    bool has_peak;
    int64_t peak, peak_blocks;
    uint64_t peak_us;
    bool has_rss;
    uint64_t rss_max, rss_max_us, rss_last, rss_last_us;
    bool ended;
    uint64_t end_us;
};

struct want_stack {
    uint32_t stack;
    uint64_t allocs, alloc_bytes, temps, temp_bytes;
};

struct got {
    struct fmt_image_totals img[4];
    struct fmt_stack_totals stk[8];
    unsigned nr_img, nr_stk;
};

static int got_image(void *arg, const struct fmt_image_totals *t)
{
    struct got *g = arg;

    assert_true(g->nr_img < 4);
    g->img[g->nr_img++] = *t;
    return 0;
}

static int got_stack(void *arg, const struct fmt_stack_totals *t)
{
    struct got *g = arg;

    assert_true(g->nr_stk < 8);
    g->stk[g->nr_stk++] = *t;
    return 0;
}

static void check_image(const struct fmt_image_totals *g, const struct want_image *w)
{
    assert_int_equal(g->image, w->image);
    assert_int_equal(g->first_ns, w->first_us * 1000);
    assert_int_equal(g->last_ns, w->last_us * 1000);
    assert_int_equal(g->calls[FMT_EV_MALLOC], w->malloc_calls);
    assert_int_equal(g->failed[FMT_EV_MALLOC], w->malloc_failed);
    assert_int_equal(g->calls[FMT_EV_FREE], w->free_calls);
    assert_int_equal(g->calls[FMT_EV_REALLOC], w->realloc_calls);
    assert_int_equal(g->calls[FMT_EV_MMAP], w->mmap_calls);
    assert_int_equal(g->calls[FMT_EV_RSS], w->rss_calls);
    assert_int_equal(g->start_maps, w->start_maps);
    assert_int_equal(g->arena_maps, w->arena_maps);
    assert_int_equal(g->unmatched, w->unmatched);
    assert_int_equal(g->dropped, w->dropped);
    assert_int_equal(g->allocs, w->allocs);
    assert_int_equal(g->alloc_bytes, w->alloc_bytes);
    assert_int_equal(g->heap, w->heap);
    assert_int_equal(g->blocks, w->blocks);
    assert_int_equal(g->has_peak, w->has_peak);
    if (w->has_peak) {
        assert_int_equal(g->peak, w->peak);
        assert_int_equal(g->peak_blocks, w->peak_blocks);
        assert_int_equal(g->peak_ns, w->peak_us * 1000);
    }
    assert_int_equal(g->has_rss, w->has_rss);
    if (w->has_rss) {
        assert_int_equal(g->rss_max, w->rss_max);
        assert_int_equal(g->rss_max_ns, w->rss_max_us * 1000);
        assert_int_equal(g->rss_last, w->rss_last);
        assert_int_equal(g->rss_last_ns, w->rss_last_us * 1000);
    }
    assert_int_equal(g->ended, w->ended);
    if (w->ended)
        assert_int_equal(g->end_ns, w->end_us * 1000);
}

static void check_stacks(const struct got *g, const struct want_stack *w, unsigned n)
{
    assert_int_equal(g->nr_stk, n);
    for (unsigned i = 0; i < n; i++) {
        assert_int_equal(g->stk[i].stack, w[i].stack);
        assert_int_equal(g->stk[i].allocs, w[i].allocs);
        assert_int_equal(g->stk[i].alloc_bytes, w[i].alloc_bytes);
        assert_int_equal(g->stk[i].temps, w[i].temps);
        assert_int_equal(g->stk[i].temp_bytes, w[i].temp_bytes);
    }
}

/* Chunk k's all-processes part, or -EINVAL without one. */
static void check_all(struct fmt_reader *r, uint32_t k, const struct fmt_all_totals *w)
{
    struct fmt_all_totals a;

    if (!fmt_reader_has_all_totals(r)) {
        assert_int_equal(fmt_reader_chunk_all_totals(r, k, &a), -EINVAL);
        return;
    }
    assert_int_equal(fmt_reader_chunk_all_totals(r, k, &a), 0);
    assert_int_equal(a.has_peak, w->has_peak);
    assert_int_equal(a.heap, w->heap);
    assert_int_equal(a.blocks, w->blocks);
    assert_int_equal(a.peak, w->peak);
    assert_int_equal(a.peak_ns, w->peak_ns);
    assert_int_equal(a.peak_blocks, w->peak_blocks);
    assert_int_equal(a.has_rss, w->has_rss);
    assert_int_equal(a.rss_max, w->rss_max);
    assert_int_equal(a.rss_max_ns, w->rss_max_ns);
}

static void check_totals(struct fmt_reader *r)
{
    struct got g;

    assert_int_equal(fmt_reader_info(r)->version_minor, fmt_reader_has_prog_totals(r)  ? 12
                                                        : fmt_reader_has_all_totals(r) ? 11
                                                                                       : 10);
    assert_true(fmt_reader_has_totals(r));
    assert_int_equal(fmt_reader_nr_chunks(r), 3);

    /* chunk 0: the snapshot's mapping (no call), #2 (temporary: freed by
     * its thread with only thread 1's malloc in between), #3, #4 and the
     * failed malloc; heap 100, 150, 50, 350: the peak at 50 us */
    memset(&g, 0, sizeof(g));
    assert_int_equal(fmt_reader_chunk_totals(r, 0, got_image, got_stack, &g), 0);
    assert_int_equal(g.nr_img, 1);
    check_image(&g.img[0], &(struct want_image){.image = 0,
                                                .first_us = 10,
                                                .last_us = 60,
                                                .malloc_calls = 4,
                                                .malloc_failed = 1,
                                                .free_calls = 1,
                                                .start_maps = 1,
                                                .allocs = 3,
                                                .alloc_bytes = 450,
                                                .heap = 350,
                                                .blocks = 2,
                                                .has_peak = true,
                                                .peak = 350,
                                                .peak_blocks = 2,
                                                .peak_us = 50});
    check_stacks(&g, (struct want_stack[]){{2, 2, 400, 1, 100}, {3, 1, 50, 0, 0}}, 2);
    /* one process running: its heap is the running processes' */
    check_all(r, 0, &(struct fmt_all_totals){true, 350, 2, 350, 2, 50000, false, 0, 0});

    /* chunk 1: two frees that end nothing (one unmatched), a realloc of
     * #3 (80 bytes: heap 350 - 50 + 80 = 380, temporary: thread 1's
     * latest), two RSS samples, an arena */
    memset(&g, 0, sizeof(g));
    assert_int_equal(fmt_reader_chunk_totals(r, 1, got_image, got_stack, &g), 0);
    assert_int_equal(g.nr_img, 1);
    check_image(&g.img[0], &(struct want_image){.image = 0,
                                                .first_us = 70,
                                                .last_us = 120,
                                                .free_calls = 2,
                                                .realloc_calls = 1,
                                                .mmap_calls = 1,
                                                .rss_calls = 2,
                                                .arena_maps = 1,
                                                .unmatched = 1,
                                                .allocs = 1,
                                                .alloc_bytes = 80,
                                                .heap = 30,
                                                .blocks = 0,
                                                .has_peak = true,
                                                .peak = 30,
                                                .peak_blocks = 0,
                                                .peak_us = 90,
                                                .has_rss = true,
                                                .rss_max = 8192,
                                                .rss_max_us = 100,
                                                .rss_last = 4096,
                                                .rss_last_us = 110});
    check_stacks(&g, (struct want_stack[]){{3, 1, 80, 1, 50}}, 1);
    /* the samples 8192 then 4096: the running RSS's highest the first */
    check_all(r, 1, &(struct fmt_all_totals){true, 30, 0, 30, 0, 90000, true, 8192, 100000});

    /* chunk 2: image 1's block, made and freed by its only thread
     * (temporary), its dropped events; image 0's threads free each
     * other's blocks (neither temporary), then it exits: its heap's
     * highest change is its first, -300 */
    memset(&g, 0, sizeof(g));
    assert_int_equal(fmt_reader_chunk_totals(r, 2, got_image, got_stack, &g), 0);
    assert_int_equal(g.nr_img, 2);
    check_image(&g.img[0], &(struct want_image){.image = 0,
                                                .first_us = 150,
                                                .last_us = 170,
                                                .free_calls = 2,
                                                .heap = -380,
                                                .blocks = -2,
                                                .has_peak = true,
                                                .peak = -300,
                                                .peak_blocks = -1,
                                                .peak_us = 150,
                                                .ended = true,
                                                .end_us = 170});
    check_image(&g.img[1], &(struct want_image){.image = 1,
                                                .first_us = 130,
                                                .last_us = 180,
                                                .malloc_calls = 1,
                                                .free_calls = 1,
                                                .dropped = 7,
                                                .allocs = 1,
                                                .alloc_bytes = 64,
                                                .heap = 0,
                                                .blocks = 0,
                                                .has_peak = true,
                                                .peak = 64,
                                                .peak_blocks = 1,
                                                .peak_us = 130});
    assert_int_equal(g.img[1].calls[FMT_EV_DROPPED], 1);
    assert_int_equal(g.img[0].calls[FMT_EV_PROCESS_EXIT], 1);
    check_stacks(&g, (struct want_stack[]){{4, 1, 64, 1, 64}}, 1);
    /* 64 at 130 us (the highest, one block), then 64 - 300 - 80; image 0
     * exits holding nothing; then - 64 */
    check_all(r, 2, &(struct fmt_all_totals){true, -380, -2, 64, 1, 130000, false, 0, 0});
    assert_int_equal(fmt_reader_chunk_totals(r, 3, got_image, got_stack, NULL), -EINVAL);
}

/* Two processes in chunks of 4: the exit of one takes its whole heap, 120
 * bytes in 2 blocks of an earlier chunk, and its RSS out of the running
 * processes'; a block it frees after its exit does not move theirs, only
 * its own. */
static void write_exit_trace(struct tfmt *t)
{
    struct fmt_event ev[12];
    size_t n = 0;

    ev[n] = tfmt_mk(FMT_EV_RSS, 5000, 0); /* running RSS 8000 */
    ev[n++].size = 8000;
    ev[n++] = heap(FMT_EV_MALLOC, 10, 0, H, 100, 0);         /* A: 100 */
    ev[n++] = heap(FMT_EV_MALLOC, 20, 2, H + 0x1000, 40, 0); /* B: 140 */
    ev[n++] = heap(FMT_EV_MALLOC, 30, 0, H + 0x100, 20, 0);  /* C: 160, the peak */
    ev[n++] = heap(FMT_EV_FREE, 40, 2, H + 0x1000, 0, 0);    /* 120 */
    ev[n++] = heap(FMT_EV_MALLOC, 50, 2, H + 0x2000, 30, 0); /* D: 150 */
    ev[n] = tfmt_mk(FMT_EV_PROCESS_EXIT, 60000, 0);          /* image 0: 30, RSS 0 */
    ev[n++].arg[1] = 1;
    ev[n++] = heap(FMT_EV_FREE, 70, 0, H, 0, 0); /* A, after the exit */
    ev[n] = tfmt_mk(FMT_EV_RSS, 75000, 2);       /* running RSS 2000 */
    ev[n++].size = 2000;
    ev[n++] = heap(FMT_EV_MALLOC, 80, 2, H + 0x3000, 5, 0); /* E: 35 */
    struct fmt_writer_options opt = tot_opt;
    opt.chunk_events = 4;
    memset(t, 0, sizeof(*t));
    tfmt_start_opt(t, &opt);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(fmt_writer_event(t->w, &ev[i]), 0);
    tfmt_finish(t);
}

static void test_all_exit(void **state)
{
    struct tfmt t;
    struct got g = {0};

    (void)state;
    write_exit_trace(&t);
    struct fmt_reader *r = tfmt_open(&t);
    assert_int_equal(fmt_reader_nr_chunks(r), 3);
    check_all(r, 0, &(struct fmt_all_totals){true, 160, 3, 160, 3, 30000, true, 8000, 5000});
    /* -40 at 40 us (the chunk's first), -10 at 50 us, its highest; the
     * exit takes 120 and 2 blocks; the free after it nothing; no sample */
    check_all(r, 1, &(struct fmt_all_totals){true, -130, -2, -10, 0, 50000, false, 0, 0});
    /* image 1's sample alone: image 0's left at its exit */
    check_all(r, 2, &(struct fmt_all_totals){true, 5, 1, 5, 1, 80000, true, 2000, 75000});
    /* image 0's own heap still ends A */
    assert_int_equal(fmt_reader_chunk_totals(r, 1, got_image, NULL, &g), 0);
    assert_int_equal(g.nr_img, 2);
    assert_int_equal(g.img[0].heap, -100);
    assert_int_equal(g.img[0].blocks, -1);
    assert_true(g.img[0].ended);
    fmt_reader_close(r);
    tfmt_close(&t);
}

static void test_totals_roundtrip(void **state)
{
    struct tfmt t;

    (void)state;
    write_trace(&t);
    tfmt_check_written(&t, NULL, check_totals);
}

/* An event of image i (its one thread i, pid 300 + i) at us. */
static struct fmt_event of(unsigned i, uint16_t kind, uint64_t us)
{
    struct fmt_event ev = {.kind = kind, .ts_ns = us * 1000, .thread = i, .image = i};

    ev.pid = ev.tid = 300 + i;
    return ev;
}

/* Three processes in chunks of 6 events: images 0 and 1 run /bin/cc1,
 * image 2 /bin/as (format 1.12's programs' parts). */
static void write_prog_trace(struct tfmt *t)
{
    static const char *const exe[3] = {"/bin/cc1", "/bin/cc1", "/bin/as"};
    struct fmt_event ev[16];
    size_t n = 0;

    for (unsigned i = 0; i < 2; i++) {
        ev[n] = of(i, FMT_EV_PROCESS_START, 1 + i);
        ev[n].str = exe[i];
        ev[n++].str_len = (uint32_t)strlen(exe[i]);
    }
    /* chunk 0: cc1 100, 150 (its highest, 2 blocks), 50; RSS 1000 */
    ev[n] = of(0, FMT_EV_MALLOC, 3), ev[n].addr = H, ev[n++].size = 100;
    ev[n] = of(1, FMT_EV_MALLOC, 4), ev[n].addr = H + 0x100, ev[n++].size = 50;
    ev[n] = of(0, FMT_EV_FREE, 5), ev[n++].addr = H;
    ev[n] = of(0, FMT_EV_RSS, 6), ev[n++].size = 1000;
    /* chunk 1: as starts and holds 70; cc1 80 (+30, its highest), RSS
     * 1500; image 1 exits with 80: cc1 0, RSS 1000; image 0: 20 */
    ev[n] = of(2, FMT_EV_PROCESS_START, 7), ev[n].str = exe[2];
    ev[n++].str_len = (uint32_t)strlen(exe[2]);
    ev[n] = of(2, FMT_EV_MALLOC, 8), ev[n].addr = H + 0x200, ev[n++].size = 70;
    ev[n] = of(1, FMT_EV_MALLOC, 9), ev[n].addr = H + 0x300, ev[n++].size = 30;
    ev[n] = of(1, FMT_EV_RSS, 10), ev[n++].size = 500;
    ev[n++] = of(1, FMT_EV_PROCESS_EXIT, 11);
    ev[n] = of(0, FMT_EV_MALLOC, 12), ev[n].addr = H + 0x400, ev[n++].size = 20;
    /* chunk 2: as 80 (+10, 2 blocks), then exits; cc1 frees 20 alone */
    ev[n] = of(2, FMT_EV_MALLOC, 13), ev[n].addr = H + 0x500, ev[n++].size = 10;
    ev[n++] = of(2, FMT_EV_PROCESS_EXIT, 14);
    ev[n] = of(0, FMT_EV_FREE, 15), ev[n++].addr = H + 0x400;
    memset(t, 0, sizeof(*t));
    tfmt_start_opt(t, &tot_opt);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(fmt_writer_event(t->w, &ev[i]), 0);
}

struct got_progs {
    struct fmt_prog_totals v[4];
    unsigned nr;
};

static int got_prog(void *arg, const struct fmt_prog_totals *t)
{
    struct got_progs *g = arg;

    assert_true(g->nr < 4);
    g->v[g->nr++] = *t;
    return 0;
}

/* Chunk k's programs' parts are want[0 .. n). */
static void check_progs(struct fmt_reader *r, uint32_t k, const struct fmt_prog_totals *want,
                        unsigned n)
{
    struct got_progs g = {0};

    assert_int_equal(fmt_reader_chunk_prog_totals(r, k, got_prog, &g), 0);
    assert_int_equal(g.nr, n);
    for (unsigned i = 0; i < n; i++) {
        const struct fmt_all_totals *a = &g.v[i].part, *w = &want[i].part;
        assert_int_equal(g.v[i].first_image, want[i].first_image);
        assert_int_equal(a->has_peak, w->has_peak);
        assert_int_equal(a->heap, w->heap);
        assert_int_equal(a->blocks, w->blocks);
        assert_int_equal(a->peak, w->peak);
        assert_int_equal(a->peak_ns, w->peak_ns);
        assert_int_equal(a->peak_blocks, w->peak_blocks);
        assert_int_equal(a->has_rss, w->has_rss);
        assert_int_equal(a->rss_max, w->rss_max);
        assert_int_equal(a->rss_max_ns, w->rss_max_ns);
        assert_int_equal(g.v[i].rss, want[i].rss);
    }
}

static void check_programs(struct fmt_reader *r)
{
    assert_int_equal(fmt_reader_info(r)->version_minor, 12);
    assert_true(fmt_reader_has_prog_totals(r));
    assert_int_equal(fmt_reader_nr_chunks(r), 3);
    /* both cc1s moved: their sum's highest 150 at 4 us, its RSS 1000 */
    check_progs(
        r, 0, &(struct fmt_prog_totals){0, {true, 50, 1, 150, 2, 4000, true, 1000, 6000}, 1000}, 1);
    /* from 50 (1 block): +30 at 9 us (its highest), the exit takes 80
     * and 2 blocks, +20: -30 and no block; RSS 1000 + 500; as alone,
     * running on: none */
    check_progs(r, 1,
                &(struct fmt_prog_totals){0, {true, -30, 0, 30, 1, 9000, true, 1500, 10000}, 1000},
                1);
    /* as alone but exiting: from 70, +10 at 13 us, then 80 and 2 blocks
     * gone; cc1's one process freeing: none */
    check_progs(r, 2, &(struct fmt_prog_totals){2, {true, -70, -1, 10, 1, 13000, false, 0, 0}, 0},
                1);
}

/* A process that joins its program after an RSS sample of its own (dated
 * before its PROCESS_START): that chunk's part is not written (it missed
 * the sample), the next one's sum has it. Chunks of 4 events. */
static void test_programs_late(void **state)
{
    struct fmt_writer_options opt = tot_opt;
    struct fmt_event ev[8];
    struct tfmt t;
    size_t n = 0;

    (void)state;
    ev[n] = of(0, FMT_EV_PROCESS_START, 1), ev[n].str = "/bin/cc1", ev[n++].str_len = 8;
    ev[n] = of(1, FMT_EV_RSS, 2), ev[n++].size = 700; /* before its start */
    ev[n] = of(1, FMT_EV_PROCESS_START, 3), ev[n].str = "/bin/cc1", ev[n++].str_len = 8;
    ev[n] = of(0, FMT_EV_MALLOC, 4), ev[n].addr = H, ev[n++].size = 10;
    ev[n] = of(1, FMT_EV_MALLOC, 5), ev[n].addr = H + 0x100, ev[n++].size = 20;
    ev[n] = of(0, FMT_EV_RSS, 6), ev[n++].size = 300;
    opt.chunk_events = 4;
    memset(&t, 0, sizeof(t));
    tfmt_start_opt(&t, &opt);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(fmt_writer_event(t.w, &ev[i]), 0);
    tfmt_finish(&t);
    struct fmt_reader *r = tfmt_open(&t);
    assert_int_equal(fmt_reader_nr_chunks(r), 2);
    check_progs(r, 0, NULL, 0);
    /* 10 + 20 at 5 us; RSS 700 + 300 */
    check_progs(
        r, 1, &(struct fmt_prog_totals){0, {true, 20, 1, 20, 1, 5000, true, 1000, 6000}, 1000}, 1);
    fmt_reader_close(r);
    tfmt_close(&t);
}

/* Format 1.12: the programs' parts, written and as the golden trace holds
 * them. MS_FMT_WRITE_GOLDEN_1_12=PATH writes the trace anew; do that only
 * for a new format version, into a new file. */
static void test_programs(void **state)
{
    struct tfmt t;

    (void)state;
    write_prog_trace(&t);
    tfmt_check_written(&t, "MS_FMT_WRITE_GOLDEN_1_12", check_programs);
}

/* 1.10's (no all-processes part: -EINVAL) and 1.11's golden traces; and
 * 1.12's programs' parts. */
static void test_totals_golden(void **state)
{
    (void)state;
    tfmt_check_path(MS_GOLDEN_DIR "/v1_10.mscr", check_totals);
    tfmt_check_path(MS_GOLDEN_DIR "/v1_11.mscr", check_totals);
    tfmt_check_path(MS_GOLDEN_DIR "/v1_12.mscr", check_programs);
}

/* Without the option: a 1.7 trace, no totals. */
static void test_no_totals(void **state)
{
    struct fmt_writer_options opt = tot_opt;
    struct fmt_event ev = heap(FMT_EV_MALLOC, 20, 0, H, 100, 0);
    struct tfmt t;

    (void)state;
    opt.totals = 0;
    tfmt_start_opt(&t, &opt);
    assert_int_equal(fmt_writer_event(t.w, &ev), 0);
    tfmt_finish(&t);
    struct fmt_reader *r = tfmt_open(&t);
    assert_int_equal(fmt_reader_info(r)->version_minor, 7);
    assert_false(fmt_reader_has_totals(r));
    assert_int_equal(fmt_reader_chunk_totals(r, 0, got_image, NULL, NULL), -EINVAL);
    fmt_reader_close(r);
    tfmt_close(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_totals_roundtrip), cmocka_unit_test(test_totals_golden),
        cmocka_unit_test(test_no_totals),        cmocka_unit_test(test_all_exit),
        cmocka_unit_test(test_programs),         cmocka_unit_test(test_programs_late),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
