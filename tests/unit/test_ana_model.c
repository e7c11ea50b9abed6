/* SPDX-License-Identifier: MIT */
/* The heap model on hand-made event sequences with exact expectations:
 * peak and its time, each stack's live bytes at the peak (the lazy
 * generation trick), leaks, temporary allocations (heaptrack's rule and a
 * threshold), realloc, calls per kind, RSS, filters, several processes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/model/ana_fold.h"
#include "analysis/model/ana_model.h"

/* A little event builder: one process (image 0, pid 10) unless changed. */
struct seq {
    struct ana_model *m;
    uint64_t next_serial;
    uint64_t ts;
    uint32_t image, pid, thread, tid;
    /* Live blocks by serial, as the reader would resolve them. */
    struct {
        uint64_t size, ts;
        uint32_t stack, thread;
    } blk[64];
};

static void seq_init(struct seq *s, const struct ana_model_options *opt)
{
    memset(s, 0, sizeof(*s));
    assert_int_equal(ana_model_create(&s->m, opt), 0);
    s->next_serial = 1;
    s->pid = 10;
    s->tid = 10;
}

static struct fmt_event base(struct seq *s, uint16_t kind)
{
    struct fmt_event ev = {0};

    ev.kind = kind;
    ev.ts_ns = ++s->ts;
    ev.image = s->image;
    ev.pid = s->pid;
    ev.thread = s->thread;
    ev.tid = s->tid;
    return ev;
}

static void set_ref(struct seq *s, struct fmt_event *ev, uint64_t serial)
{
    ev->ref = serial;
    ev->ref_size = s->blk[serial].size;
    ev->ref_ts_ns = s->blk[serial].ts;
    ev->ref_stack = s->blk[serial].stack;
    ev->ref_thread = s->blk[serial].thread;
    ev->nr_refs = 1;
}

static void start(struct seq *s, struct fmt_event *ev, uint64_t size, uint32_t stack)
{
    ev->serial = s->next_serial++;
    ev->size = size;
    ev->stack = stack;
    ev->addr = 0x1000 * ev->serial;
    s->blk[ev->serial].size = size;
    s->blk[ev->serial].ts = ev->ts_ns;
    s->blk[ev->serial].stack = stack;
    s->blk[ev->serial].thread = ev->thread;
}

static uint64_t do_malloc(struct seq *s, uint64_t size, uint32_t stack)
{
    struct fmt_event ev = base(s, FMT_EV_MALLOC);

    start(s, &ev, size, stack);
    assert_int_equal(ana_model_event(s->m, &ev), 0);
    return ev.serial;
}

static void do_free(struct seq *s, uint64_t serial)
{
    struct fmt_event ev = base(s, FMT_EV_FREE);

    ev.addr = 0x1000 * serial;
    set_ref(s, &ev, serial);
    assert_int_equal(ana_model_event(s->m, &ev), 0);
}

static uint64_t do_realloc(struct seq *s, uint64_t serial, uint64_t size, uint32_t stack)
{
    struct fmt_event ev = base(s, FMT_EV_REALLOC);

    ev.old_addr = 0x1000 * serial;
    set_ref(s, &ev, serial);
    start(s, &ev, size, stack);
    assert_int_equal(ana_model_event(s->m, &ev), 0);
    return ev.serial;
}

static void test_peak_leaks_temporary(void **state)
{
    struct seq s;
    (void)state;

    seq_init(&s, NULL);
    uint64_t a = do_malloc(&s, 100, 1); /* t1 */
    uint64_t b = do_malloc(&s, 50, 2);  /* t2 */
    do_free(&s, b);                     /* t3: temporary, b was the last */
    do_malloc(&s, 200, 2);              /* t4: heap 300, a peak */
    do_free(&s, a);                     /* t5: not temporary */
    uint64_t d = do_malloc(&s, 250, 1); /* t6: heap 450, the peak */
    do_realloc(&s, d, 10, 3);           /* t7: ends d (temporary), heap 210 */
    do_malloc(&s, 5, 3);                /* t8: heap 215 */
    ana_model_finish(s.m);

    const struct ana_scope *sc = ana_model_image(s.m, 0);
    assert_non_null(sc);
    assert_true(sc->seen);
    assert_int_equal(sc->peak, 450);
    assert_int_equal(sc->peak_ns, 6);
    assert_int_equal(sc->peak_blocks, 2);
    assert_int_equal(sc->heap, 215);
    assert_int_equal(sc->live_blocks, 3);
    assert_int_equal(sc->nr_allocs, 6);
    assert_int_equal(sc->alloc_bytes, 615);
    assert_int_equal(sc->nr_frees, 3);
    assert_int_equal(sc->nr_temporary, 2);
    assert_int_equal(sc->temporary_bytes, 300);
    assert_int_equal(sc->nr_calls[FMT_EV_MALLOC], 5);
    assert_int_equal(sc->nr_calls[FMT_EV_FREE], 2);
    assert_int_equal(sc->nr_calls[FMT_EV_REALLOC], 1);
    assert_int_equal(sc->first_ns, 1);
    assert_int_equal(sc->last_ns, 8);

    /* At the peak (t6): stack 1 held d (250), stack 2 held c (200). */
    assert_int_equal(ana_model_site(s.m, 1)->peak_bytes, 250);
    assert_int_equal(ana_model_site(s.m, 2)->peak_bytes, 200);
    assert_int_equal(ana_model_site(s.m, 3)->peak_bytes, 0);
    /* Leaked: c on stack 2; e and f on stack 3. */
    assert_int_equal(ana_model_site(s.m, 1)->live_bytes, 0);
    assert_int_equal(ana_model_site(s.m, 2)->live_bytes, 200);
    assert_int_equal(ana_model_site(s.m, 2)->live_blocks, 1);
    assert_int_equal(ana_model_site(s.m, 3)->live_bytes, 15);
    assert_int_equal(ana_model_site(s.m, 3)->live_blocks, 2);
    assert_int_equal(ana_model_site(s.m, 1)->nr_temporary, 1);
    assert_int_equal(ana_model_site(s.m, 2)->nr_temporary, 1);
    assert_int_equal(ana_model_site(s.m, 1)->nr_allocs, 2);
    assert_int_equal(ana_model_site(s.m, 1)->alloc_bytes, 350);
    /* One process: the total is the same. */
    assert_int_equal(ana_model_total(s.m)->peak, 450);
    assert_int_equal(ana_model_site(s.m, 1)->peak_all_bytes, 250);
    ana_model_destroy(s.m);
}

/* The peak contribution must be the value at the peak even when a stack
 * changes many times after it and never again before the end. */
static void test_peak_contribution_after_changes(void **state)
{
    struct seq s;
    uint64_t keep[8];
    (void)state;

    seq_init(&s, NULL);
    for (int i = 0; i < 8; i++)
        keep[i] = do_malloc(&s, 10, 1 + (uint32_t)(i % 2)); /* 40 on each stack */
    do_malloc(&s, 1000, 3);                                 /* the peak: 1080 */
    for (int i = 0; i < 8; i += 2)
        do_free(&s, keep[i]); /* stack 1 drops to 0 */
    do_malloc(&s, 5, 1);
    ana_model_finish(s.m);
    assert_int_equal(ana_model_image(s.m, 0)->peak, 1080);
    assert_int_equal(ana_model_site(s.m, 1)->peak_bytes, 40);
    assert_int_equal(ana_model_site(s.m, 2)->peak_bytes, 40);
    assert_int_equal(ana_model_site(s.m, 3)->peak_bytes, 1000);
    /* Contributions add up to the peak. */
    ana_model_destroy(s.m);
}

static void test_temporary_threshold(void **state)
{
    struct ana_model_options o = {.temporary_threshold = 1};
    struct seq s;
    (void)state;

    /* x, y, free x: one allocation in between. */
    seq_init(&s, NULL);
    uint64_t x = do_malloc(&s, 8, 1);
    do_malloc(&s, 8, 1);
    do_free(&s, x);
    assert_int_equal(ana_model_image(s.m, 0)->nr_temporary, 0);
    ana_model_destroy(s.m);

    seq_init(&s, &o);
    x = do_malloc(&s, 8, 1);
    do_malloc(&s, 8, 1);
    do_free(&s, x);
    assert_int_equal(ana_model_image(s.m, 0)->nr_temporary, 1);
    /* Two in between: not even with threshold 1. */
    x = do_malloc(&s, 8, 1);
    do_malloc(&s, 8, 1);
    do_malloc(&s, 8, 1);
    do_free(&s, x);
    assert_int_equal(ana_model_image(s.m, 0)->nr_temporary, 1);
    /* keep_blocks is implied: the live blocks are listed. */
    struct ana_block *b;
    long n = ana_model_blocks(s.m, &b);
    assert_int_equal(n, 3);
    assert_int_equal(b[0].serial, 2);
    assert_int_equal(b[1].serial, 4);
    assert_int_equal(b[2].serial, 5);
    assert_int_equal(b[2].size, 8);
    assert_int_equal(b[2].addr, 0x5000);
    free(b);
    ana_model_destroy(s.m);
}

/* The strict rule (default): a free by the same thread in between makes a
 * block not temporary (a std::map node freed after other nodes); another
 * thread's events do not. The loose rule (threshold 0) ignores frees. */
static void test_temporary_strict(void **state)
{
    struct ana_model_options loose = {.loose_temporary = true};
    const struct ana_model_options *opts[2] = {NULL, &loose};
    uint64_t want[2] = {1, 2};
    struct seq s;
    (void)state;

    for (int i = 0; i < 2; i++) {
        seq_init(&s, opts[i]);
        uint64_t old = do_malloc(&s, 32, 1);
        uint64_t node = do_malloc(&s, 96, 2);
        do_free(&s, old);  /* not temporary: node came after it */
        do_free(&s, node); /* strict: not temporary (a free in between) */
        uint64_t p = do_malloc(&s, 70, 3);
        s.thread = 1, s.tid = 2;
        do_free(&s, do_malloc(&s, 40, 4)); /* thread 1: temporary */
        s.thread = 0, s.tid = 10;
        do_free(&s, p); /* temporary: thread 1's events do not count */
        assert_int_equal(ana_model_site(s.m, 2)->nr_temporary, (uint64_t)i);
        assert_int_equal(ana_model_site(s.m, 3)->nr_temporary, 1);
        assert_int_equal(ana_model_site(s.m, 4)->nr_temporary, 1);
        assert_int_equal(ana_model_image(s.m, 0)->nr_temporary, want[i] + 1);
        ana_model_destroy(s.m);
    }
}

static void test_threads_filter_and_temporary(void **state)
{
    struct ana_filter f;
    struct ana_model_options o = {.filter = &f};
    struct seq s;
    (void)state;

    ana_filter_init(&f);
    assert_int_equal(ana_filter_add_tids(&f, "21"), 0);
    seq_init(&s, &o);
    s.thread = 1, s.tid = 21;
    uint64_t a = do_malloc(&s, 100, 1); /* selected */
    s.thread = 0, s.tid = 20;
    uint64_t b = do_malloc(&s, 7, 2); /* not selected */
    do_free(&s, a);                   /* thread 20 frees thread 21's block: it counts */
    do_free(&s, b);
    s.thread = 1, s.tid = 21;
    uint64_t c = do_malloc(&s, 30, 1);
    do_free(&s, c); /* temporary for thread 21 */
    ana_model_finish(s.m);

    const struct ana_scope *sc = ana_model_image(s.m, 0);
    assert_int_equal(sc->nr_allocs, 2);
    assert_int_equal(sc->alloc_bytes, 130);
    assert_int_equal(sc->nr_frees, 2);
    assert_int_equal(sc->heap, 0);
    assert_int_equal(sc->peak, 100);
    assert_int_equal(sc->nr_temporary, 1);
    /* Calls are those the selected thread made. */
    assert_int_equal(sc->nr_calls[FMT_EV_MALLOC], 2);
    assert_int_equal(sc->nr_calls[FMT_EV_FREE], 1);
    assert_null(ana_model_site(s.m, 2));
    ana_model_destroy(s.m);
    ana_filter_release(&f);
}

static void test_processes_rss_unmatched(void **state)
{
    struct ana_filter f;
    struct ana_model_options o = {.filter = &f};
    struct seq s;
    (void)state;

    seq_init(&s, NULL);
    do_malloc(&s, 100, 1); /* image 0: 100 */
    s.image = 1, s.pid = 11, s.thread = 1, s.tid = 11;
    uint64_t b = do_malloc(&s, 300, 5); /* image 1: 300; total 400 */
    do_free(&s, b);
    do_malloc(&s, 50, 5);
    struct fmt_event ev = base(&s, FMT_EV_RSS);
    ev.size = 4096;
    assert_int_equal(ana_model_event(s.m, &ev), 0);
    ev = base(&s, FMT_EV_FREE);
    ev.addr = 0xdead; /* never allocated: no ref */
    assert_int_equal(ana_model_event(s.m, &ev), 0);
    ev = base(&s, FMT_EV_DROPPED);
    ev.arg[0] = 3;
    assert_int_equal(ana_model_event(s.m, &ev), 0);
    s.image = 0, s.pid = 10, s.thread = 0, s.tid = 10;
    ev = base(&s, FMT_EV_RSS);
    ev.size = 1000;
    assert_int_equal(ana_model_event(s.m, &ev), 0);
    ana_model_finish(s.m);

    assert_int_equal(ana_model_nr_seen(s.m), 2);
    assert_int_equal(ana_model_image(s.m, 0)->peak, 100);
    assert_int_equal(ana_model_image(s.m, 1)->peak, 300);
    assert_int_equal(ana_model_image(s.m, 1)->pid, 11);
    assert_int_equal(ana_model_total(s.m)->peak, 400);
    assert_int_equal(ana_model_total(s.m)->peak_ns, 2);
    assert_int_equal(ana_model_site(s.m, 1)->peak_all_bytes, 100);
    assert_int_equal(ana_model_site(s.m, 5)->peak_all_bytes, 300);
    assert_int_equal(ana_model_image(s.m, 1)->rss_peak, 4096);
    assert_int_equal(ana_model_image(s.m, 0)->rss_peak, 1000);
    assert_int_equal(ana_model_total(s.m)->rss_peak, 5096); /* summed over processes */
    assert_int_equal(ana_model_image(s.m, 1)->nr_unmatched_frees, 1);
    assert_int_equal(ana_model_image(s.m, 1)->nr_dropped, 3);
    assert_int_equal(ana_model_total(s.m)->heap, 150);
    ana_model_destroy(s.m);

    /* --pid 11: only the second process. */
    ana_filter_init(&f);
    assert_int_equal(ana_filter_add_pids(&f, "11"), 0);
    seq_init(&s, &o);
    do_malloc(&s, 100, 1);
    s.image = 1, s.pid = 11, s.thread = 1, s.tid = 11;
    do_malloc(&s, 300, 5);
    assert_int_equal(ana_model_nr_seen(s.m), 1);
    assert_false(ana_model_image(s.m, 0)->seen);
    assert_int_equal(ana_model_total(s.m)->peak, 300);
    ana_model_destroy(s.m);
    ana_filter_release(&f);
}

/* A process's heap and RSS leave the totals at its exit; its blocks stay
 * its leaks; a site of a process that ended before the tree's peak had
 * nothing at that peak, one that ended after it keeps its share. */
static void test_exit_leaves_totals(void **state)
{
    struct seq s;
    (void)state;

    seq_init(&s, NULL);
    do_malloc(&s, 100, 1); /* image 0 (pid 10): 100, for ever */
    s.image = 1, s.pid = 11, s.thread = 1, s.tid = 11;
    do_malloc(&s, 500, 2); /* image 1: 500; total 600 at ts 2 */
    struct fmt_event ev = base(&s, FMT_EV_RSS);
    ev.size = 8000;
    assert_int_equal(ana_model_event(s.m, &ev), 0);
    ev = base(&s, FMT_EV_PROCESS_EXIT); /* ts 4: image 1 ends, leaking 500 */
    assert_int_equal(ana_model_event(s.m, &ev), 0);
    s.image = 2, s.pid = 12, s.thread = 2, s.tid = 12;
    do_malloc(&s, 400, 3); /* total 500: below 600 */
    do_malloc(&s, 300, 3); /* total 800 at ts 6: the new peak */
    ev = base(&s, FMT_EV_RSS);
    ev.size = 3000;
    assert_int_equal(ana_model_event(s.m, &ev), 0);
    ana_model_finish(s.m);

    const struct ana_scope *t = ana_model_total(s.m);
    assert_int_equal(t->peak, 800);
    assert_int_equal(t->peak_ns, 6);
    assert_int_equal(t->peak_blocks, 3);
    assert_int_equal(t->running_heap, 800);
    assert_int_equal(t->heap, 1300); /* every process's leaks */
    assert_int_equal(t->live_blocks, 4);
    assert_true(ana_model_image(s.m, 1)->ended);
    assert_int_equal(ana_model_image(s.m, 1)->end_ns, 4);
    assert_int_equal(ana_model_image(s.m, 1)->heap, 500);
    assert_int_equal(ana_model_image(s.m, 1)->peak, 500);
    assert_int_equal(ana_model_site(s.m, 1)->peak_all_bytes, 100);
    assert_int_equal(ana_model_site(s.m, 2)->peak_all_bytes, 0); /* ended before */
    assert_int_equal(ana_model_site(s.m, 3)->peak_all_bytes, 700);
    assert_int_equal(t->rss_peak, 8000); /* 8000 left at the exit: 3000 after */
    assert_int_equal(t->rss, 3000);
    ana_model_destroy(s.m);

    /* An exit after the peak keeps the site's share in it. */
    seq_init(&s, NULL);
    do_malloc(&s, 100, 1);
    s.image = 1, s.pid = 11, s.thread = 1, s.tid = 11;
    do_malloc(&s, 500, 2); /* peak 600 */
    ev = base(&s, FMT_EV_PROCESS_EXIT);
    assert_int_equal(ana_model_event(s.m, &ev), 0);
    s.image = 0, s.pid = 10, s.thread = 0, s.tid = 10;
    do_malloc(&s, 200, 1); /* 300: no new peak */
    ana_model_finish(s.m);
    assert_int_equal(ana_model_total(s.m)->peak, 600);
    assert_int_equal(ana_model_site(s.m, 2)->peak_all_bytes, 500);
    assert_int_equal(ana_model_site(s.m, 1)->peak_all_bytes, 100);
    ana_model_destroy(s.m);
}

static void test_failed_and_filter_parse(void **state)
{
    struct ana_filter f;
    struct seq s;
    (void)state;

    seq_init(&s, NULL);
    struct fmt_event ev = base(&s, FMT_EV_MALLOC);
    ev.flags = FMT_EVF_FAILED; /* no serial: no block */
    ev.size = 1ull << 60;
    assert_int_equal(ana_model_event(s.m, &ev), 0);
    assert_int_equal(ana_model_image(s.m, 0)->nr_failed, 1);
    assert_int_equal(ana_model_image(s.m, 0)->nr_allocs, 0);
    assert_int_equal(ana_model_image(s.m, 0)->nr_calls[FMT_EV_MALLOC], 1);
    ana_model_destroy(s.m);

    ana_filter_init(&f);
    assert_int_equal(ana_filter_add_pids(&f, "1,2,300"), 0);
    assert_int_equal(f.nr_pids, 3);
    assert_int_equal(ana_filter_add_pids(&f, ""), -EINVAL);
    assert_int_equal(ana_filter_add_pids(&f, "1,"), -EINVAL);
    assert_int_equal(ana_filter_add_pids(&f, "x"), -EINVAL);
    assert_int_equal(ana_filter_add_pids(&f, "-1"), -EINVAL);
    assert_int_equal(ana_filter_add_tids(&f, "99999999999"), -EINVAL);
    assert_true(ana_filter_image(&f, 0, 300));
    assert_false(ana_filter_image(&f, 0, 4));
    ana_filter_release(&f);
}

/* The fold's key: stacks 2, 3 and 4 read the same (one row per program). */
static int fold_key(void *arg, uint32_t stack, uint32_t *key)
{
    (void)arg;
    *key = stack >= 2 ? 7 : stack;
    return 0;
}

/* Image 0 (program 0) holds 100 for ever; images 1, 2 and 3 (program 1)
 * allocate 500, 300 and last at one call site, one after the other.
 * Retiring: each ended image's sites are gone from the model, and the
 * fold's rows are those a whole model gives: counters summed, each row's
 * share at its program's peak and at the tree's kept only when that peak
 * is the last (a later peak, reached when the image no longer ran, makes
 * its share 0). */
static void fold_run(uint64_t last, uint64_t prog_peak_share, uint64_t all_peak_share)
{
    uint32_t of_image[4] = {0, 1, 1, 1};
    struct ana_program v[2] = {{.nr_images = 1, .first_image = 0},
                               {.nr_images = 3, .first_image = 1}};
    struct ana_programs progs = {.of_image = of_image, .nr_images = 4, .v = v, .nr = 2};
    struct ana_fold f;
    struct seq s;

    ana_fold_init(&f, &progs, &(struct ana_fold_calls){.key = fold_key});
    struct ana_model_options mo = {.programs = &progs, .retire = ana_fold_retire(&f)};
    seq_init(&s, &mo);
    do_malloc(&s, 100, 1);
    const uint64_t sizes[3] = {500, 300, last};
    for (uint32_t i = 1; i <= 3; i++) {
        s.image = i, s.pid = 10 + i, s.thread = i, s.tid = 10 + i;
        do_malloc(&s, sizes[i - 1], 1 + i);
        if (i == 3)
            break; /* still running at the end */
        struct fmt_event ev = base(&s, FMT_EV_PROCESS_EXIT);
        assert_int_equal(ana_model_event(s.m, &ev), 0);
        assert_null(ana_model_site(s.m, 1 + i)); /* dropped at its exit */
        assert_non_null(ana_model_site(s.m, 1));
    }
    assert_int_equal(ana_model_finish(s.m), 0);
    assert_int_equal(ana_fold_finish(&f, s.m), 0);
    assert_null(ana_model_site(s.m, 1)); /* every image retired at finish */

    uint32_t n;
    const struct ana_fold_row *r = ana_fold_rows(&f, ANA_FOLD_BY_PROGRAM, &n);
    assert_int_equal(n, 2);
    assert_int_equal(r[0].stack, 1);
    assert_int_equal(r[0].s.peak_bytes, 100);
    assert_int_equal(r[1].stack, 2); /* the lowest of its stacks */
    assert_int_equal(r[1].live_stack, 2);
    assert_int_equal(r[1].s.image, 1);
    assert_int_equal(r[1].s.nr_allocs, 3);
    assert_int_equal(r[1].s.alloc_bytes, 800 + last);
    assert_int_equal(r[1].s.live_bytes, 800 + last);
    assert_int_equal(r[1].s.live_blocks, 3);
    assert_int_equal(r[1].s.peak_bytes, prog_peak_share);
    assert_int_equal(r[1].s.peak_all_bytes, all_peak_share);
    r = ana_fold_rows(&f, ANA_FOLD_BY_ALL, &n);
    assert_int_equal(n, 2);
    assert_int_equal(r[1].s.peak_bytes, all_peak_share);
    assert_int_equal(r[0].s.peak_bytes, 100);
    ana_model_destroy(s.m);
    ana_fold_release(&f);
}

static void test_retire_fold(void **state)
{
    (void)state;
    /* 800 is both peaks' last: image 1's 500 (an older peak) counts 0. */
    fold_run(800, 800, 800);
    /* 200 reaches neither: the peaks stay image 1's, whose 500 counts. */
    fold_run(200, 500, 500);
}

/* The retire callback of test_blocks_first: the ended image's blocks
 * among the first, by serial, into the caller's list. */
struct seen_blocks {
    uint64_t serials[16];
    unsigned n;
};

static int note_block(void *arg, const struct ana_block *b)
{
    struct seen_blocks *sb = arg;

    if (sb->n < 16)
        sb->serials[sb->n++] = b->serial;
    return 0;
}

static int blocks_retire(void *arg, const struct ana_model *m, uint32_t image)
{
    struct seen_blocks *sb = arg;

    sb->n = 0;
    return ana_model_each_block_of(m, image, note_block, sb);
}

/* blocks_first 2 (leaks --all --top 2 on a tree): image 0 allocates
 * serials 1 and 4 and runs to the end; image 1 leaves 2, 3 and 5 at its
 * exit, image 2 leaves 6 and 7, image 3 frees its 8 and leaves 9. Image
 * 1's three are kept (fewer than twice two); image 2's first makes four,
 * cut to 2 and 3, and its other and image 3's come after 3: none kept.
 * Image 0's running blocks all stay. Without blocks_first a retiring
 * model keeping blocks is refused. */
static void test_blocks_first(void **state)
{
    struct seen_blocks sb = {0};
    struct ana_model_options mo = {
        .keep_blocks = true, .blocks_first = 2, .retire = {.fn = blocks_retire, .arg = &sb}};
    const unsigned leave[4] = {0, 2, 2, 1};
    const unsigned want_n[4] = {0, 3, 0, 0};
    struct ana_model *bad;
    struct seq s;
    (void)state;

    seq_init(&s, &mo);
    do_malloc(&s, 8, 1);
    for (uint32_t i = 1; i <= 3; i++) {
        s.image = i, s.pid = 10 + i, s.thread = i, s.tid = 10 + i;
        uint64_t last = 0;
        for (unsigned k = 0; k < leave[i]; k++)
            last = do_malloc(&s, 16 * i, 1 + i);
        if (i == 1) {
            s.image = 0, s.pid = 10, s.thread = 0, s.tid = 10;
            do_malloc(&s, 8, 1); /* serial 4 */
            s.image = i, s.pid = 10 + i, s.thread = i, s.tid = 10 + i;
            do_malloc(&s, 16, 2); /* serial 5 */
        }
        if (i == 3)
            do_free(&s, last); /* serial 8 */
        if (i == 3)
            do_malloc(&s, 48, 4); /* serial 9 */
        struct fmt_event ev = base(&s, FMT_EV_PROCESS_EXIT);
        assert_int_equal(ana_model_event(s.m, &ev), 0);
        assert_int_equal(sb.n, want_n[i]);
        if (i == 1) {
            assert_int_equal(sb.serials[0] + sb.serials[1] + sb.serials[2], 2 + 3 + 5);
        }
    }
    assert_int_equal(ana_model_finish(s.m), 0);
    struct ana_block *b;
    long n = ana_model_blocks(s.m, &b);
    assert_int_equal(n, 4); /* 1, 2, 3, 4 */
    for (long k = 0; k < n; k++)
        assert_int_equal(b[k].serial, (uint64_t)k + 1);
    assert_int_equal(b[1].image, 1);
    assert_int_equal(b[3].image, 0);
    free(b);
    ana_model_destroy(s.m);

    mo.blocks_first = 0;
    assert_int_equal(ana_model_create(&bad, &mo), -EINVAL);
}

/* The events of test_peak_leaks_temporary's start, and how far they go:
 * 1 stops before the last free, 2 frees stack 3's block too. */
static struct ana_model *differs_model(int variant)
{
    struct seq s;

    seq_init(&s, NULL);
    uint64_t a = do_malloc(&s, 100, 1);
    uint64_t b = do_malloc(&s, 40, 2);
    do_free(&s, a);
    uint64_t c = do_malloc(&s, 8, 3);
    if (variant == 2)
        do_free(&s, c);
    if (variant != 1)
        do_free(&s, b);
    assert_int_equal(ana_model_finish(s.m), 0);
    return s.m;
}

static void test_differs(void **state)
{
    (void)state;
    struct ana_model *m = differs_model(0), *same = differs_model(0), *one = differs_model(1),
                     *two = differs_model(2);
    char why[200] = "";

    assert_int_equal(ana_model_differs(m, same, true, why, sizeof(why)), 0);
    assert_string_equal(why, "");
    /* one free fewer: the total's calls first (slot 9 is free) */
    assert_int_equal(ana_model_differs(m, one, true, why, sizeof(why)), 1);
    assert_non_null(strstr(why, "all processes: nr_calls["));
    assert_non_null(strstr(why, "] is 2 against 1"));
    /* one free more: the same field, the other way */
    assert_int_equal(ana_model_differs(two, m, true, why, sizeof(why)), 1);
    assert_non_null(strstr(why, "all processes: nr_calls["));
    assert_non_null(strstr(why, "] is 3 against 2"));
    ana_model_destroy(same);
    ana_model_destroy(one);
    ana_model_destroy(two);

    /* a site's live bytes alone (signed, said so) */
    struct seq s;
    seq_init(&s, NULL);
    uint64_t a = do_malloc(&s, 100, 1);
    uint64_t b = do_malloc(&s, 40, 2);
    do_free(&s, a);
    do_malloc(&s, 8, 3);
    do_free(&s, b);
    assert_int_equal(ana_model_finish(s.m), 0);
    assert_int_equal(ana_model_differs(m, s.m, true, why, sizeof(why)), 0);
    /* the same model but stack 3's block is on stack 4: the sites differ,
     * the scopes do not; without sites, no difference */
    ana_model_destroy(s.m);
    seq_init(&s, NULL);
    a = do_malloc(&s, 100, 1);
    b = do_malloc(&s, 40, 2);
    do_free(&s, a);
    do_malloc(&s, 8, 4);
    do_free(&s, b);
    assert_int_equal(ana_model_finish(s.m), 0);
    assert_int_equal(ana_model_differs(m, s.m, false, why, sizeof(why)), 0);
    assert_int_equal(ana_model_differs(m, s.m, true, why, sizeof(why)), 1);
    assert_string_equal(why, "stack 3: nr_allocs is 1 against 0");
    assert_int_equal(ana_model_differs(s.m, m, true, why, sizeof(why)), 1);
    assert_string_equal(why, "stack 3: nr_allocs is 0 against 1");
    ana_model_destroy(s.m);
    ana_model_destroy(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peak_leaks_temporary),
        cmocka_unit_test(test_peak_contribution_after_changes),
        cmocka_unit_test(test_temporary_threshold),
        cmocka_unit_test(test_temporary_strict),
        cmocka_unit_test(test_threads_filter_and_temporary),
        cmocka_unit_test(test_processes_rss_unmatched),
        cmocka_unit_test(test_exit_leaves_totals),
        cmocka_unit_test(test_failed_and_filter_parse),
        cmocka_unit_test(test_retire_fold),
        cmocka_unit_test(test_blocks_first),
        cmocka_unit_test(test_differs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
