/* SPDX-License-Identifier: MIT */
/* The planner (ana_plan.h): for each kind of trace (exact, with and without
 * chunk totals, aggregated, sampled, growing, of several processes) and
 * each kind of query (the whole trace or a moment, every counter or the
 * live state, with or without the index preferred, on one thread or
 * several, blocks kept), the route it picks, the notes it gives for the
 * routes it passed over (the one the query asked for said apart), and the
 * model it returns equal to one pass over the events, number for number
 * (a moment's live state for the index). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/core/ana_filter.h"
#include "analysis/core/ana_programs.h"
#include "analysis/model/ana_fold.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_timeline.h"
#include "analysis/plan/ana_plan.h"
#include "format/fmt_writer.h"
#include "memscribe/trace.h"
#include "test_ana_rnd.h"

enum kind {
    EXACT,        /* one process, no chunk totals */
    TOTALS,       /* one process, record --totals */
    MULTI_TOTALS, /* two processes, record --totals */
    AGGREGATED,   /* record --aggregate from the start */
    SAMPLED,      /* record --sample */
    GROWING,      /* record --totals, still being written: no index, no trailer */
    STAGGERED,    /* three processes one after another, overlapping, record --totals */
    /* the same, their processes started with executables: /bin/p twice (and
     * /bin/q), so their chunks' totals have the programs' parts (1.12) */
    MULTI_NAMED,
    STAGGERED_NAMED,
};

/* The kind a named one is made as. */
static enum kind made_as(enum kind k)
{
    return k == MULTI_NAMED ? MULTI_TOTALS : k == STAGGERED_NAMED ? STAGGERED : k;
}

/* The executable of a named kind's image im (NULL: none). */
static const char *exe_of(enum kind k, uint32_t im)
{
    return k != MULTI_NAMED && k != STAGGERED_NAMED ? NULL : im < 2 ? "/bin/p" : "/bin/q";
}

#define NR_SLOTS 16
#define NR_OPS 3000
#define STEP_NS 1000 /* the events' spacing, a multiple of the time unit */

/* A staggered trace's image i runs from op i * NR_OPS / 4 to op (i + 2) *
 * NR_OPS / 4 and exits then, leaving its live blocks. */
static bool runs(uint32_t im, int op)
{
    return op >= (int)im * NR_OPS / 4 && op < ((int)im + 2) * NR_OPS / 4;
}

/* The next event of image im (on its one thread), STEP_NS after the last. */
static struct fmt_event next_event(uint32_t im, uint64_t *ts)
{
    return (struct fmt_event){
        .ts_ns = *ts += STEP_NS, .image = im, .thread = im, .pid = 70 + im, .tid = 70 + im};
}

static void write_exit(struct fmt_writer *w, uint32_t im, uint64_t *ts)
{
    struct fmt_event ev = next_event(im, ts);

    ev.kind = FMT_EV_PROCESS_EXIT;
    assert_int_equal(fmt_writer_event(w, &ev), 0);
}

/* A trace of kind k in a memfd, its path in path. Allocations and frees
 * of 16 slots per process from 3 stacks each, RSS now and then, each
 * process's exit at the end (a growing trace has none: it was flushed and
 * left; a staggered one's processes exit as they end, the running
 * processes' heap falling by what each leaves). */
static int write_trace(enum kind named, char *path, size_t size)
{
    enum kind k = made_as(named);
    struct fmt_trace_info info = {.command = "p", .command_len = 1, .hostname = "h"};
    struct fmt_writer_options opt = {.chunk_events = 128};
    uint32_t nr_images = k == MULTI_TOTALS ? 2 : k == STAGGERED ? 3 : 1, stacks[3][3];
    uint64_t addr[3][NR_SLOTS] = {{0}}, ts = STEP_NS, next = 0x100000;
    struct fmt_writer *w;
    int fd = memfd_create("plan", MFD_CLOEXEC);

    assert_true(fd >= 0);
    rnd_state = 60 + named;
    if (k == SAMPLED)
        info.sample_bytes = 4096;
    if (k == AGGREGATED) {
        info.aggregate_ns = 1000000;
        opt.aggregate = 1;
    }
    if (k == TOTALS || k == MULTI_TOTALS || k == GROWING || k == STAGGERED) {
        opt.time_unit_ns = STEP_NS;
        opt.time_pack = opt.free_ranks = opt.realloc_pred = opt.totals = 1;
    }
    assert_int_equal(fmt_writer_create(&w, fd, &info, &opt), 0);
    for (uint32_t im = 0; im < nr_images; im++)
        for (uint32_t s = 0; s < 3; s++) {
            uint64_t frames[2] = {0x4000 + 0x20 * s, 0x2000};
            assert_int_equal(fmt_writer_stack(w, im, frames, 2, &stacks[im][s]), 0);
        }
    for (uint32_t im = 0; exe_of(named, 0) && im < nr_images; im++) {
        struct fmt_event ev = next_event(im, &ts);
        ev.kind = FMT_EV_PROCESS_START;
        ev.str = exe_of(named, im);
        ev.str_len = (uint32_t)strlen(ev.str);
        assert_int_equal(fmt_writer_event(w, &ev), 0);
    }
    for (int op = 0; op < NR_OPS; op++) {
        uint32_t im = (uint32_t)(rnd() % nr_images), slot = (uint32_t)(rnd() % NR_SLOTS);
        if (k == STAGGERED) {
            for (uint32_t e = 0; e < nr_images; e++)
                if (op && runs(e, op - 1) && !runs(e, op))
                    write_exit(w, e, &ts);
            while (!runs(im, op))
                im = (im + 1) % nr_images;
        }
        struct fmt_event ev = next_event(im, &ts);

        if (rnd() % 50 == 0) {
            ev.kind = FMT_EV_RSS;
            ev.size = 4096 * (1 + rnd() % 500);
        } else if (addr[im][slot]) {
            ev.kind = FMT_EV_FREE;
            ev.addr = addr[im][slot];
            addr[im][slot] = 0;
        } else {
            ev.kind = FMT_EV_MALLOC;
            ev.addr = addr[im][slot] = next += 0x100;
            ev.size = 1 + rnd() % 5000;
            ev.stack = stacks[im][rnd() % 3];
        }
        assert_int_equal(fmt_writer_event(w, &ev), 0);
    }
    for (uint32_t im = 0; k != GROWING && im < nr_images; im++) {
        if (k != STAGGERED || runs(im, NR_OPS - 1)) /* else exited */
            write_exit(w, im, &ts);
    }
    assert_int_equal(k == GROWING ? fmt_writer_flush(w) : fmt_writer_finish(w), 0);
    fmt_writer_destroy(w);
    snprintf(path, size, "/proc/self/fd/%d", fd);
    return fd;
}

struct trace {
    int fd;
    char path[64];
    struct fmt_reader *r;
};

static void trace_open(struct trace *t, enum kind k)
{
    char err[600];

    t->fd = write_trace(k, t->path, sizeof(t->path));
    if (fmt_reader_open(&t->r, t->path, err, sizeof(err)))
        fail_msg("%s", err);
}

static void trace_close(struct trace *t)
{
    fmt_reader_close(t->r);
    close(t->fd);
}

/* The whole trace or a moment, every counter, on 4 threads in ranges of
 * at least 64 events. */
static struct ana_query query(uint64_t until_ns)
{
    return (struct ana_query){.until_ns = until_ns, .nr_threads = 4, .min_range_events = 64};
}

/* One pass over t's events up to until_ns, with a reader of its own. */
static struct ana_model *one_pass(const struct trace *t, const struct ana_model_options *mo,
                                  uint64_t until_ns)
{
    struct fmt_reader *r;
    struct ana_model *m;
    struct ana_scan_options so;
    char err[600];

    if (fmt_reader_open(&r, t->path, err, sizeof(err)))
        fail_msg("%s", err);
    ana_scan_options_init(&so);
    so.until_ns = until_ns;
    assert_int_equal(ana_model_build(&m, r, mo, &so), 0);
    fmt_reader_close(r);
    return m;
}

/* Ask the planner q about t: it must take route `want`, and its model must
 * equal one pass, every number (live: the live state only). */
static void answers(struct trace *t, const struct ana_query *q, enum ana_route want, bool live,
                    struct ana_plan *p)
{
    struct ana_model *got, *pass;
    char err[600], why[300];
    int rc = ana_plan_model(t->r, t->path, q, &got, p, err, sizeof(err));

    if (rc)
        fail_msg("ana_plan_model: %s (%s)", strerror(-rc), err);
    if (p->route != want)
        fail_msg("route %s, want %s", ana_route_name(p->route), ana_route_name(want));
    pass = one_pass(t, q->mo, q->until_ns);
    if (!live && ana_model_differs(got, pass, true, why, sizeof(why)))
        fail_msg("%s differs from one pass: %s", ana_route_name(want), why);
    for (uint32_t i = 0; live && i < ana_model_nr_images(pass); i++) {
        const struct ana_scope *a = ana_model_image(pass, i), *b = ana_model_image(got, i);
        assert_int_equal(a->heap, b->heap);
        assert_int_equal(a->live_blocks, b->live_blocks);
    }
    for (uint32_t s = 0; live && s < ana_model_nr_sites(pass); s++) {
        const struct ana_site *a = ana_model_site(pass, s), *b = ana_model_site(got, s);
        assert_int_equal(a ? a->live_bytes : 0, b ? b->live_bytes : 0);
        assert_int_equal(a ? a->live_blocks : 0, b ? b->live_blocks : 0);
    }
    ana_model_destroy(got);
    ana_model_destroy(pass);
}

/* The note of route, or a failure. */
static const struct ana_plan_note *note_of(const struct ana_plan *p, enum ana_route route)
{
    for (unsigned i = 0; i < p->nr_notes; i++)
        if (p->notes[i].route == route)
            return &p->notes[i];
    fail_msg("no note for route %s", ana_route_name(route));
    return NULL;
}

/* The asked-for route's refusal, said apart, is why. */
static void asked_why(const struct ana_plan *p, enum ana_route route, const char *why)
{
    assert_non_null(p->asked);
    assert_int_equal(p->asked->route, route);
    assert_string_equal(p->asked->why, why);
}

/* No index asked: the ranges answer an exact trace, and the index's routes
 * are passed over without a note to say. */
static void test_exact_ranges(void **state)
{
    struct trace t;
    struct ana_query q = query(UINT64_MAX);
    struct ana_plan p;

    (void)state;
    trace_open(&t, EXACT);
    answers(&t, &q, ANA_ROUTE_RANGES, false, &p);
    assert_null(p.asked);
    assert_int_equal(p.nr_notes, 2);
    assert_string_equal(note_of(&p, ANA_ROUTE_TOTALS)->why, "not asked for (--index)");
    assert_string_equal(note_of(&p, ANA_ROUTE_INDEX)->why, "not asked for (--index)");
    trace_close(&t);
}

/* One thread, or options that need the events in order: one pass. */
static void test_one_pass(void **state)
{
    struct trace t;
    struct ana_query q = query(UINT64_MAX);
    struct ana_model_options keep = {.keep_blocks = true};
    struct ana_plan p;

    (void)state;
    trace_open(&t, EXACT);
    q.nr_threads = 1;
    answers(&t, &q, ANA_ROUTE_PASS, false, &p);
    assert_string_equal(note_of(&p, ANA_ROUTE_RANGES)->why,
                        "one thread (one CPU, or MEMSCRIBE_JOBS=1)");
    q = query(UINT64_MAX);
    q.mo = &keep;
    answers(&t, &q, ANA_ROUTE_PASS, false, &p);
    assert_string_equal(note_of(&p, ANA_ROUTE_RANGES)->why,
                        "every block is kept (leaks --all, the leak classes of record --reach)");
    assert_null(p.asked);
    trace_close(&t);
}

/* A case of the index's routes: a kind of trace, a query that prefers the
 * index (of the whole trace, or of the moment half way, its live state),
 * the route that answers, and the asked route's refusal (NULL: none). */
struct index_case {
    const char *name;
    enum kind kind;
    enum ana_need need;
    enum ana_route want;
    enum ana_route refused;
    const char *why;
};

static const struct index_case index_cases[] = {
    /* the totals answer a trace that has them, the index a moment */
    {"totals", TOTALS, ANA_NEED_ALL, ANA_ROUTE_TOTALS, 0, NULL},
    {"index", EXACT, ANA_NEED_LIVE, ANA_ROUTE_INDEX, 0, NULL},
    /* a trace still being written: its flushed chunks' totals answer for
     * what it holds */
    {"growing", GROWING, ANA_NEED_ALL, ANA_ROUTE_TOTALS, 0, NULL},
    {"no totals", EXACT, ANA_NEED_ALL, ANA_ROUTE_RANGES, ANA_ROUTE_TOTALS,
     "the trace has no chunk totals (format 1.10: memscribe record --totals)"},
    /* several processes: the running processes' heap and its highest in
     * each chunk are the totals' all-processes part (format 1.11); the
     * shares of the peaks from replays of their chunks */
    {"several processes", MULTI_TOTALS, ANA_NEED_ALL, ANA_ROUTE_TOTALS, 0, NULL},
    {"several processes, exits between", STAGGERED, ANA_NEED_ALL, ANA_ROUTE_TOTALS, 0, NULL},
    {"aggregated", AGGREGATED, ANA_NEED_LIVE, ANA_ROUTE_RANGES, ANA_ROUTE_INDEX,
     "an aggregated trace's summaries do not hold its batches"},
    {"sampled", SAMPLED, ANA_NEED_LIVE, ANA_ROUTE_RANGES, ANA_ROUTE_INDEX,
     "a sampled trace's summaries hold recorded sizes, not estimates"},
};

/* --index: each case's route, its model equal to one pass (the live state
 * for a moment), the refusal said of the route asked for, and every other
 * route passed over without a note to say. */
static void test_index_routes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(index_cases) / sizeof(index_cases[0]); i++) {
        const struct index_case *c = &index_cases[i];
        bool live = c->need == ANA_NEED_LIVE;
        struct ana_query q = query(live ? NR_OPS / 2 * STEP_NS : UINT64_MAX);
        struct ana_plan p;
        struct trace t;

        print_message("%s\n", c->name);
        q.prefer_index = true;
        q.need = c->need;
        trace_open(&t, c->kind);
        assert_int_equal(fmt_reader_incomplete(t.r), c->kind == GROWING);
        answers(&t, &q, c->want, live, &p);
        if (c->why) {
            asked_why(&p, c->refused, c->why);
        } else {
            assert_null(p.asked);
        }
        /* the other index route, where it was reached, is not asked for */
        for (unsigned k = 0; k < p.nr_notes; k++)
            assert_true(p.notes[k].asked == (c->why && p.notes[k].route == c->refused));
        trace_close(&t);
    }
}

/* A grouping of a trace's images into programs: of_image[i] is image i's. */
struct grouping {
    const char *name;
    enum kind kind;
    uint32_t of_image[3];
};

static const struct grouping groupings[] = {
    /* both processes, running side by side in every chunk: the totals only
     * bound the program's highest, the chunks that may hold it replayed */
    {"two processes, one program", MULTI_TOTALS, {0, 0}},
    /* overlapping, the first exiting while the second runs */
    {"staggered, the first two one program", STAGGERED, {0, 0, 1}},
    /* one after the other: a chunk of one running process is exact */
    {"staggered, the first and last one program", STAGGERED, {0, 1, 0}},
    /* the same with the programs' parts of the totals (1.12): every chunk's
     * highest of a program is exact, the chunks replayed only for shares */
    {"two processes of /bin/p, the programs' parts", MULTI_NAMED, {0, 0}},
    {"staggered, two of /bin/p, the programs' parts", STAGGERED_NAMED, {0, 0, 1}},
};

static void programs_of(const struct grouping *g, uint32_t nr_images, struct ana_program *v,
                        struct ana_programs *p)
{
    *p = (struct ana_programs){.of_image = (uint32_t *)g->of_image, .nr_images = nr_images, .v = v};
    for (uint32_t i = 0; i < nr_images; i++) {
        uint32_t k = g->of_image[i];
        if (k >= p->nr)
            v[p->nr++] = (struct ana_program){.first_image = i};
        v[k].nr_images++;
    }
}

/* Asked for q->shares only (not every process's own), the totals' model
 * is one pass's in every scope, and in each site's shares of its program's
 * peak and of all processes'; its own process's are 0 unless a chunk
 * replayed for those held it. */
static void shares_held(struct trace *t, const struct ana_query *q)
{
    struct ana_model *got, *pass;
    struct ana_plan p;
    char err[600], why[300];

    assert_int_equal(q->shares & ANA_SHARES_IMAGE, 0);
    if (ana_plan_model(t->r, t->path, q, &got, &p, err, sizeof(err)))
        fail_msg("%s", err);
    assert_int_equal(p.route, ANA_ROUTE_TOTALS);
    pass = one_pass(t, q->mo, UINT64_MAX);
    if (ana_model_differs(got, pass, false, why, sizeof(why)))
        fail_msg("totals differ from one pass: %s", why);
    for (uint32_t s = 0; s < ana_model_nr_sites(pass); s++) {
        const struct ana_site *a = ana_model_site(pass, s), *b = ana_model_site(got, s);
        assert_int_equal(a ? a->peak_all_bytes : 0, b ? b->peak_all_bytes : 0);
        assert_int_equal(ana_model_site_program_peak(pass, s), ana_model_site_program_peak(got, s));
        /* found where a chunk replayed for the others holds it */
        assert_true(!b || !b->peak_bytes || b->peak_bytes == a->peak_bytes);
    }
    ana_model_destroy(got);
    ana_model_destroy(pass);
}

/* A fold keyed by stack: each site its row. */
static int stack_key(void *arg, uint32_t stack, uint32_t *key)
{
    (void)arg;
    *key = stack;
    return 0;
}

/* The fold's rows by `by` equal in every number. */
static void rows_equal(const struct ana_fold *a, const struct ana_fold *b, enum ana_fold_by by)
{
    uint32_t na, nb;
    const struct ana_fold_row *x = ana_fold_rows(a, by, &na), *y = ana_fold_rows(b, by, &nb);

    assert_int_equal(na, nb);
    for (uint32_t i = 0; i < na; i++) {
        assert_int_equal(x[i].stack, y[i].stack);
        assert_int_equal(x[i].nr_sites, y[i].nr_sites);
        assert_int_equal(x[i].s.nr_allocs, y[i].s.nr_allocs);
        assert_int_equal(x[i].s.alloc_bytes, y[i].s.alloc_bytes);
        assert_int_equal(x[i].s.live_bytes, y[i].s.live_bytes);
        assert_int_equal(x[i].s.nr_temporary, y[i].s.nr_temporary);
        assert_int_equal(x[i].s.peak_bytes, y[i].s.peak_bytes);
        assert_int_equal(x[i].s.peak_all_bytes, y[i].s.peak_all_bytes);
        assert_int_equal(x[i].leaked_bytes, y[i].leaked_bytes);
    }
}

/* The per-program view from the totals (a program's peak is its running
 * processes' highest sum, which the totals bound where several of them
 * move in a chunk): the programs' scopes and each site's bytes at its
 * program's peak equal one pass's; and folded at each process's end (a
 * build's report), the fold's rows equal those a pass folds. */
static void test_programs_totals(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(groupings) / sizeof(groupings[0]); i++) {
        const struct grouping *g = &groupings[i];
        struct ana_program v[3];
        struct ana_programs progs;
        struct ana_model_options mo = {.programs = &progs};
        struct ana_query q = query(UINT64_MAX);
        struct ana_plan p;
        struct trace t;

        print_message("%s\n", g->name);
        trace_open(&t, g->kind);
        programs_of(g, fmt_reader_nr_images(t.r), v, &progs);
        q.mo = &mo;
        q.prefer_index = true;
        q.max_replayed = UINT64_MAX; /* every chunk the peaks need */
        answers(&t, &q, ANA_ROUTE_TOTALS, false, &p);
        assert_null(p.asked);
        /* the shares asked only: no process's own, fewer chunks replayed */
        q.shares = ANA_SHARES_PROGRAM | ANA_SHARES_ALL;
        shares_held(&t, &q);
        q.shares = 0;

        struct ana_fold by_totals, by_pass;
        struct ana_model *got, *pass;
        char err[600];
        const struct ana_fold_calls calls = {.key = stack_key};
        ana_fold_init(&by_totals, &progs, &calls);
        ana_fold_init(&by_pass, &progs, &calls);
        mo.retire = ana_fold_retire(&by_totals);
        if (ana_plan_model(t.r, t.path, &q, &got, &p, err, sizeof(err)))
            fail_msg("%s", err);
        assert_int_equal(p.route, ANA_ROUTE_TOTALS);
        /* with the replays bounded as a trace of millions of events on 4
         * threads bounds them (a quarter of its events), chunks of two
         * processes of one program side by side are too many to replay
         * alone: one pass (the ranges do not make the per-program view);
         * with the programs' parts, a replay a program's peak is enough */
        if (g->kind == MULTI_TOTALS || g->kind == MULTI_NAMED) {
            struct ana_model *m;
            struct fmt_trace_counts n;
            bool parts = g->kind == MULTI_NAMED;
            fmt_reader_counts(t.r, &n);
            assert_true(fmt_reader_has_prog_totals(t.r)); /* with no part where none is named */
            q.max_replayed = n.nr_events / 4;
            mo.retire = (struct ana_model_retire){0};
            if (ana_plan_model(t.r, t.path, &q, &m, &p, err, sizeof(err)))
                fail_msg("%s", err);
            assert_int_equal(p.route, parts ? ANA_ROUTE_TOTALS : ANA_ROUTE_PASS);
            if (!parts) {
                assert_non_null(p.asked);
                assert_int_equal(p.asked->route, ANA_ROUTE_TOTALS);
                assert_non_null(strstr(p.asked->why, "a replay of the whole trace is cheaper"));
            }
            ana_model_destroy(m);
        }
        mo.retire = ana_fold_retire(&by_pass);
        pass = one_pass(&t, &mo, UINT64_MAX);
        assert_int_equal(ana_fold_finish(&by_totals, got), 0);
        assert_int_equal(ana_fold_finish(&by_pass, pass), 0);
        for (enum ana_fold_by by = 0; by < ANA_FOLD_BY_IMAGE; by++)
            rows_equal(&by_totals, &by_pass, by);
        ana_fold_release(&by_totals);
        ana_fold_release(&by_pass);
        ana_model_destroy(got);
        ana_model_destroy(pass);
        trace_close(&t);
    }
}

/* ana_plan_choose foresees what ana_plan_model takes, and --verify of a
 * trace with totals holds them against the events without a difference. */
static void test_choose_and_verify(void **state)
{
    struct trace t;
    struct ana_query q = query(UINT64_MAX);
    struct ana_plan p;

    (void)state;
    trace_open(&t, TOTALS);
    assert_int_equal(ana_plan_choose(t.r, &q, &p), ANA_ROUTE_RANGES);
    q.prefer_index = true;
    assert_int_equal(ana_plan_choose(t.r, &q, &p), ANA_ROUTE_TOTALS);
    q.prefer_index = false;
    q.verify = true;
    q.nr_threads = 1;
    answers(&t, &q, ANA_ROUTE_PASS, false, &p);
    trace_close(&t);
}

/* Bounded answers: the interval asked where it fits, else its smallest
 * multiple that makes at most the points stated (span / interval + 2). */
static void test_interval_bound(void **state)
{
    (void)state;
    assert_int_equal(ana_plan_interval(1000, 10, 0), 10);   /* no bound */
    assert_int_equal(ana_plan_interval(1000, 10, 102), 10); /* 100 + 2 fit */
    assert_int_equal(ana_plan_interval(1000, 10, 101), 20); /* 100 + 2 do not: 50 + 2 */
    assert_int_equal(ana_plan_interval(1000, 1, 12), 91);   /* 10 + 2; 90 makes 11 + 2 */
    assert_int_equal(ana_plan_interval(1000, 1, 11), 101);  /* 9 + 2; 100 makes 10 + 2 */
    assert_int_equal(ana_plan_interval(1000, 7, 12), 91);   /* a multiple of 7: 13 * 7 */
    assert_int_equal(ana_plan_interval(1000, 8, 12), 96);   /* 12 * 8; 88 makes 11 + 2 */
    assert_int_equal(ana_plan_interval(0, 1, 3), 1);        /* an empty span */
    assert_int_equal(ana_plan_interval(1000, 1, 1), 501);   /* at least 3 points: 1 + 2 */
    assert_int_equal(ana_plan_interval(UINT64_MAX, 1, 1002), UINT64_MAX / 1001 + 1);
    /* a storm of 200 M events over 60 s asked at 1 ns, 1000 points */
    uint64_t iv = ana_plan_interval(60000000000ull, 1, 1000);
    assert_true(60000000000ull / iv + 2 <= 1000);
    assert_true(60000000000ull / (iv - 1) + 2 > 1000);
}

/* A timeline's route: the totals where asked and the trace allows (one
 * process or several, finished or growing), else one pass, and why. */
static void test_timeline_routes(void **state)
{
    static const struct {
        enum kind kind;
        bool prefer, selection, site_counts;
        enum ana_route want;
        const char *why;
    } cases[] = {
        {TOTALS, true, false, false, ANA_ROUTE_TOTALS, NULL},
        {TOTALS, false, false, false, ANA_ROUTE_PASS, NULL},
        {MULTI_TOTALS, true, false, false, ANA_ROUTE_TOTALS, NULL},
        {GROWING, true, false, false, ANA_ROUTE_TOTALS, NULL},
        {EXACT, true, false, false, ANA_ROUTE_PASS,
         "the trace has no chunk totals (format 1.10: memscribe record --totals)"},
        {TOTALS, true, true, false, ANA_ROUTE_PASS,
         "a selection (--pid, --exe, --thread) is not in the totals"},
        {TOTALS, true, false, true, ANA_ROUTE_PASS,
         "the chunks' totals hold each site's bytes in use, not its allocations"},
        {TOTALS, false, false, true, ANA_ROUTE_PASS, NULL},
    };
    uint32_t pid = 70;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ana_filter f = {0};
        const char *why = "unset";
        struct trace t;

        if (cases[i].selection) {
            f.pids = &pid;
            f.nr_pids = 1;
        }
        trace_open(&t, cases[i].kind);
        assert_int_equal(ana_plan_timeline(t.r, &f, cases[i].prefer, cases[i].site_counts, &why),
                         cases[i].want);
        if (cases[i].why)
            assert_string_equal(why, cases[i].why);
        else
            assert_null(why);
        trace_close(&t);
    }
}

/* The totals' rows over a range, an interval and a bound: rows at chunk
 * ends, each the whole answer's row at that end but heap_max, the highest
 * of the whole answer's rows since the row before (the first's: since the
 * range's first chunk); the ends at least the interval apart but the last, none
 * passed over that was; at most the points asked. */
static void timeline_held(const struct ana_timeline *all, const struct ana_timeline *tl,
                          const struct ana_timeline_range *rg, uint64_t max_points)
{
    size_t j = 0, prev = SIZE_MAX, from = 0;

    while (all->rows[from].t_ns < rg->from_ns) /* the range's first chunk */
        from++;
    assert_true(tl->nr_rows > 0);
    assert_true(!max_points || tl->nr_rows <= max_points);
    for (size_t i = 0; i < tl->nr_rows; i++) {
        const struct ana_timeline_row *r = &tl->rows[i];
        while (j < all->nr_rows && all->rows[j].t_ns != r->t_ns)
            j++;
        assert_true(j < all->nr_rows);
        uint64_t top = 0;
        for (size_t k = prev == SIZE_MAX ? from : prev + 1; k <= j; k++)
            top = all->rows[k].heap_max > top ? all->rows[k].heap_max : top;
        assert_int_equal(r->heap_max, top);
        assert_int_equal(r->heap, all->rows[j].heap);
        assert_int_equal(r->nr_allocs, all->rows[j].nr_allocs);
        assert_int_equal(r->live_blocks, all->rows[j].live_blocks);
        if (i + 1 < tl->nr_rows && tl->chunk_stride == 1 && i > 0)
            assert_true(r->t_ns - tl->rows[i - 1].t_ns >= rg->interval_ns);
        for (size_t k = prev + 1; i > 0 && tl->chunk_stride == 1 && k < j; k++)
            assert_true(all->rows[k].t_ns - tl->rows[i - 1].t_ns < rg->interval_ns);
        prev = j;
    }
}

static void test_timeline_totals(void **state)
{
    struct ana_timeline all, tl;
    struct trace t;

    (void)state;
    trace_open(&t, TOTALS);
    assert_int_equal(ana_timeline_from_totals(&all, t.r, NULL, NULL, 0, NULL, 0), 0);
    assert_int_equal(all.nr_rows, fmt_reader_nr_chunks(t.r));
    uint64_t first = all.rows[0].t_ns, last = all.rows[all.nr_rows - 1].t_ns;
    uint64_t span = last - first;
    const struct ana_timeline_range ranges[] = {
        {1, 0, UINT64_MAX},                                  /* 1 ns: every chunk */
        {span / 5, 0, UINT64_MAX},                           /* about 5 rows */
        {0, all.rows[3].t_ns - 1, all.rows[9].t_ns + 1},     /* chunks 3 to 10 */
        {span / 8, all.rows[2].t_ns + 1, all.rows[15].t_ns}, /* both */
    };
    for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
        for (uint64_t points = 0; points < 8; points += 3) {
            const struct ana_timeline_range *rg = &ranges[i];
            assert_int_equal(ana_timeline_from_totals(&tl, t.r, rg, NULL, 0, NULL, points), 0);
            timeline_held(&all, &tl, rg, points);
            /* the range's chunks: from the first ending at or after from */
            if (rg->from_ns) {
                size_t k = 0;
                while (all.rows[k].t_ns < rg->from_ns)
                    k++;
                if (tl.chunk_stride == 1)
                    assert_int_equal(tl.rows[0].t_ns, all.rows[k].t_ns);
            }
            if (rg->to_ns != UINT64_MAX) {
                size_t k = 0;
                while (all.rows[k].t_ns < rg->to_ns)
                    k++;
                assert_int_equal(tl.rows[tl.nr_rows - 1].t_ns, all.rows[k].t_ns);
            } else {
                assert_int_equal(tl.rows[tl.nr_rows - 1].t_ns, last);
            }
            if (rg->interval_ns == 1 && !points)
                assert_int_equal(tl.nr_rows, all.nr_rows);
            ana_timeline_release(&tl);
        }
    /* a range after the last chunk */
    const struct ana_timeline_range late = {0, last + 1, UINT64_MAX};
    assert_int_equal(ana_timeline_from_totals(&tl, t.r, &late, NULL, 0, NULL, 0), -ERANGE);
    ana_timeline_release(&all);
    trace_close(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_ranges),    cmocka_unit_test(test_one_pass),
        cmocka_unit_test(test_index_routes),    cmocka_unit_test(test_choose_and_verify),
        cmocka_unit_test(test_interval_bound),  cmocka_unit_test(test_timeline_routes),
        cmocka_unit_test(test_timeline_totals), cmocka_unit_test(test_programs_totals),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
