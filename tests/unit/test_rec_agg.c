/* SPDX-License-Identifier: MIT */
/* The aggregator of record --aggregate (src/recorder/rec_agg.h,
 * docs/aggregate.md) on hand-made events: which blocks are transient
 * (counted in batch rows, never written) and which kept (written with
 * their own times, in order with the interval's other events, at the cut),
 * temporaries by heaptrack's rule per thread into the rows (kept blocks
 * too), the transient bytes at the interval's moment of highest heap of
 * all images and of one image (less the kept blocks live then), reallocs
 * of pending, kept and unknown blocks, an image's exit, and the cut before
 * a scan. Each case writes a trace through a real writer and reads it back
 * with the reader. */
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

#include "format/fmt_writer.h"
#include "memscribe/trace.h"
#include "recorder/rec_agg.h"

#define P 100000ull /* the period: 100 us; the time unit is 1 us */
#define H 0x5555000000ull

/* Two images: threads 0 and 1 of image 0 (pid 10), thread 2 of image 1. */
static const struct fmt_writer_who who[3] = {{0, 0, 10, 10}, {0, 1, 10, 11}, {1, 2, 20, 20}};

struct t {
    int fd;
    struct fmt_writer *w;
    struct rec_agg *a;
    uint32_t stack[4]; /* stacks 1..3 of image 0, [3] of image 1 */
    struct fmt_event ev[256];
    int n;
    uint64_t from_ns; /* the trace's aggregate_from_ns */
};

/* A trace aggregated from its start, or (exact_first) exact until a
 * switch (record --max-size). */
static void t_start_mode(struct t *t, int exact_first)
{
    static const struct fmt_writer_options opt = {
        .time_unit_ns = 1000, .time_pack = 1, .free_ranks = 1, .realloc_pred = 1, .aggregate = 1};
    struct fmt_trace_info info = {.stack_depth = 8, .aggregate_ns = exact_first ? 0 : P};

    memset(t, 0, sizeof(*t));
    t->fd = memfd_create("agg", MFD_CLOEXEC);
    assert_true(t->fd >= 0);
    assert_int_equal(fmt_writer_create(&t->w, t->fd, &info, &opt), 0);
    for (uint32_t i = 0; i < 4; i++) {
        uint64_t frame = 0x401000 + 0x100 * i;

        assert_int_equal(fmt_writer_stack(t->w, i == 3, &frame, 1, &t->stack[i]), 0);
    }
    assert_int_equal(rec_agg_new(&t->a, t->w, P, exact_first), 0);
}

static void t_start(struct t *t)
{
    t_start_mode(t, 0);
}

static void t_malloc(struct t *t, int th, uint64_t ts, uint64_t addr, uint64_t size, int site)
{
    assert_int_equal(rec_agg_heap(t->a, &who[th], FMT_EV_MALLOC, ts, addr, size, t->stack[site]),
                     0);
}

static void t_free(struct t *t, int th, uint64_t ts, uint64_t addr)
{
    assert_int_equal(rec_agg_heap(t->a, &who[th], FMT_EV_FREE, ts, addr, 0, 0), 0);
}

static void t_realloc(struct t *t, int th, uint64_t ts, uint64_t old, uint64_t addr, uint64_t size,
                      int site)
{
    assert_int_equal(rec_agg_realloc(t->a, &who[th], 0, ts, old, addr, size, t->stack[site]), 0);
}

static void t_other(struct t *t, int th, uint64_t ts, uint16_t kind)
{
    struct fmt_event ev = {.ts_ns = ts,
                           .kind = kind,
                           .image = who[th].image,
                           .thread = who[th].thread,
                           .pid = who[th].pid,
                           .tid = who[th].tid,
                           .str = "name",
                           .str_len = kind == FMT_EV_THREAD_START ? 4 : 0};

    if (kind != FMT_EV_THREAD_START)
        ev.str = NULL;
    if (kind == FMT_EV_PROCESS_EXIT)
        ev.arg[1] = 1;
    assert_int_equal(rec_agg_event(t->a, &ev), 0);
}

/* End the trace at ts (the last cut) and read every event back into t->ev. */
static void t_read(struct t *t, uint64_t ts)
{
    struct fmt_reader *r;
    char err[512];

    assert_int_equal(rec_agg_cut_at(t->a, ts), 0);
    assert_int_equal(fmt_writer_finish(t->w), 0);
    assert_int_equal(fmt_reader_open_fd(&r, t->fd, "agg", err, sizeof(err)), 0);
    assert_int_equal(fmt_reader_info(r)->aggregate_ns, P);
    t->from_ns = fmt_reader_info(r)->aggregate_from_ns;
    while (t->n < 256 && fmt_reader_next(r, &t->ev[t->n]) == 1) {
        t->ev[t->n].str = NULL; /* valid only until the next call */
        t->ev[t->n].module = NULL;
        t->n++;
    }
    fmt_reader_close(r);
    rec_agg_free(t->a);
    fmt_writer_destroy(t->w);
    close(t->fd);
}

/* The i-th event read must be of kind at ts; returns it. */
static const struct fmt_event *at(const struct t *t, int i, uint16_t kind, uint64_t ts)
{
    if (i >= t->n)
        fail_msg("event %d of %d wanted", i, t->n);
    if (t->ev[i].kind != kind || t->ev[i].ts_ns != ts)
        fail_msg("event %d: %s at %llu, wanted %s at %llu", i, fmt_kind_name(t->ev[i].kind),
                 (unsigned long long)t->ev[i].ts_ns, fmt_kind_name(kind), (unsigned long long)ts);
    return &t->ev[i];
}

static void is_batch(const struct t *t, int i, uint64_t ts, int th, int site, uint64_t blocks,
                     uint64_t bytes, uint64_t temp, uint64_t temp_bytes)
{
    const struct fmt_event *e = at(t, i, FMT_EV_HEAP_BATCH, ts);

    assert_int_equal(e->thread, who[th].thread);
    assert_int_equal(e->stack, t->stack[site]);
    assert_int_equal(e->arg[0], blocks);
    assert_int_equal(e->size, bytes);
    assert_int_equal(e->arg[1], temp);
    assert_int_equal(e->arg[2], temp_bytes);
}

static void is_transient(const struct t *t, int i, uint64_t ts, int site, uint64_t bytes,
                         uint64_t blocks, int own, int end)
{
    const struct fmt_event *e = at(t, i, FMT_EV_HEAP_TRANSIENT, ts);

    assert_int_equal(e->stack, t->stack[site]);
    assert_int_equal(e->size, bytes);
    assert_int_equal(e->arg[0], blocks);
    assert_int_equal(e->arg[1], own);
    assert_int_equal(!!(e->flags & FMT_EVF_TRANSIENT_END), end);
}

/* Born and freed in one interval: a batch row, temporary (nothing else
 * by the thread between), nothing written but the row and the transient
 * group at the interval's highest moment (100 transient bytes beside the
 * 200 of a kept block). Live at a cut: its allocation at its own time
 * (before the non-heap event after it), its free in the next interval,
 * temporary still (its thread did nothing else), in a row of no transient
 * blocks. */
static void test_agg_transient_kept(void **state)
{
    struct t t;

    (void)state;
    t_start(&t);
    t_malloc(&t, 0, 10000, H + 0x100, 100, 0);
    t_malloc(&t, 1, 30000, H + 0x200, 200, 1);
    t_free(&t, 0, 35000, H + 0x100);
    t_other(&t, 0, 40000, FMT_EV_THREAD_START);
    t_free(&t, 1, 150000, H + 0x200);
    t_read(&t, 250000);
    at(&t, 0, FMT_EV_AGGREGATE, 0);
    const struct fmt_event *m = at(&t, 1, FMT_EV_MALLOC, 30000);
    assert_int_equal(m->size, 200);
    assert_int_equal(m->thread, 1);
    is_transient(&t, 2, 30000, 0, 100, 1, 0, 0);
    is_transient(&t, 3, 30000, 0, 100, 1, 0, 1);
    at(&t, 4, FMT_EV_THREAD_START, 40000);
    is_batch(&t, 5, P, 0, 0, 1, 100, 1, 100);
    const struct fmt_event *f = at(&t, 6, FMT_EV_FREE, 150000);
    assert_int_equal(f->ref, m->serial);
    is_batch(&t, 7, 2 * P, 1, 1, 0, 0, 1, 200);
    assert_int_equal(t.n, 8);
}

/* Not temporary: another allocation by the thread between (the strict
 * rule), a free by another thread, a free of an address not known before
 * (which passes through and breaks nothing). */
static void test_agg_temporary_rule(void **state)
{
    struct t t;

    (void)state;
    t_start(&t);
    t_malloc(&t, 0, 1000, H + 0x100, 10, 0);
    t_malloc(&t, 0, 2000, H + 0x200, 20, 1);
    t_free(&t, 0, 3000, H + 0x100); /* not: 0x200 came between */
    t_free(&t, 0, 4000, H + 0x200); /* not: a free came between */
    t_malloc(&t, 0, 5000, H + 0x300, 30, 2);
    t_free(&t, 1, 6000, H + 0x300); /* not: another thread */
    t_malloc(&t, 1, 7000, H + 0x400, 25, 2);
    t_free(&t, 1, 8000, H + 0x999); /* unknown: written, changes nothing */
    t_free(&t, 1, 9000, H + 0x400); /* temporary */
    t_read(&t, 10000);
    int i = 1;
    /* The highest: 30 bytes at 2000 (not again at 5000: the first). */
    is_transient(&t, i++, 2000, 0, 10, 1, 0, 0);
    is_transient(&t, i++, 2000, 1, 20, 1, 0, 0);
    is_transient(&t, i++, 2000, 0, 10, 1, 0, 1);
    is_transient(&t, i++, 2000, 1, 20, 1, 0, 1);
    at(&t, i++, FMT_EV_FREE, 8000); /* as it is, no reference */
    assert_int_equal(t.ev[i - 1].ref, 0);
    is_batch(&t, i++, 10000, 0, 0, 1, 10, 0, 0);
    is_batch(&t, i++, 10000, 0, 1, 1, 20, 0, 0);
    is_batch(&t, i++, 10000, 0, 2, 1, 30, 0, 0);
    is_batch(&t, i++, 10000, 1, 2, 1, 25, 1, 25);
    assert_int_equal(t.n, i);
}

/* The peak made of transient blocks, beside a kept block of the same site
 * live then (in the kept events: not in the group), and one image's own
 * moment after the moment of all images (its heap highest when the other
 * image's was not). */
static void test_agg_peak(void **state)
{
    struct t t;

    (void)state;
    t_start(&t);
    t_malloc(&t, 0, 1000, H + 0x100, 1000, 0); /* kept */
    t_malloc(&t, 0, 2000, H + 0x200, 300, 0);
    t_malloc(&t, 1, 3000, H + 0x300, 400, 1);
    t_free(&t, 0, 4000, H + 0x200);
    t_free(&t, 1, 5000, H + 0x300); /* image 0: 1700 at 3000, the highest */
    t_malloc(&t, 2, 6000, H + 0x100, 500, 3);
    t_malloc(&t, 2, 7000, H + 0x900, 50, 3);
    t_free(&t, 2, 8000, H + 0x100); /* image 1: 550 at 7000; all: 1550 */
    t_free(&t, 2, 9000, H + 0x900);
    t_read(&t, 20000);
    int i = 1;
    at(&t, i++, FMT_EV_MALLOC, 1000);
    /* All images at 3000: 1000 kept + 300 + 400 transient. */
    is_transient(&t, i++, 3000, 0, 300, 1, 0, 0);
    is_transient(&t, i++, 3000, 1, 400, 1, 0, 0);
    is_transient(&t, i++, 3000, 0, 300, 1, 0, 1);
    is_transient(&t, i++, 3000, 1, 400, 1, 0, 1);
    /* Image 1 alone at 7000. */
    is_transient(&t, i++, 7000, 3, 550, 2, 1, 0);
    is_transient(&t, i++, 7000, 3, 550, 2, 1, 1);
    assert_int_equal(t.ev[i - 1].image, 1);
    /* Each thread freed its latest allocation: temporary; not thread 2's
     * first block (its second came between). Rows by size class. */
    is_batch(&t, i++, 20000, 0, 0, 1, 300, 1, 300);
    is_batch(&t, i++, 20000, 1, 1, 1, 400, 1, 400);
    is_batch(&t, i++, 20000, 2, 3, 1, 50, 0, 0);
    is_batch(&t, i++, 20000, 2, 3, 1, 500, 0, 0);
    assert_int_equal(t.n, i);
}

/* Reallocs: of a pending block (its new block, kept, written as a realloc
 * of NULL; the old one transient), of a kept block (written as it is, its
 * new block kept at once), of an address not known (a free of it, then a
 * new block), realloc(p, 0) of a pending block (nothing written). */
static void test_agg_realloc(void **state)
{
    struct t t;

    (void)state;
    t_start(&t);
    t_malloc(&t, 0, 1000, H + 0x100, 10, 0);
    t_realloc(&t, 0, 2000, H + 0x100, H + 0x200, 20, 0); /* pending -> pending (kept) */
    t_malloc(&t, 1, 3000, H + 0x500, 5, 1);
    t_realloc(&t, 1, 4000, H + 0x500, 0, 0, 1);            /* realloc(p, 0): both transient */
    t_realloc(&t, 0, 110000, H + 0x200, H + 0x300, 30, 0); /* kept -> kept */
    t_realloc(&t, 1, 120000, H + 0x777, H + 0x400, 40, 1); /* unknown -> pending (kept) */
    t_read(&t, 150000);
    int i = 1;
    const struct fmt_event *r = at(&t, i++, FMT_EV_REALLOC, 2000);
    assert_int_equal(r->old_addr, 0);
    assert_int_equal(r->addr, H + 0x200);
    assert_int_equal(r->ref, 0);
    is_transient(&t, i++, 3000, 1, 5, 1, 0, 0); /* 0x200 is kept: not in it */
    is_transient(&t, i++, 3000, 1, 5, 1, 0, 1);
    is_batch(&t, i++, P, 0, 0, 1, 10, 1, 10);
    is_batch(&t, i++, P, 1, 1, 1, 5, 1, 5);
    r = at(&t, i++, FMT_EV_REALLOC, 110000);
    assert_int_equal(r->old_addr, H + 0x200);
    assert_int_equal(r->ref, t.ev[1].serial);
    const struct fmt_event *f = at(&t, i++, FMT_EV_FREE, 120000);
    assert_int_equal(f->addr, H + 0x777);
    r = at(&t, i++, FMT_EV_REALLOC, 120000);
    assert_int_equal(r->old_addr, 0);
    assert_int_equal(r->size, 40);
    /* The kept block at 0x200 ended by its own thread's realloc, with
     * nothing between: temporary, in a row of no transient blocks. */
    is_batch(&t, i++, 150000, 0, 0, 0, 0, 1, 20);
    assert_int_equal(t.n, i);
}

/* An image's exit takes its blocks out of the running heap: a later
 * moment of the other image is the highest of all, with less than the
 * sum; the blocks live at the exit are kept (leaks). A cut asked for
 * (a scan) writes every pending block at once. */
static void test_agg_exit_and_cut(void **state)
{
    struct t t;

    (void)state;
    t_start(&t);
    t_malloc(&t, 2, 1000, H + 0x100, 1000, 3); /* image 1's leak */
    t_other(&t, 2, 2000, FMT_EV_PROCESS_EXIT);
    t_malloc(&t, 0, 3000, H + 0x200, 600, 0);
    t_free(&t, 0, 4000, H + 0x200);
    assert_int_equal(rec_agg_cut_at(t.a, 5000), 0); /* a scan at 5000 */
    t_malloc(&t, 0, 6000, H + 0x300, 700, 0);
    t_free(&t, 0, 7000, H + 0x300);
    t_read(&t, 9000);
    int i = 1;
    at(&t, i++, FMT_EV_MALLOC, 1000);
    at(&t, i++, FMT_EV_PROCESS_EXIT, 2000);
    /* Highest of all at 1000 (1000 live); image 0 alone at 3000. */
    is_transient(&t, i++, 3000, 0, 600, 1, 1, 0);
    is_transient(&t, i++, 3000, 0, 600, 1, 1, 1);
    is_batch(&t, i++, 5000, 0, 0, 1, 600, 1, 600);
    /* After the cut: all running images' heap is image 0's alone. */
    is_transient(&t, i++, 6000, 0, 700, 1, 0, 0);
    is_transient(&t, i++, 6000, 0, 700, 1, 0, 1);
    is_batch(&t, i++, 9000, 0, 0, 1, 700, 1, 700);
    assert_int_equal(t.n, i);
}

/* Cuts at multiples of the period as time passes their tick (the unit
 * is 1 us: the cut at P once events dated past P may come, from P + 1 us;
 * rec_agg_advance), idle intervals skipped; a free of NULL writes
 * nothing. */
static void test_agg_advance(void **state)
{
    struct rec_agg_stats st;
    uint64_t last;
    struct t t;

    (void)state;
    t_start(&t);
    t_malloc(&t, 0, 1000, H + 0x100, 8, 0);
    t_free(&t, 0, 1500, 0);
    assert_int_equal(rec_agg_advance(t.a, P + 999, &last), 0);
    assert_int_equal(last, 0);
    assert_int_equal(rec_agg_advance(t.a, P + 1000, &last), 0);
    assert_int_equal(last, P);
    assert_int_equal(rec_agg_advance(t.a, 1000 * P + 5, &last), 0);
    assert_int_equal(last, 999 * P);
    assert_int_equal(rec_agg_advance(t.a, 1000 * P + 1000, &last), 0);
    assert_int_equal(last, 1000 * P);
    rec_agg_get_stats(t.a, &st);
    assert_int_equal(st.nr_cuts, 1);
    assert_int_equal(st.nr_kept, 1);
    t_read(&t, 1000 * P + 10);
    at(&t, 1, FMT_EV_MALLOC, 1000);
    assert_int_equal(t.n, 2);
}

/* rec_agg_live_each: the blocks a --keep-last segment carries in. A block
 * whose free the trace missed (another took its address: a thread killed
 * between the real free and its event) stays live for ever in the trace,
 * so it is carried too, kept when orphaned (y) or pending then (z): a
 * segment holds what the trace holds. Without segments it is forgotten. */
static int count_live(void *arg, uint32_t k, uint64_t ts, uint32_t image)
{
    uint64_t *sum = arg;

    (void)k;
    (void)image;
    sum[0]++;
    sum[1] += ts;
    return 0;
}

static void test_agg_orphans_carried(void **state)
{
    struct t t;
    uint64_t last;

    (void)state;
    for (int keep = 0; keep < 2; keep++) {
        uint64_t sum[2] = {0, 0};

        t_start(&t);
        if (keep)
            rec_agg_keep_fields(t.a);
        t_malloc(&t, 0, 1000, H + 0x100, 8, 0); /* y: kept at the cut at P */
        assert_int_equal(rec_agg_advance(t.a, P + 1000, &last), 0);
        t_malloc(&t, 1, P + 2000, H + 0x100, 16, 1); /* y's address: y is an orphan */
        t_malloc(&t, 0, P + 3000, H + 0x200, 8, 0);  /* z, pending... */
        t_malloc(&t, 1, P + 4000, H + 0x200, 32, 1); /* ...and an orphan */
        assert_int_equal(rec_agg_advance(t.a, 2 * P + 1000, &last), 0);
        assert_int_equal(rec_agg_live_each(t.a, count_live, sum), 0);
        /* with segments: y, the block at y's address, z and the one at z's;
         * without: the two that took the addresses */
        assert_int_equal(sum[0], keep ? 4 : 2);
        assert_int_equal(sum[1],
                         keep ? 1000 + P + 2000 + P + 3000 + P + 4000 : P + 2000 + P + 4000);
        t_read(&t, 2 * P + 10);
    }
}

/* record --max-size: exact (every event written as it comes) until the
 * switch, which comes at once, at the latest event's time, with an
 * AGGREGATE event of arg[1] 1, the next cut at the next multiple of the
 * period; a block of the exact stretch freed after it is a kept block's end,
 * temporary by its thread's events before the switch. */
static void test_agg_switch(void **state)
{
    struct t t;

    (void)state;
    t_start_mode(&t, 1);
    t_malloc(&t, 0, 1000, H + 0x100, 60, 0);
    t_free(&t, 0, 2000, H + 0x100);
    t_malloc(&t, 0, 3000, H + 0x200, 100, 0);
    assert_int_equal(rec_agg_exact_now(t.a), 1);
    rec_agg_switch(t.a);
    t_free(&t, 0, 150000, H + 0x200);
    assert_int_equal(rec_agg_exact_now(t.a), 0);
    t_malloc(&t, 0, 160000, H + 0x300, 50, 0);
    t_free(&t, 0, 170000, H + 0x300);
    t_read(&t, 250000);
    const struct fmt_event *a = at(&t, 0, FMT_EV_MALLOC, 1000);
    assert_int_equal(at(&t, 1, FMT_EV_FREE, 2000)->ref, a->serial);
    const struct fmt_event *b = at(&t, 2, FMT_EV_MALLOC, 3000);
    const struct fmt_event *g = at(&t, 3, FMT_EV_AGGREGATE, 3000);
    assert_int_equal(g->arg[0], P);
    assert_int_equal(g->arg[1], 1);
    assert_int_equal(at(&t, 4, FMT_EV_FREE, 150000)->ref, b->serial);
    is_batch(&t, 5, 2 * P, 0, 0, 1, 50, 1, 50);
    is_batch(&t, 6, 2 * P, 0, 0, 0, 0, 1, 100);
    assert_int_equal(t.n, 7);
    assert_int_equal(t.from_ns, 3000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agg_transient_kept), cmocka_unit_test(test_agg_temporary_rule),
        cmocka_unit_test(test_agg_peak),           cmocka_unit_test(test_agg_realloc),
        cmocka_unit_test(test_agg_exit_and_cut),   cmocka_unit_test(test_agg_advance),
        cmocka_unit_test(test_agg_switch),         cmocka_unit_test(test_agg_orphans_carried),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
