/* SPDX-License-Identifier: MIT */
/* The parallel model (ranges of chunks replayed apart, then merged) must
 * equal one pass in order, field by field: synthetic traces with two
 * processes, three threads, reallocs, temporaries that straddle range
 * edges, RSS samples and runs of equal timestamps; for 1 to 7 ranges, for
 * the whole trace and up to a time. The model of a moment from the index
 * (ana_pmodel_index_build) with a retire callback, on a tree of processes that start
 * and end one after another: each image's live sites handed over once,
 * equal to the replay's, while the model holds the sites of a few images
 * only. */
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

#include "analysis/core/ana_scan.h"
#include "analysis/model/ana_model_internal.h"
#include "analysis/model/ana_pmodel.h"
#include "format/fmt_writer.h"
#include "memscribe/trace.h"
#include "test_ana_rnd.h"

#define SLOTS 24
#define NR_OPS 20000

/* Returns a memfd holding the trace. */
/* A random trace of nr_images (1 or 2) images; with 2, the model replays
 * in one pass (a range cannot take an image's exit out of the running
 * total), with 1 in ranges. */
static int write_trace(uint64_t seed, uint32_t nr_images)
{
    struct fmt_trace_info info = {.command = "p", .command_len = 1, .hostname = "h"};
    struct fmt_writer_options opt = {.chunk_events = 64};
    struct fmt_writer *w;
    uint64_t addr[2][SLOTS] = {{0}};
    uint32_t stacks[2][4];
    uint64_t ts = 1000, next_addr = 0x10000;
    int fd = memfd_create("pmodel", MFD_CLOEXEC);

    rnd_state = seed;
    assert_true(fd >= 0);
    assert_int_equal(fmt_writer_create(&w, fd, &info, &opt), 0);
    for (uint32_t im = 0; im < 2; im++)
        for (uint32_t k = 0; k < 4; k++) {
            uint64_t frames[2] = {0x5000 + 0x10 * k, 0x1000};
            assert_int_equal(fmt_writer_stack(w, im, frames, 2, &stacks[im][k]), 0);
        }
    for (int op = 0; op < NR_OPS; op++) {
        struct fmt_event ev = {0};
        uint32_t thread = (uint32_t)(rnd() % 3); /* 0, 1: image 0; 2: image 1 */
        uint32_t im = nr_images == 2 && thread == 2;
        unsigned slot = (unsigned)(rnd() % SLOTS);
        unsigned what = (unsigned)(rnd() % 100);

        ts += (rnd() % 3 == 0) ? 0 : 1000; /* runs of equal times */
        ev.ts_ns = ts;
        ev.thread = thread;
        ev.image = im;
        ev.pid = im ? 60 : 50;
        ev.tid = 500 + thread;
        if (what < 3) {
            ev.kind = FMT_EV_RSS;
            ev.size = 4096 * (1 + rnd() % 1000);
        } else if (what < 15 && addr[im][slot]) {
            ev.kind = FMT_EV_REALLOC;
            ev.old_addr = addr[im][slot];
            ev.addr = next_addr += 0x100;
            ev.size = 1 + rnd() % 3000;
            ev.stack = stacks[im][rnd() % 4];
            addr[im][slot] = ev.addr;
        } else if (addr[im][slot]) {
            ev.kind = FMT_EV_FREE;
            ev.addr = addr[im][slot];
            addr[im][slot] = 0;
        } else {
            ev.kind = what < 60 ? FMT_EV_MALLOC : FMT_EV_CALLOC;
            ev.addr = next_addr += 0x100;
            ev.size = 1 + rnd() % 3000;
            ev.stack = stacks[im][rnd() % 4];
            addr[im][slot] = ev.addr;
        }
        assert_int_equal(fmt_writer_event(w, &ev), 0);
    }
    /* Each image ends (the merge carries its end from its range). */
    for (uint32_t im = 0; im < nr_images; im++) {
        struct fmt_event ev = {.kind = FMT_EV_PROCESS_EXIT,
                               .ts_ns = ts += 1000,
                               .image = im,
                               .thread = im ? 2 : 0,
                               .pid = im ? 60 : 50,
                               .tid = 500 + (im ? 2 : 0)};
        assert_int_equal(fmt_writer_event(w, &ev), 0);
    }
    assert_int_equal(fmt_writer_finish(w), 0);
    fmt_writer_destroy(w);
    return fd;
}

static int feed(void *arg, const struct fmt_event *ev)
{
    return ana_model_event(arg, ev);
}

static void check_scope(const struct ana_scope *a, const struct ana_scope *b, const char *what)
{
#define EQ(f)                                                                                      \
    do {                                                                                           \
        if (a->f != b->f)                                                                          \
            fail_msg("%s: " #f ": one pass %llu, ranges %llu", what, (unsigned long long)a->f,     \
                     (unsigned long long)b->f);                                                    \
    } while (0)
    EQ(seen);
    EQ(pid);
    EQ(first_ns);
    EQ(last_ns);
    /* Every counter of the one list, the ones added later too. */
#define EQ_COUNTER(name, dim)                                                                      \
    for (size_t k = 0; k < sizeof(a->name) / sizeof(uint64_t); k++) {                              \
        uint64_t x = ((const uint64_t *)&a->name)[k], y = ((const uint64_t *)&b->name)[k];         \
        if (x != y)                                                                                \
            fail_msg("%s: " #name "[%zu]: one pass %llu, ranges %llu", what, k,                    \
                     (unsigned long long)x, (unsigned long long)y);                                \
    }
    ANA_SCOPE_COUNTERS(EQ_COUNTER)
#undef EQ_COUNTER
    EQ(heap);
    EQ(live_blocks);
    EQ(peak);
    EQ(peak_ns);
    EQ(peak_blocks);
    EQ(rss);
    EQ(rss_peak);
    EQ(rss_peak_ns);
    EQ(has_rss);
    EQ(ended);
    EQ(end_ns);
#undef EQ
}

static void compare(int fd, uint64_t until_ns)
{
    char path[64], err[600];
    struct fmt_reader *r;
    struct ana_model *seq;
    struct ana_scan_options so;

    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    assert_int_equal(fmt_reader_open(&r, path, err, sizeof(err)), 0);
    assert_int_equal(ana_model_create(&seq, NULL), 0);
    ana_scan_options_init(&so);
    so.until_ns = until_ns;
    assert_int_equal(ana_scan(r, &so, feed, seq), 0);
    ana_model_finish(seq);
    assert_true(ana_model_total(seq)->nr_temporary > 100);

    for (unsigned threads = 1; threads <= 7; threads++) {
        struct ana_pmodel_options po = {
            .nr_threads = threads, .until_ns = until_ns, .min_range_events = 1};
        struct ana_model *par;
        char what[64];
        assert_int_equal(ana_pmodel_build(&par, path, NULL, &po, err, sizeof(err)), 0);
        for (uint32_t i = 0; i < ana_model_nr_images(seq); i++) {
            snprintf(what, sizeof(what), "%u ranges, image %u", threads, i);
            check_scope(ana_model_image(seq, i), ana_model_image(par, i), what);
        }
        snprintf(what, sizeof(what), "%u ranges, all images", threads);
        check_scope(ana_model_total(seq), ana_model_total(par), what);
        assert_int_equal(ana_model_nr_sites(seq), ana_model_nr_sites(par));
        for (uint32_t s = 0; s < ana_model_nr_sites(seq); s++) {
            const struct ana_site *a = ana_model_site(seq, s), *b = ana_model_site(par, s);
            if (!a) {
                assert_null(b);
                continue;
            }
            assert_non_null(b);
            assert_int_equal(a->image, b->image);
#define EQ_SITE_COUNTER(type, name) assert_int_equal(a->name, b->name);
            ANA_SITE_COUNTERS(EQ_SITE_COUNTER)
#undef EQ_SITE_COUNTER
            if (a->peak_bytes != b->peak_bytes || a->peak_all_bytes != b->peak_all_bytes)
                fail_msg("%u ranges, site %u: peak share %llu/%llu, ranges %llu/%llu", threads, s,
                         (unsigned long long)a->peak_bytes, (unsigned long long)a->peak_all_bytes,
                         (unsigned long long)b->peak_bytes, (unsigned long long)b->peak_all_bytes);
        }
        ana_model_destroy(par);
    }
    ana_model_destroy(seq);
    fmt_reader_close(r);
}

static void test_ranges_equal_one_pass(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        int fd = write_trace(seed, seed <= 3 ? 2 : 1);
        compare(fd, UINT64_MAX);
        compare(fd, 1000 + NR_OPS * 1000 / 3); /* up to a time (leaks --at) */
        close(fd);
    }
}

static void test_unsupported_options(void **state)
{
    struct ana_model_options keep = {.keep_blocks = true}, thr = {.temporary_threshold = 2};
    struct ana_filter f;
    struct ana_model_options tids = {.filter = &f};
    struct ana_pmodel_options po = {.nr_threads = 2, .until_ns = UINT64_MAX};
    struct ana_model *m;
    (void)state;

    ana_filter_init(&f);
    assert_int_equal(ana_filter_add_tids(&f, "3"), 0);
    assert_false(ana_pmodel_supported(&keep));
    assert_false(ana_pmodel_supported(&thr));
    assert_false(ana_pmodel_supported(&tids));
    assert_true(ana_pmodel_supported(NULL));
    assert_int_equal(ana_pmodel_build(&m, "/nonexistent", &keep, &po, NULL, 0), -ENOTSUP);
    ana_filter_release(&f);
}

#define TREE_IMAGES 12
#define TREE_OPS 600 /* events per image, about nine chunks */

/* An image's events: its own stacks (defined as it starts), mallocs and
 * frees at random, the exit at its end. */
static void tree_image(struct fmt_writer *w, uint32_t im, uint64_t *ts)
{
    uint64_t addr[SLOTS] = {0};
    uint32_t stacks[6];

    for (uint32_t k = 0; k < 6; k++) {
        uint64_t frames[3] = {0x5000 + 0x10 * k, 0x2000 + im, 0x1000};
        assert_int_equal(fmt_writer_stack(w, im, frames, 3, &stacks[k]), 0);
    }
    for (int op = 0; op < TREE_OPS; op++) {
        unsigned slot = (unsigned)(rnd() % SLOTS);
        struct fmt_event ev = {
            .ts_ns = *ts += 1000, .image = im, .thread = im, .pid = 100 + im, .tid = 100 + im};
        if (addr[slot] && rnd() % 3) {
            ev.kind = FMT_EV_FREE;
            ev.addr = addr[slot];
            addr[slot] = 0;
        } else if (!addr[slot]) {
            ev.kind = FMT_EV_MALLOC;
            ev.addr = addr[slot] = (uint64_t)(im + 1) << 32 | (uint64_t)(op + 1) << 8;
            ev.size = 1 + rnd() % 500;
            ev.stack = stacks[rnd() % 6];
        } else {
            continue;
        }
        assert_int_equal(fmt_writer_event(w, &ev), 0);
    }
    struct fmt_event ev = {.kind = FMT_EV_PROCESS_EXIT,
                           .ts_ns = *ts += 1000,
                           .image = im,
                           .thread = im,
                           .pid = 100 + im,
                           .tid = 100 + im};
    assert_int_equal(fmt_writer_event(w, &ev), 0);
}

/* A tree: image i runs after image i - 1, one after another (each image's
 * stacks defined as it starts, as a build's are). */
static int write_tree(void)
{
    struct fmt_trace_info info = {.command = "make", .command_len = 4, .hostname = "h"};
    struct fmt_writer_options opt = {.chunk_events = 64};
    struct fmt_writer *w;
    uint64_t ts = 1000;
    int fd = memfd_create("tree", MFD_CLOEXEC);

    rnd_state = 7;
    assert_true(fd >= 0);
    assert_int_equal(fmt_writer_create(&w, fd, &info, &opt), 0);
    for (uint32_t im = 0; im < TREE_IMAGES; im++)
        tree_image(w, im, &ts);
    assert_int_equal(fmt_writer_finish(w), 0);
    fmt_writer_destroy(w);
    return fd;
}

struct retired {
    const struct ana_model *want; /* the replay's */
    unsigned nr[TREE_IMAGES];     /* times each image was handed over */
    unsigned most_held;           /* images with sites in the model at once */
};

static int check_site(void *arg, uint32_t stack, const struct ana_site *s)
{
    const struct ana_site *w = ana_model_site(arg, stack);

    if (!s->live_blocks && !s->live_bytes)
        return 0;
    assert_non_null(w);
    assert_int_equal(s->image, w->image);
    assert_int_equal(s->live_bytes, w->live_bytes);
    assert_int_equal(s->live_blocks, w->live_blocks);
    return 0;
}

static int on_retire(void *arg, const struct ana_model *m, uint32_t image)
{
    struct retired *rt = arg;
    unsigned held = 0;

    assert_true(image < TREE_IMAGES);
    rt->nr[image]++;
    for (uint32_t i = 0; i < m->nr_img_sites; i++)
        held += m->img_sites[i] != 0;
    if (held > rt->most_held)
        rt->most_held = held;
    return ana_model_each_site_of(m, image, check_site, (void *)rt->want);
}

/* The index's model at until_ns, retiring, against the replay's. */
static void index_retires(const char *path, uint64_t until_ns, unsigned most_held)
{
    char err[600];
    struct fmt_reader *r;
    struct ana_model *want, *got;
    struct ana_scan_options so;
    struct retired rt = {0};
    struct ana_model_options mo = {.retire = {.fn = on_retire, .arg = &rt}};

    assert_int_equal(fmt_reader_open_flags(&r, path, FMT_OPEN_STACKS_LATER, err, sizeof(err)), 0);
    ana_scan_options_init(&so);
    so.until_ns = until_ns;
    assert_int_equal(ana_model_build(&want, r, NULL, &so), 0);
    assert_int_equal(ana_model_finish(want), 0);
    rt.want = want;
    assert_null(ana_pmodel_index_refusal(r, &mo));
    assert_int_equal(ana_pmodel_index_build(&got, r, path, &mo, until_ns, err, sizeof(err)), 0);
    for (uint32_t i = 0; i < TREE_IMAGES; i++) {
        const struct ana_scope *a = ana_model_image(want, i), *b = ana_model_image(got, i);
        if (!a || !a->seen || (!a->live_blocks && !a->heap))
            continue;
        assert_int_equal(rt.nr[i], 1);
        assert_int_equal(a->heap, b->heap);
        assert_int_equal(a->live_blocks, b->live_blocks);
    }
    if (rt.most_held > most_held)
        fail_msg("at %llu: %u images' sites held at once", (unsigned long long)until_ns,
                 rt.most_held);
    ana_model_destroy(want);
    ana_model_destroy(got);
    fmt_reader_close(r);
}

static void test_index_retires_image_by_image(void **state)
{
    char path[64];
    int fd = write_tree();

    (void)state;
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    /* At the end every image's live state is in the summaries: one image
     * at a time; in the middle, the chunk replayed holds the running ones. */
    index_retires(path, UINT64_MAX, 1);
    for (int k = 1; k < 4; k++)
        index_retires(path, 1000 + (uint64_t)TREE_IMAGES * TREE_OPS * 1000 * k / 4, 3);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranges_equal_one_pass),
        cmocka_unit_test(test_unsupported_options),
        cmocka_unit_test(test_index_retires_image_by_image),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
