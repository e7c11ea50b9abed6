/* SPDX-License-Identifier: MIT */
/* Aggregated traces (docs/aggregate.md) read by the heap replay: the same
 * run written exactly and aggregated must give the model, the histogram
 * and the window the same totals: allocations, bytes, frees, temporaries,
 * the peak, its time and blocks, each site's share at it, leaks. The
 * aggregated stream is made here from the exact one by the design's rules
 * (a small recorder of its own: transient blocks counted in batch rows at
 * the cuts, temporaries decided on every call, the transient bytes live
 * at each interval's moments of highest heap written as groups), for
 * random runs of two processes and four threads; and one small stream
 * written out by hand checks the numbers themselves. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/model/ana_heap_replay.h"
#include "analysis/model/ana_histogram.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_pmodel.h"
#include "analysis/model/ana_window.h"
#include "format/fmt_writer.h"
#include "test_ana_rnd.h"

#define PERIOD 4000  /* ns: events are 10 ns apart, never on a cut */
#define NR_THREADS 4 /* thread t runs in image t / 2 */
#define SLOTS 12     /* live blocks per thread; the last two live long */
#define NR_OPS 6000

struct blk {
    uint32_t thread, stack;
    uint64_t size;
    size_t alloc_ev, end_ev; /* indexes in the exact stream; end_ev SIZE_MAX: leaked */
    bool kept, temporary;
};

struct stream {
    struct fmt_event *ev;
    size_t nr, cap;
};

struct run {
    struct stream exact, agg;
    struct blk *blk; /* by serial */
    uint64_t nr_blk;
    uint32_t nr_images; /* 1: threads 0 and 1 only */
    /* The aggregated stream's switch (a cut, as record --max-size's): the
     * events before it are written exactly; 0: aggregated from the start. */
    uint64_t from;
};

static void push(struct stream *s, const struct fmt_event *ev)
{
    if (s->nr == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->ev = realloc(s->ev, s->cap * sizeof(*s->ev));
        assert_non_null(s->ev);
    }
    s->ev[s->nr++] = *ev;
}

static uint32_t image_of(uint32_t thread)
{
    return thread / 2;
}

static struct fmt_event event_of(uint16_t kind, uint64_t ts, uint32_t thread)
{
    return (struct fmt_event){.kind = kind,
                              .ts_ns = ts,
                              .thread = thread,
                              .image = image_of(thread),
                              .pid = 100 + image_of(thread),
                              .tid = 1000 + thread};
}

/* A block's start in ev (serial the next), as the reader fills it. */
static uint64_t start(struct run *r, struct fmt_event *ev, uint64_t size, uint32_t stack)
{
    uint64_t serial = ++r->nr_blk;

    r->blk = realloc(r->blk, (r->nr_blk + 1) * sizeof(*r->blk));
    assert_non_null(r->blk);
    r->blk[serial] = (struct blk){.thread = ev->thread,
                                  .stack = stack,
                                  .size = size,
                                  .alloc_ev = r->exact.nr,
                                  .end_ev = SIZE_MAX};
    ev->serial = serial;
    ev->size = ev->raw_size = size;
    ev->stack = stack;
    ev->addr = 0x10000 + 0x100 * serial;
    return serial;
}

static void end(struct run *r, struct fmt_event *ev, uint64_t serial)
{
    const struct blk *b = &r->blk[serial];

    ev->ref = serial;
    ev->ref_size = ev->raw_ref_size = b->size;
    ev->ref_stack = b->stack;
    ev->ref_thread = b->thread;
    ev->ref_ts_ns = r->exact.ev[b->alloc_ev].ts_ns;
    ev->nr_refs = 1;
    r->blk[serial].end_ev = r->exact.nr;
}

static uint64_t random_size(void)
{
    unsigned k = (unsigned)(rnd() % 20);

    return k == 0 ? 0 : k < 15 ? 1 + rnd() % 200 : 1 + rnd() % 5000;
}

/* The exact stream of a random run: mallocs, callocs, reallocs and frees
 * of four threads in two processes, then both processes' exits. */
static void make_exact(struct run *r, uint64_t seed, uint32_t nr_images)
{
    uint64_t live[NR_THREADS][SLOTS] = {{0}};
    uint64_t ts = 5;

    rnd_state = seed;
    r->nr_images = nr_images;
    for (int op = 0; op < NR_OPS; op++, ts += 10) {
        uint32_t t = (uint32_t)(rnd() % (2 * nr_images));
        unsigned slot = (unsigned)(rnd() % SLOTS);
        unsigned what = (unsigned)(rnd() % 100);
        uint32_t stack = 1 + image_of(t) * 3 + (uint32_t)(rnd() % 3);
        struct fmt_event ev;

        if (!live[t][slot]) {
            ev = event_of(what < 70 ? FMT_EV_MALLOC : FMT_EV_CALLOC, ts, t);
            live[t][slot] = start(r, &ev, random_size(), stack);
        } else if (slot >= SLOTS - 2 && what < 95) {
            continue; /* the long-lived slots: rarely freed */
        } else if (what < 15) {
            ev = event_of(FMT_EV_REALLOC, ts, t);
            ev.old_addr = 0x10000 + 0x100 * live[t][slot];
            end(r, &ev, live[t][slot]);
            live[t][slot] = start(r, &ev, random_size(), stack);
        } else {
            /* Now and then a block another thread of the process made. */
            uint32_t owner = what < 25 ? (t ^ 1) : t;
            unsigned s2 = what < 25 ? (unsigned)(rnd() % SLOTS) : slot;
            if (!live[owner][s2])
                continue;
            ev = event_of(FMT_EV_FREE, ts, t);
            ev.addr = 0x10000 + 0x100 * live[owner][s2];
            end(r, &ev, live[owner][s2]);
            live[owner][s2] = 0;
        }
        push(&r->exact, &ev);
    }
    for (uint32_t im = 0; im < nr_images; im++) {
        struct fmt_event ev = event_of(FMT_EV_PROCESS_EXIT, ts += 10, im * 2);
        push(&r->exact, &ev);
    }
}

static uint64_t interval(uint64_t ts)
{
    return ts / PERIOD + 1; /* ts in ((k-1)P, kP) */
}

/* What the recorder decides on every call: the strict temporary rule per
 * thread (docs/architecture.md, "Meanings") and which blocks are kept. */
static void classify(struct run *r)
{
    uint64_t last[NR_THREADS] = {0};

    for (size_t i = 0; i < r->exact.nr; i++) {
        const struct fmt_event *ev = &r->exact.ev[i];
        if (ev->ref) {
            r->blk[ev->ref].temporary = last[ev->thread] == ev->ref;
            last[ev->thread] = 0;
        }
        if (ev->serial)
            last[ev->thread] = ev->serial;
    }
    for (uint64_t s = 1; s <= r->nr_blk; s++) {
        struct blk *b = &r->blk[s];
        const struct fmt_event *a = &r->exact.ev[b->alloc_ev];
        /* A block a kept block's realloc makes is kept too; a block made
         * before the switch is written as the exact trace writes it. */
        bool from_kept = a->ref && r->blk[a->ref].kept;
        b->kept = from_kept || a->ts_ns < r->from || b->end_ev == SIZE_MAX ||
                  interval(r->exact.ev[b->end_ev].ts_ns) != interval(a->ts_ns);
    }
}

/* The batch rows of interval k at time ts: per thread, stack and size
 * class, its transient blocks and the temporaries among the blocks freed
 * in it. */
static void batch_rows(struct run *r, uint64_t k, uint64_t ts)
{
    /* Each block counted into its (thread, stack, class) row, the rows
     * then written in that order. */
    static uint64_t row[NR_THREADS][7][ANA_NR_SIZE_CLASSES][4];

    memset(row, 0, sizeof(row));
    for (uint64_t s = 1; s <= r->nr_blk; s++) {
        const struct blk *b = &r->blk[s];
        uint64_t *c = row[b->thread][b->stack][ana_size_class(b->size)];
        if (!b->kept && interval(r->exact.ev[b->alloc_ev].ts_ns) == k) {
            c[0]++;
            c[1] += b->size;
        }
        if (b->temporary && interval(r->exact.ev[b->end_ev].ts_ns) == k) {
            c[2]++;
            c[3] += b->size;
        }
    }
    for (uint32_t t = 0; t < NR_THREADS; t++)
        for (uint32_t stack = 1; stack <= 6; stack++)
            for (unsigned cls = 0; cls < ANA_NR_SIZE_CLASSES; cls++) {
                const uint64_t *c = row[t][stack][cls];
                if (!c[0] && !c[2])
                    continue;
                struct fmt_event ev = event_of(FMT_EV_HEAP_BATCH, ts, t);
                ev.arg[0] = c[0];
                ev.size = c[1];
                ev.arg[1] = c[2];
                ev.arg[2] = c[3];
                ev.stack = stack;
                ev.arg[3] = cls;
                push(&r->agg, &ev);
            }
}

/* The heap after each exact event of image im (2: both): the sum of the
 * blocks allocated at or before it and not ended by it, as running sums. */
static uint64_t *heap_after(const struct run *r, uint32_t im)
{
    uint64_t *heap = calloc(r->exact.nr + 1, sizeof(*heap));

    assert_non_null(heap);
    for (uint64_t s = 1; s <= r->nr_blk; s++) {
        const struct blk *b = &r->blk[s];
        if (im != 2 && image_of(b->thread) != im)
            continue;
        heap[b->alloc_ev] += b->size;
        if (b->end_ev != SIZE_MAX)
            heap[b->end_ev] -= b->size;
    }
    for (size_t i = 1; i < r->exact.nr; i++)
        heap[i] += heap[i - 1];
    return heap;
}

/* The groups of a moment after exact event i: image im's sites (2:
 * every image's), added, then taken away. */
static void groups(struct run *r, size_t i, uint32_t im)
{
    for (int endf = 0; endf < 2; endf++)
        for (uint32_t stack = 1; stack <= 6; stack++) {
            uint32_t simg = (stack - 1) / 3;
            struct fmt_event g = event_of(FMT_EV_HEAP_TRANSIENT, r->exact.ev[i].ts_ns, simg * 2);
            if (im != 2 && simg != im)
                continue;
            for (uint64_t s = 1; s <= r->nr_blk; s++) {
                const struct blk *b = &r->blk[s];
                if (!b->kept && b->stack == stack && b->alloc_ev <= i && b->end_ev > i) {
                    g.size += b->size;
                    g.arg[0]++;
                }
            }
            if (!g.arg[0])
                continue;
            g.stack = stack;
            g.arg[1] = im != 2;
            g.flags = endf ? FMT_EVF_TRANSIENT_END : 0;
            push(&r->agg, &g);
        }
}

/* The moments of highest heap of each interval: per exact event, a bit
 * for all images (4) and for each image (1, 2), the first of each. */
static unsigned *moments(const struct run *r)
{
    unsigned *at = calloc(r->exact.nr, sizeof(*at));
    size_t best[3] = {0};
    uint64_t top[3] = {0}, k = 0;

    uint64_t *heap[3] = {heap_after(r, 0), heap_after(r, 1), heap_after(r, 2)};

    assert_non_null(at);
    for (size_t i = 0; i <= r->exact.nr; i++) {
        if (i < r->exact.nr && r->exact.ev[i].ts_ns < r->from)
            continue; /* exact before the switch: no moments */
        if (i == r->exact.nr || interval(r->exact.ev[i].ts_ns) != k) {
            if (k)
                for (unsigned w = 0; w < 3; w++)
                    at[best[w]] |= w == 2 ? 4u : 1u << w;
            if (i == r->exact.nr)
                break;
            k = interval(r->exact.ev[i].ts_ns);
            memset(top, 0, sizeof(top));
            for (unsigned w = 0; w < 3; w++)
                best[w] = i;
        }
        for (uint32_t w = 0; w < 3; w++) {
            uint64_t h = heap[w][i];
            if (h > top[w]) {
                top[w] = h;
                best[w] = i;
            }
        }
    }
    for (unsigned w = 0; w < 3; w++)
        free(heap[w]);
    return at;
}

/* The aggregated stream of the run (docs/aggregate.md), from the switch
 * r->from on. */
static void make_aggregated(struct run *r)
{
    struct fmt_event agg = event_of(FMT_EV_AGGREGATE, r->from, 0);
    unsigned *at = moments(r);
    uint64_t cut = r->from + PERIOD;
    bool switched = false;

    agg.arg[0] = PERIOD;
    agg.arg[1] = r->from != 0; /* 1: the exact trace reached --max-size */
    for (size_t i = 0; i < r->exact.nr; i++) {
        struct fmt_event ev = r->exact.ev[i];
        if (!switched && ev.ts_ns >= r->from) {
            push(&r->agg, &agg);
            switched = true;
        }
        if (!switched) {
            push(&r->agg, &ev);
            continue;
        }
        for (; ev.ts_ns > cut; cut += PERIOD)
            batch_rows(r, cut / PERIOD, cut);
        bool starts_kept = ev.serial && r->blk[ev.serial].kept;
        bool ends_kept = ev.ref && r->blk[ev.ref].kept;
        if (ev.serial || ev.ref) {
            if (!starts_kept && !ends_kept)
                goto moment; /* both in batch rows */
            if (!ends_kept && ev.ref) {
                /* A transient block's realloc that makes a kept one: a
                 * start from nothing (the old one is in a batch row). */
                ev.ref = ev.ref_size = ev.raw_ref_size = ev.ref_ts_ns = 0;
                ev.ref_stack = ev.ref_thread = ev.nr_refs = 0;
                ev.old_addr = 0;
            }
        }
        push(&r->agg, &ev);
    moment:
        if (at[i] & 4)
            groups(r, i, 2);
        for (uint32_t im = 0; im < 2; im++)
            if ((at[i] & (1u << im)) && !(at[i] & 4))
                groups(r, i, im);
    }
    /* The last cut: the end of the trace. */
    batch_rows(r, interval(r->exact.ev[r->exact.nr - 1].ts_ns), r->exact.ev[r->exact.nr - 1].ts_ns);
    free(at);
}

static void run_release(struct run *r)
{
    free(r->exact.ev);
    free(r->agg.ev);
    free(r->blk);
    memset(r, 0, sizeof(*r));
}

/* What one stream gives. */
struct outputs {
    struct ana_model *m;
    struct ana_histogram h;
    struct ana_window w;
};

static void replay(const struct stream *s, struct outputs *o, uint64_t t0, uint64_t t1)
{
    struct ana_heap_replay p;

    assert_int_equal(ana_model_create(&o->m, NULL), 0);
    ana_histogram_init(&o->h, true);
    ana_heap_replay_init(&p, NULL);
    assert_int_equal(ana_model_subscribe(o->m, &p), 0);
    assert_int_equal(ana_histogram_subscribe(&o->h, &p), 0);
    assert_int_equal(ana_window_subscribe(&o->w, &p, NULL, t0, t1, ANA_WINDOW_BY_STACK), 0);
    for (size_t i = 0; i < s->nr; i++)
        assert_int_equal(ana_heap_replay_event(&p, &s->ev[i]), 0);
    assert_int_equal(ana_heap_replay_finish(&p), 0);
    ana_heap_replay_release(&p);
}

static void outputs_release(struct outputs *o)
{
    ana_model_destroy(o->m);
    ana_histogram_release(&o->h);
    ana_window_release(&o->w);
}

static void same_scope(const struct ana_scope *a, const struct ana_scope *b, const char *what)
{
#define SAME(f)                                                                                    \
    do {                                                                                           \
        if (a->f != b->f)                                                                          \
            fail_msg("%s: " #f ": exact %llu, aggregated %llu", what, (unsigned long long)a->f,    \
                     (unsigned long long)b->f);                                                    \
    } while (0)
    SAME(nr_allocs);
    SAME(alloc_bytes);
    SAME(nr_frees);
    SAME(freed_bytes);
    SAME(nr_temporary);
    SAME(temporary_bytes);
    SAME(nr_unmatched_frees);
    SAME(heap);
    SAME(live_blocks);
    SAME(peak);
    SAME(peak_ns);
    SAME(peak_blocks);
    SAME(ended);
#undef SAME
}

static void same_models(const struct ana_model *a, const struct ana_model *b)
{
    char what[64];

    same_scope(ana_model_total(a), ana_model_total(b), "all images");
    assert_int_equal(ana_model_nr_images(a), ana_model_nr_images(b));
    for (uint32_t i = 0; i < ana_model_nr_images(a); i++) {
        snprintf(what, sizeof(what), "image %u", i);
        same_scope(ana_model_image(a, i), ana_model_image(b, i), what);
    }
    for (uint32_t s = 1; s <= 6; s++) {
        const struct ana_site *x = ana_model_site(a, s), *y = ana_model_site(b, s);
        assert_true(!x == !y);
        if (!x)
            continue;
#define SAME_SITE(type, name)                                                                      \
    if (x->name != y->name)                                                                        \
        fail_msg("site %u: " #name ": exact %lld, aggregated %lld", s, (long long)x->name,         \
                 (long long)y->name);
        ANA_SITE_COUNTERS(SAME_SITE)
        SAME_SITE(uint64_t, peak_bytes)
        SAME_SITE(uint64_t, peak_all_bytes)
#undef SAME_SITE
    }
}

static void same_histograms(const struct ana_histogram *a, const struct ana_histogram *b)
{
    for (uint32_t im = 0; im < 2; im++) {
        const struct ana_hist_bin *x = ana_histogram_image(a, im), *y = ana_histogram_image(b, im);
        assert_true(!x == !y);
        if (!x)
            continue;
        for (unsigned c = 0; c < ANA_NR_SIZE_CLASSES; c++)
            if (x[c].nr != y[c].nr || x[c].bytes != y[c].bytes)
                fail_msg("image %u class %u: exact %llu/%llu, aggregated %llu/%llu", im, c,
                         (unsigned long long)x[c].nr, (unsigned long long)x[c].bytes,
                         (unsigned long long)y[c].nr, (unsigned long long)y[c].bytes);
    }
    for (uint32_t s = 1; s <= 6; s++)
        for (unsigned c = 0; c < ANA_NR_SIZE_CLASSES; c++) {
            const struct ana_hist_bin *x = ana_histogram_stack(a, s, c);
            const struct ana_hist_bin *y = ana_histogram_stack(b, s, c);
            assert_true(!x == !y);
            if (x && (x->nr != y->nr || x->bytes != y->bytes))
                fail_msg("stack %u class %u differs", s, c);
        }
}

static void same_windows(const struct ana_window *a, const struct ana_window *b)
{
    for (uint32_t im = 0; im < 2; im++)
        for (unsigned c = 0; c < ANA_NR_WPA; c++)
            if (a->images[im].nr[c] != b->images[im].nr[c] ||
                a->images[im].bytes[c] != b->images[im].bytes[c])
                fail_msg("window, image %u, class %u: exact %llu/%llu, aggregated %llu/%llu", im, c,
                         (unsigned long long)a->images[im].nr[c],
                         (unsigned long long)a->images[im].bytes[c],
                         (unsigned long long)b->images[im].nr[c],
                         (unsigned long long)b->images[im].bytes[c]);
}

static void test_random_runs_agree(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        struct run r = {0};
        struct outputs ex, ag;

        make_exact(&r, seed, 2);
        classify(&r);
        make_aggregated(&r);
        /* A window on cuts (a window of an aggregated trace is rounded
         * out to them). */
        replay(&r.exact, &ex, 2 * PERIOD, 9 * PERIOD);
        replay(&r.agg, &ag, 2 * PERIOD, 9 * PERIOD);
        /* The run is what the test means: blocks of both kinds, transient
         * bytes at the peak, temporaries kept and transient, leaks. */
        uint64_t nr_kept = 0, nr_temp_kept = 0;
        for (uint64_t s = 1; s <= r.nr_blk; s++) {
            nr_kept += r.blk[s].kept;
            nr_temp_kept += r.blk[s].kept && r.blk[s].temporary;
        }
        assert_true(nr_kept > 100 && nr_kept < r.nr_blk / 2);
        assert_true(nr_temp_kept > 0);
        assert_true(r.agg.nr < r.exact.nr);
        assert_true(ana_model_total(ex.m)->nr_temporary > 100);
        assert_true(ana_model_total(ex.m)->heap > 0);
        /* The peak is made of transient blocks too: without the groups
         * it would be lower. */
        struct stream no_groups = {0};
        struct outputs ng;
        for (size_t i = 0; i < r.agg.nr; i++)
            if (r.agg.ev[i].kind != FMT_EV_HEAP_TRANSIENT)
                push(&no_groups, &r.agg.ev[i]);
        replay(&no_groups, &ng, 0, 0);
        assert_true(ana_model_total(ng.m)->peak < ana_model_total(ex.m)->peak);
        outputs_release(&ng);
        free(no_groups.ev);
        same_models(ex.m, ag.m);
        same_histograms(&ex.h, &ag.h);
        same_windows(&ex.w, &ag.w);
        outputs_release(&ex);
        outputs_release(&ag);
        run_release(&r);
    }
}

/* The stream written to a trace file (a memfd), as the recorder would:
 * aggregated from its start, or from the switch at from. Returns its fd. */
static int write_file(const struct stream *st, bool aggregated, uint64_t from)
{
    /* Aggregated from the start: the period in the trace's facts too. */
    struct fmt_trace_info info = {.command = "p",
                                  .command_len = 1,
                                  .hostname = "h",
                                  .aggregate_ns = aggregated && !from ? PERIOD : 0};
    struct fmt_writer_options opt = {.chunk_events = 64, .aggregate = aggregated};
    struct fmt_writer *w;
    int fd = memfd_create("agg", MFD_CLOEXEC);
    uint32_t id;

    assert_true(fd >= 0);
    assert_int_equal(fmt_writer_create(&w, fd, &info, &opt), 0);
    for (uint32_t s = 0; s < 6; s++) {
        uint64_t frame = 0x5000 + 0x10 * s; /* one frame: its id is its node's */
        assert_int_equal(fmt_writer_stack(w, s / 3, &frame, 1, &id), 0);
        assert_int_equal(id, s + 1);
    }
    for (size_t i = 0; i < st->nr; i++)
        assert_int_equal(fmt_writer_event(w, &st->ev[i]), 0);
    assert_int_equal(fmt_writer_finish(w), 0);
    fmt_writer_destroy(w);
    return fd;
}

static struct fmt_reader *open_fd(int fd, char *path, size_t size)
{
    struct fmt_reader *r;
    char err[600];

    snprintf(path, size, "/proc/self/fd/%d", fd);
    if (fmt_reader_open(&r, path, err, sizeof(err)))
        fail_msg("%s", err);
    return r;
}

/* Written to files and read back, the two traces of a run give equal
 * models in one pass (the reader's serials and references, the trace's
 * facts); the aggregated one in 1 to 6 parallel ranges (a run of one
 * process, which ranges replay) gives what one pass gives. */
static void test_files_and_ranges_agree(void **state)
{
    (void)state;
    for (uint64_t seed = 11; seed <= 18; seed++) {
        struct run r = {0};
        struct ana_model *ex, *ag;
        char pe[64], pa[64];

        make_exact(&r, seed, seed % 2 ? 1 : 2);
        /* Half of them switch, as record --max-size does, at a cut. */
        r.from = seed > 14 ? 5 * PERIOD : 0;
        classify(&r);
        make_aggregated(&r);
        int fe = write_file(&r.exact, false, 0), fa = write_file(&r.agg, true, r.from);
        struct fmt_reader *re = open_fd(fe, pe, sizeof(pe)), *ra = open_fd(fa, pa, sizeof(pa));
        assert_int_equal(fmt_reader_info(ra)->aggregate_ns, PERIOD);
        assert_int_equal(fmt_reader_info(ra)->aggregate_from_ns, r.from);
        assert_int_equal(ana_model_build(&ex, re, NULL, NULL), 0);
        assert_int_equal(ana_model_build(&ag, ra, NULL, NULL), 0);
        same_models(ex, ag);
        for (unsigned n = 1; r.nr_images == 1 && n <= 6; n++) {
            struct ana_pmodel_options po = {
                .nr_threads = n, .until_ns = UINT64_MAX, .min_range_events = 1};
            struct ana_model *par;
            char err[600];
            assert_int_equal(ana_pmodel_build(&par, pa, NULL, &po, err, sizeof(err)), 0);
            same_models(ag, par);
            ana_model_destroy(par);
        }
        ana_model_destroy(ex);
        ana_model_destroy(ag);
        fmt_reader_close(re);
        fmt_reader_close(ra);
        close(fe);
        close(fa);
        run_release(&r);
    }
}

/* One thread of one process, P = 1000: the stream as it would be
 * written, and each number it must give. */
static void test_by_hand(void **state)
{
    struct fmt_event e[16];
    struct outputs o;
    struct stream s = {.ev = e};
    unsigned n = 0;

    (void)state;
    /* Aggregated from the start. */
    e[n++] = (struct fmt_event){.kind = FMT_EV_AGGREGATE, .pid = 7, .arg = {1000}};
    /* A kept block of 100 bytes at 100 (site 1), live to the end. */
    e[n++] = (struct fmt_event){.kind = FMT_EV_MALLOC,
                                .ts_ns = 100,
                                .pid = 7,
                                .tid = 7,
                                .stack = 1,
                                .size = 100,
                                .raw_size = 100,
                                .serial = 1,
                                .addr = 0x1000};
    /* At 300 the heap was highest in (0, 1000]: 100 kept + 60 transient
     * bytes in 2 blocks of site 2. */
    e[n++] = (struct fmt_event){
        .kind = FMT_EV_HEAP_TRANSIENT, .ts_ns = 300, .pid = 7, .stack = 2, .size = 60, .arg = {2}};
    e[n++] = (struct fmt_event){.kind = FMT_EV_HEAP_TRANSIENT,
                                .ts_ns = 300,
                                .pid = 7,
                                .stack = 2,
                                .size = 60,
                                .arg = {2},
                                .flags = FMT_EVF_TRANSIENT_END};
    /* The cut at 1000: 5 transient blocks of site 2 (110 bytes, class
     * 5 = [16, 32)), 3 of them temporary (66 bytes). */
    e[n++] = (struct fmt_event){.kind = FMT_EV_HEAP_BATCH,
                                .ts_ns = 1000,
                                .pid = 7,
                                .tid = 7,
                                .stack = 2,
                                .size = 110,
                                .arg = {5, 3, 66, 5}};
    /* A kept block of 40 bytes made at 1500 and freed at 2500 by its
     * thread with nothing between that this trace shows: the batch row
     * of 3000 says it was not temporary (arg[1] 0); the reader must not
     * make it one. */
    e[n++] = (struct fmt_event){.kind = FMT_EV_MALLOC,
                                .ts_ns = 1500,
                                .pid = 7,
                                .tid = 7,
                                .stack = 3,
                                .size = 40,
                                .raw_size = 40,
                                .serial = 2,
                                .addr = 0x2000};
    e[n++] = (struct fmt_event){.kind = FMT_EV_FREE,
                                .ts_ns = 2500,
                                .pid = 7,
                                .tid = 7,
                                .addr = 0x2000,
                                .ref = 2,
                                .ref_size = 40,
                                .raw_ref_size = 40,
                                .ref_stack = 3,
                                .ref_ts_ns = 1500,
                                .nr_refs = 1};
    e[n++] = (struct fmt_event){.kind = FMT_EV_PROCESS_EXIT, .ts_ns = 2600, .pid = 7, .tid = 7};
    s.nr = n;
    replay(&s, &o, 0, 3000);

    const struct ana_scope *t = ana_model_total(o.m);
    assert_int_equal(t->nr_allocs, 7);
    assert_int_equal(t->alloc_bytes, 250);
    assert_int_equal(t->nr_frees, 6);
    assert_int_equal(t->freed_bytes, 150);
    assert_int_equal(t->nr_temporary, 3);
    assert_int_equal(t->temporary_bytes, 66);
    assert_int_equal(t->nr_calls[FMT_EV_MALLOC], 2);
    assert_int_equal(t->nr_calls[ANA_CALL_BATCH_ALLOC], 5);
    assert_int_equal(t->nr_calls[ANA_CALL_BATCH_FREE], 5);
    assert_int_equal(t->peak, 160);
    assert_int_equal(t->peak_ns, 300);
    assert_int_equal(t->peak_blocks, 3);
    assert_int_equal(t->heap, 100); /* leaked: the kept block of site 1 */
    assert_int_equal(t->live_blocks, 1);
    assert_int_equal(ana_model_site(o.m, 1)->peak_all_bytes, 100);
    assert_int_equal(ana_model_site(o.m, 2)->peak_all_bytes, 60);
    assert_int_equal(ana_model_site(o.m, 2)->live_bytes, 0);
    assert_int_equal(ana_model_site(o.m, 2)->nr_allocs, 5);
    assert_int_equal(ana_model_site(o.m, 2)->nr_temporary, 3);
    assert_int_equal(ana_model_site(o.m, 3)->nr_temporary, 0);
    /* The histogram: the kept blocks by their sizes, the row's 5 in its
     * class. */
    const struct ana_hist_bin *h = ana_histogram_image(&o.h, 0);
    assert_int_equal(h[7].nr, 1); /* 100 bytes: [64, 128) */
    assert_int_equal(h[6].nr, 1); /* 40: [32, 64) */
    assert_int_equal(h[5].nr, 5);
    assert_int_equal(h[5].bytes, 110);
    /* The window [0, 3000]: the row's blocks are AIFI, the block of 1500
     * too, the one of 100 AIFO. */
    assert_int_equal(o.w.images[0].nr[ANA_AIFI], 6);
    assert_int_equal(o.w.images[0].bytes[ANA_AIFI], 150);
    assert_int_equal(o.w.images[0].nr[ANA_AIFO], 1);
    outputs_release(&o);
}

/* Without FMT_EV_AGGREGATE the same kept pair is temporary (the strict
 * rule of an exact trace); after it, not; ana_stepper_aggregated does
 * what the event does. */
static void test_stepper_temporary(void **state)
{
    struct fmt_event a = {.kind = FMT_EV_MALLOC, .ts_ns = 1, .serial = 1, .size = 8, .raw_size = 8};
    struct fmt_event f = {
        .kind = FMT_EV_FREE, .ts_ns = 2, .addr = 1, .ref = 1, .ref_size = 8, .nr_refs = 1};
    struct fmt_event agg = {.kind = FMT_EV_AGGREGATE, .arg = {PERIOD}};
    struct ana_stepper s;
    struct ana_step st;

    (void)state;
    for (int mode = 0; mode < 3; mode++) {
        ana_stepper_init(&s, NULL);
        if (mode == 1)
            assert_int_equal(ana_stepper_event(&s, &agg, &st), 0);
        if (mode == 2)
            ana_stepper_aggregated(&s);
        assert_int_equal(ana_stepper_event(&s, &a, &st), 1);
        assert_int_equal(ana_stepper_event(&s, &f, &st), 1);
        assert_true(st.ends);
        assert_int_equal(st.temporary, mode ? ANA_TEMP_NO : ANA_TEMP_YES);
        ana_stepper_release(&s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_hand),
        cmocka_unit_test(test_stepper_temporary),
        cmocka_unit_test(test_random_runs_agree),
        cmocka_unit_test(test_files_and_ranges_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
