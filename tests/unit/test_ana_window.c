/* SPDX-License-Identifier: MIT */
/* Analyses that read a trace, on synthetic traces written with fmt_writer
 * in small chunks: WPA windows (AIFI/AIFO/AOFI/AOFO per stack and thread,
 * compared with a brute-force classification of every block, and reading
 * only the chunks the window needs), timeline rows, size histograms and
 * call trees. */
#include <errno.h>
#include <fcntl.h>
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

#include "analysis/core/ana_filter.h"
#include "analysis/model/ana_heap_replay.h"
#include "analysis/model/ana_histogram.h"
#include "analysis/model/ana_timeline.h"
#include "analysis/model/ana_tree.h"
#include "analysis/model/ana_window.h"
#include "format/fmt_writer.h"
#include "memscribe/trace.h"
#include "test_ana_rnd.h"

#define NR_BLOCKS 3000
#define NR_STACKS 5
#define SLOTS 40

/* Every block the synthetic program made: the truth to compare with. */
struct blk {
    uint64_t t_alloc, t_free; /* t_free 0: never freed */
    uint64_t size;
    uint32_t stack; /* trace stack id */
    uint32_t thread;
};

struct trace {
    int fd;
    struct blk blk[NR_BLOCKS];
    size_t nr_blk;
    uint32_t stack_id[NR_STACKS];
    uint64_t last_ts;
    uint64_t nr_events;
};

/* Allocations and frees over SLOTS slots, two threads, five stacks, sizes
 * of many classes, one event per microsecond, 64 events per chunk. */
static void write_trace(struct trace *t)
{
    struct fmt_trace_info info = {.command = "synthetic", .command_len = 9, .hostname = "h"};
    struct fmt_writer_options opt = {.chunk_events = 64};
    struct fmt_writer *w;
    uint64_t addr[SLOTS] = {0};
    size_t idx[SLOTS];
    uint64_t ts = 1000;

    memset(t, 0, sizeof(*t));
    rnd_state = 12345;
    t->fd = memfd_create("ana-trace", MFD_CLOEXEC);
    assert_true(t->fd >= 0);
    assert_int_equal(fmt_writer_create(&w, t->fd, &info, &opt), 0);
    for (uint32_t i = 0; i < NR_STACKS; i++) {
        /* main -> f_i -> leaf: frames leaf first. */
        uint64_t frames[3] = {0x4000 + 0x100 * i, 0x3000 + 0x10 * (i % 2), 0x1000};
        assert_int_equal(fmt_writer_stack(w, 0, frames, 3, &t->stack_id[i]), 0);
    }
    while (t->nr_blk < NR_BLOCKS) {
        unsigned slot = (unsigned)(rnd() % SLOTS);
        struct fmt_event ev = {0};
        ev.ts_ns = ts;
        ts += 1000;
        ev.pid = 50;
        ev.thread = (uint32_t)(rnd() % 2);
        ev.tid = 50 + ev.thread;
        if (addr[slot]) {
            ev.kind = FMT_EV_FREE;
            ev.addr = addr[slot];
            t->blk[idx[slot]].t_free = ev.ts_ns;
            addr[slot] = 0;
        } else {
            size_t b = t->nr_blk++;
            ev.kind = FMT_EV_MALLOC;
            ev.addr = 0x100000 + (uint64_t)slot * 0x10000;
            ev.size = 1 + rnd() % 5000;
            uint32_t k = (uint32_t)(rnd() % NR_STACKS);
            ev.stack = t->stack_id[k];
            t->blk[b] = (struct blk){ev.ts_ns, 0, ev.size, ev.stack, ev.thread};
            addr[slot] = ev.addr;
            idx[slot] = b;
        }
        assert_int_equal(fmt_writer_event(w, &ev), 0);
        t->last_ts = ev.ts_ns;
        t->nr_events++;
    }
    assert_int_equal(fmt_writer_finish(w), 0);
    fmt_writer_destroy(w);
}

static struct fmt_reader *open_trace(struct trace *t)
{
    struct fmt_reader *r;
    char err[600];

    assert_int_equal(fmt_reader_open_fd(&r, t->fd, "synthetic", err, sizeof(err)), 0);
    return r;
}

/* The truth for [t0, t1]: per stack and class, as docs/architecture.md defines. */
static void brute(const struct trace *t, uint64_t t0, uint64_t t1, int thread,
                  struct ana_wpa *per_stack /* indexed by stack id */)
{
    for (size_t i = 0; i < t->nr_blk; i++) {
        const struct blk *b = &t->blk[i];
        if (thread >= 0 && b->thread != (uint32_t)thread)
            continue;
        if (b->t_alloc > t1)
            continue;
        bool freed_by_t1 = b->t_free && b->t_free <= t1;
        if (b->t_free && b->t_free < t0)
            continue; /* gone before the window */
        int cls;
        if (b->t_alloc >= t0)
            cls = freed_by_t1 ? ANA_AIFI : ANA_AIFO;
        else
            cls = freed_by_t1 ? ANA_AOFI : ANA_AOFO;
        per_stack[b->stack].nr[cls]++;
        per_stack[b->stack].bytes[cls] += b->size;
    }
}

static void check_window(struct trace *t, struct fmt_reader *r, uint64_t t0, uint64_t t1,
                         int thread)
{
    struct fmt_trace_counts counts;
    struct ana_filter f;
    struct ana_window w;

    fmt_reader_counts(r, &counts);
    struct ana_wpa *want = calloc(counts.nr_stacks + 1, sizeof(*want));
    assert_non_null(want);
    brute(t, t0, t1, thread, want);
    ana_filter_init(&f);
    if (thread >= 0)
        assert_int_equal(ana_filter_add_tids(&f, thread ? "51" : "50"), 0);
    assert_int_equal(ana_window_compute(&w, r, &f, t0, t1, ANA_WINDOW_BY_STACK, NULL, NULL), 0);
    struct ana_wpa total = {0};
    for (uint32_t k = 0; k < NR_STACKS; k++) {
        uint32_t id = t->stack_id[k];
        const struct ana_window_key *got = ana_map_get(&w.keys, (uint64_t)id + 1);
        for (int c = 0; c < ANA_NR_WPA; c++) {
            uint64_t gn = got ? got->c.nr[c] : 0, gb = got ? got->c.bytes[c] : 0;
            if (gn != want[id].nr[c] || gb != want[id].bytes[c])
                fail_msg("window [%llu, %llu] thread %d stack %u class %d: got %llu/%llu, want "
                         "%llu/%llu",
                         (unsigned long long)t0, (unsigned long long)t1, thread, id, c,
                         (unsigned long long)gn, (unsigned long long)gb,
                         (unsigned long long)want[id].nr[c], (unsigned long long)want[id].bytes[c]);
            total.nr[c] += want[id].nr[c];
            total.bytes[c] += want[id].bytes[c];
        }
    }
    for (int c = 0; c < ANA_NR_WPA; c++) {
        assert_int_equal(w.images[0].nr[c], total.nr[c]);
        assert_int_equal(w.images[0].bytes[c], total.bytes[c]);
    }
    ana_window_release(&w);
    ana_filter_release(&f);
    free(want);
}

static void test_window_matches_brute_force(void **state)
{
    struct trace *t = malloc(sizeof(*t));
    (void)state;

    write_trace(t);
    struct fmt_reader *r = open_trace(t);
    assert_true(fmt_reader_nr_chunks(r) > 20);
    uint64_t span = t->last_ts;
    /* Windows at chunk edges, inside one chunk, a single instant, the
     * whole trace, and the ends. */
    uint64_t cases[][2] = {
        {0, span},
        {span / 3, span / 2},
        {span / 2, span / 2},
        {1000, 1000},
        {span - 5000, span},
        {fmt_reader_chunk(r, 5)->first_ts_ns, fmt_reader_chunk(r, 9)->last_ts_ns},
        {fmt_reader_chunk(r, 5)->first_ts_ns + 1, fmt_reader_chunk(r, 9)->last_ts_ns - 1},
        {span + 1, span + 100},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        check_window(t, r, cases[i][0], cases[i][1], -1);
        check_window(t, r, cases[i][0], cases[i][1], 1);
    }
    fmt_reader_close(r);
    close(t->fd);
    free(t);
}

/* A short window late in the trace reads from the start (what is live at
 * t0 comes from the events, not from the index's unchecked totals) and
 * classifies the events up to t1. */
static void test_window_reads_from_the_start(void **state)
{
    struct trace *t = malloc(sizeof(*t));
    struct ana_window w;
    uint64_t before = 0;
    (void)state;

    write_trace(t);
    struct fmt_reader *r = open_trace(t);
    uint32_t n = fmt_reader_nr_chunks(r);
    const struct fmt_chunk_info *c = fmt_reader_chunk(r, n - 3);
    for (uint32_t k = 0; k <= n - 3; k++)
        before += fmt_reader_chunk(r, k)->nr_events;
    assert_int_equal(ana_window_compute(&w, r, NULL, c->first_ts_ns + 2000, c->last_ts_ns,
                                        ANA_WINDOW_BY_STACK, NULL, NULL),
                     0);
    assert_int_equal(w.first_chunk, 0);
    /* Every event up to the chunk's end, and those of the next chunk
     * stamped at the same time. */
    assert_true(w.nr_events_read >= before);
    assert_true(w.nr_events_read <= before + fmt_reader_chunk(r, n - 2)->nr_events);
    ana_window_release(&w);
    fmt_reader_close(r);
    close(t->fd);
    free(t);
}

static void test_window_by_thread_and_size_class(void **state)
{
    struct trace *t = malloc(sizeof(*t));
    struct ana_window w;
    (void)state;

    write_trace(t);
    struct fmt_reader *r = open_trace(t);
    uint64_t t0 = t->last_ts / 4, t1 = t->last_ts / 2;
    struct ana_wpa want_thr[2] = {0}, want_cls[ANA_NR_SIZE_CLASSES] = {0};
    for (size_t i = 0; i < t->nr_blk; i++) {
        const struct blk *b = &t->blk[i];
        bool in_alloc = b->t_alloc >= t0 && b->t_alloc <= t1;
        bool in_free = b->t_free && b->t_free >= t0 && b->t_free <= t1;
        int cls = in_alloc ? (in_free ? ANA_AIFI : ANA_AIFO) : ANA_AOFI;
        if (!in_alloc && !in_free)
            continue;
        if (!in_alloc && b->t_alloc > t1)
            continue;
        want_thr[b->thread].nr[cls]++;
        want_thr[b->thread].bytes[cls] += b->size;
        want_cls[ana_size_class(b->size)].nr[cls]++;
        want_cls[ana_size_class(b->size)].bytes[cls] += b->size;
    }
    assert_int_equal(ana_window_compute(&w, r, NULL, t0, t1, ANA_WINDOW_BY_THREAD, NULL, NULL), 0);
    for (uint64_t th = 0; th < 2; th++) {
        const struct ana_window_key *k = ana_map_get(&w.keys, th + 1);
        assert_non_null(k);
        assert_int_equal(k->tid, 50 + th);
        for (int c = ANA_AIFI; c <= ANA_AOFI; c++) {
            assert_int_equal(k->c.nr[c], want_thr[th].nr[c]);
            assert_int_equal(k->c.bytes[c], want_thr[th].bytes[c]);
        }
    }
    ana_window_release(&w);
    assert_int_equal(ana_window_compute(&w, r, NULL, t0, t1, ANA_WINDOW_BY_SIZE_CLASS, NULL, NULL),
                     0);
    for (unsigned cl = 0; cl < ANA_NR_SIZE_CLASSES; cl++) {
        const struct ana_window_key *k = ana_map_get(&w.keys, (uint64_t)cl + 1);
        for (int c = ANA_AIFI; c <= ANA_AOFI; c++) {
            assert_int_equal(k ? k->c.nr[c] : 0, want_cls[cl].nr[c]);
            assert_int_equal(k ? k->c.bytes[c] : 0, want_cls[cl].bytes[c]);
        }
    }
    ana_window_release(&w);
    fmt_reader_close(r);
    close(t->fd);
    free(t);
}

static void test_timeline(void **state)
{
    struct trace *t = malloc(sizeof(*t));
    struct ana_timeline tl;
    (void)state;

    write_trace(t);
    struct fmt_reader *r = open_trace(t);
    const uint64_t interval = 100000; /* 100 events */
    assert_int_equal(ana_timeline_compute(&tl, r, NULL, interval, NULL, NULL), 0);
    assert_int_equal(tl.nr_rows, t->last_ts / interval + 1);
    for (size_t i = 0; i < tl.nr_rows; i++) {
        uint64_t at = tl.rows[i].t_ns; /* state after events before at (the last: all) */
        bool last = i + 1 == tl.nr_rows;
        uint64_t heap = 0, allocated = 0, nr = 0, live = 0;
        for (size_t b = 0; b < t->nr_blk; b++) {
            const struct blk *k = &t->blk[b];
            bool in = last ? true : k->t_alloc < at;
            if (!in)
                continue;
            allocated += k->size;
            nr++;
            bool freed = k->t_free && (last || k->t_free < at);
            if (!freed) {
                heap += k->size;
                live++;
            }
        }
        assert_int_equal(tl.rows[i].heap, heap);
        assert_int_equal(tl.rows[i].allocated_bytes, allocated);
        assert_int_equal(tl.rows[i].nr_allocs, nr);
        assert_int_equal(tl.rows[i].live_blocks, live);
        assert_true(tl.rows[i].heap_max >= tl.rows[i].heap);
        assert_int_equal(tl.rows[i].pid, 50);
    }
    assert_int_equal(tl.rows[tl.nr_rows - 1].t_ns, t->last_ts);
    ana_timeline_release(&tl);
    fmt_reader_close(r);
    close(t->fd);
    free(t);
}

#define NR_PROCS 2000

/* A trace of NR_PROCS processes, one starting every microsecond from 1 us:
 * 0 or -errno. */
static int write_many_processes(int fd)
{
    struct fmt_trace_info info = {.command = "many", .command_len = 4, .hostname = "h"};
    struct fmt_writer *w = NULL;
    int rc = fmt_writer_create(&w, fd, &info, NULL);

    for (uint32_t i = 0; i < NR_PROCS && !rc; i++) {
        struct fmt_event ev = {.ts_ns = 1000 + 1000 * (uint64_t)i,
                               .kind = FMT_EV_PROCESS_START,
                               .image = i,
                               .pid = 1000 + i,
                               .tid = 1000 + i,
                               .str = "p",
                               .str_len = 1};
        rc = fmt_writer_event(w, &ev);
    }
    if (!rc)
        rc = fmt_writer_finish(w);
    if (w)
        fmt_writer_destroy(w);
    return rc;
}

/* Rows are per interval and process image, from its start: 2,000
 * processes over 13,334 intervals would be 13.3 million rows. The error says it is the processes
 * (the interval may be the default one, which nobody gave: with ~100,000
 * processes its 101 rows each are too many) before any row is kept. On
 * main the rows grew towards the cap (720 MB) and the command blamed
 * --interval (tests/e2e/ana_timeline_procs.sh checks the message). */
static void test_timeline_many_processes(void **state)
{
    struct fmt_reader *r;
    struct ana_timeline tl;
    struct ana_filter f;
    uint32_t pid = 1000 + NR_PROCS / 2;
    char err[600];
    int fd = memfd_create("ana-procs", MFD_CLOEXEC);
    (void)state;

    assert_true(fd >= 0);
    assert_int_equal(write_many_processes(fd), 0);
    assert_int_equal(fmt_reader_open_fd(&r, fd, "many", err, sizeof(err)), 0);
    assert_int_equal(ana_timeline_compute(&tl, r, NULL, 150, NULL, NULL), -EOVERFLOW);
    assert_int_equal(tl.nr_images, NR_PROCS);
    assert_int_equal(tl.nr_intervals, (1000 + 1000 * (NR_PROCS - 1)) / 150 + 1);
    assert_int_equal(tl.nr_rows_needed, 13328667);
    assert_null(tl.rows);
    ana_timeline_release(&tl);
    /* One process chosen: its 101 rows. */
    ana_filter_init(&f);
    f.pids = malloc(sizeof(*f.pids));
    assert_non_null(f.pids);
    f.pids[0] = pid;
    f.nr_pids = 1;
    assert_int_equal(ana_timeline_compute(&tl, r, &f, 300, NULL, NULL), 0);
    assert_int_equal(tl.nr_images, 1);
    assert_int_equal(tl.nr_rows, tl.nr_intervals - (1000 + 1000 * (uint64_t)(NR_PROCS / 2)) / 300);
    for (size_t i = 0; i < tl.nr_rows; i++)
        assert_int_equal(tl.rows[i].pid, pid);
    ana_timeline_release(&tl);
    ana_filter_release(&f);
    fmt_reader_close(r);
    close(fd);
}

static void test_histogram(void **state)
{
    struct fmt_event ev = {.kind = FMT_EV_MALLOC, .serial = 1};
    struct ana_histogram h;
    static const uint64_t sizes[] = {0, 1, 2, 3, 4, 7, 8, 1000, 1024, 1ull << 40, UINT64_MAX};
    (void)state;

    assert_int_equal(ana_size_class(0), 0);
    assert_int_equal(ana_size_class(1), 1);
    assert_int_equal(ana_size_class(3), 2);
    assert_int_equal(ana_size_class(4), 3);
    assert_int_equal(ana_size_class(UINT64_MAX), 64);
    uint64_t lo, hi;
    ana_size_class_bounds(11, &lo, &hi);
    assert_int_equal(lo, 1024);
    assert_int_equal(hi, 2047);
    ana_size_class_bounds(64, &lo, &hi);
    assert_int_equal(hi, UINT64_MAX);

    /* Fed by the heap replay, as every consumer is. */
    struct ana_heap_replay p;
    ana_heap_replay_init(&p, NULL);
    ana_histogram_init(&h, true);
    assert_int_equal(ana_histogram_subscribe(&h, &p), 0);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        ev.size = ev.raw_size = sizes[i]; /* as the reader gives an exact trace's */
        ev.stack = 1 + (uint32_t)(i % 2);
        assert_int_equal(ana_heap_replay_event(&p, &ev), 0);
    }
    ev.kind = FMT_EV_FREE; /* not an allocation */
    assert_int_equal(ana_heap_replay_event(&p, &ev), 0);
    assert_int_equal(ana_heap_replay_finish(&p), 0);
    ana_heap_replay_release(&p);
    const struct ana_hist_bin *b = ana_histogram_image(&h, 0);
    assert_int_equal(b[0].nr, 1);
    assert_int_equal(b[1].nr, 1);
    assert_int_equal(b[2].nr, 2);
    assert_int_equal(b[2].bytes, 5);
    assert_int_equal(b[3].nr, 2);
    assert_int_equal(b[4].nr, 1);
    assert_int_equal(b[10].nr, 1);
    assert_int_equal(b[11].nr, 1);
    assert_int_equal(b[41].nr, 1);
    assert_int_equal(b[64].bytes, UINT64_MAX);
    /* Per stack: sizes at odd positions went to stack 2. */
    assert_int_equal(ana_histogram_stack(&h, 2, 1)->nr, 1);    /* 1 */
    assert_int_equal(ana_histogram_stack(&h, 1, 2)->bytes, 2); /* 2 */
    assert_int_equal(ana_histogram_stack(&h, 2, 2)->bytes, 3); /* 3 */
    assert_null(ana_histogram_stack(&h, 2, 5));
    ana_histogram_release(&h);
}

/* A tree's labels as names: their numbers, ties then in label order. */
static const char *label_name(void *arg, uint32_t label)
{
    static const char *const names[] = {"0", "1", "2", "3", "4"};

    (void)arg;
    return label < 5 ? names[label] : "?";
}

static void test_tree(void **state)
{
    struct ana_tree t;
    (void)state;

    /* main(1) -> a(2) -> leaf(4); main -> b(3) -> leaf(4); main itself. */
    uint32_t p1[] = {1, 2, 4}, p2[] = {1, 3, 4}, p3[] = {1}, p4[] = {1, 2};
    int64_t m1[] = {10, 1}, m2[] = {30, 2}, m3[] = {5, 1}, m4[] = {-7, 1};
    assert_int_equal(ana_tree_init(&t, 2, 0), 0);
    assert_int_equal(ana_tree_add(&t, p1, 3, m1), 0);
    assert_int_equal(ana_tree_add(&t, p2, 3, m2), 0);
    assert_int_equal(ana_tree_add(&t, p3, 1, m3), 0);
    assert_int_equal(ana_tree_add(&t, p4, 2, m4), 0);
    assert_int_equal(t.nr_nodes, 6); /* root, main, a, leaf, b, leaf */
    assert_int_equal(t.nodes[0].incl[0], 38);
    assert_int_equal(t.nodes[0].incl[1], 5);
    const struct ana_tree_node *main_ = &t.nodes[t.nodes[0].first_child];
    assert_int_equal(main_->label, 1);
    assert_int_equal(main_->incl[0], 38);
    assert_int_equal(main_->self[0], 5);
    assert_int_equal(ana_tree_sort(&t, 0, label_name, NULL), 0);
    /* Children of main by |inclusive|: b (30) before a (10 - 7 = 3). */
    const struct ana_tree_node *first = &t.nodes[main_->first_child];
    assert_int_equal(first->label, 3);
    assert_int_equal(first->incl[0], 30);
    const struct ana_tree_node *second = &t.nodes[first->next_sibling];
    assert_int_equal(second->label, 2);
    assert_int_equal(second->incl[0], 3);
    assert_int_equal(second->self[0], -7);
    assert_int_equal(second->depth, 2);
    ana_tree_release(&t);

    /* Depth 2: leaf folds into a and b. */
    assert_int_equal(ana_tree_init(&t, 2, 2), 0);
    assert_int_equal(ana_tree_add(&t, p1, 3, m1), 0);
    assert_int_equal(ana_tree_add(&t, p2, 3, m2), 0);
    assert_int_equal(t.nr_nodes, 4);
    for (uint32_t i = 1; i < t.nr_nodes; i++)
        assert_true(t.nodes[i].depth <= 2);
    assert_int_equal(t.nodes[2].self[0], 10);
    ana_tree_release(&t);
}

/* The node under the root of label, or NULL. */
static const struct ana_tree_node *top_node(const struct ana_tree *t, uint32_t label)
{
    for (uint32_t c = t->nodes[0].first_child; c != ANA_TREE_NONE; c = t->nodes[c].next_sibling)
        if (t->nodes[c].label == label)
            return &t->nodes[c];
    return NULL;
}

static void test_tree_flat(void **state)
{
    struct ana_tree t;
    (void)state;

    /* main(1) -> a(2) -> a(2) -> leaf(4): a recursion; main -> b(3) ->
     * leaf(4); main -> a: a allocates itself. */
    uint32_t p1[] = {1, 2, 2, 4}, p2[] = {1, 3, 4}, p3[] = {1, 2};
    int64_t m1[] = {10, 1}, m2[] = {30, 2}, m3[] = {5, 1};
    assert_int_equal(ana_tree_init(&t, 2, 0), 0);
    assert_int_equal(ana_tree_add_flat(&t, p1, 4, m1), 0);
    assert_int_equal(ana_tree_add_flat(&t, p2, 3, m2), 0);
    assert_int_equal(ana_tree_add_flat(&t, p3, 2, m3), 0);
    assert_int_equal(t.nr_nodes, 5); /* the root and the four functions, each once */
    assert_int_equal(t.nodes[0].incl[0], 45);
    assert_int_equal(t.nodes[0].incl[1], 4);
    /* label: inclusive (each path once), self (paths that end there) */
    const int64_t want[][3] = {{1, 45, 0}, {2, 15, 5}, {3, 30, 0}, {4, 40, 40}};
    for (size_t i = 0; i < 4; i++) {
        const struct ana_tree_node *n = top_node(&t, (uint32_t)want[i][0]);
        assert_non_null(n);
        assert_int_equal(n->depth, 1);
        assert_int_equal(n->first_child, ANA_TREE_NONE);
        assert_int_equal(n->incl[0], want[i][1]);
        assert_int_equal(n->self[0], want[i][2]);
    }
    assert_int_equal(top_node(&t, 2)->incl[1], 2); /* the recursion's path counted once */
    ana_tree_release(&t);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_matches_brute_force),
        cmocka_unit_test(test_window_reads_from_the_start),
        cmocka_unit_test(test_window_by_thread_and_size_class),
        cmocka_unit_test(test_timeline),
        cmocka_unit_test(test_timeline_many_processes),
        cmocka_unit_test(test_histogram),
        cmocka_unit_test(test_tree),
        cmocka_unit_test(test_tree_flat),
    };
    /* For tests/e2e/ana_timeline_procs.sh: write the many-process trace. */
    if (argc == 3 && !strcmp(argv[1], "--write-many-processes")) {
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int rc = fd < 0 ? -errno : write_many_processes(fd);

        if (rc || close(fd)) {
            fprintf(stderr, "test_ana_window: %s: %s\n", argv[2], strerror(rc ? -rc : errno));
            return 1;
        }
        return 0;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
