/* SPDX-License-Identifier: MIT */
/* The parallel model (ranges of chunks replayed apart, then merged) must
 * equal one pass in order, field by field: synthetic traces with two
 * processes, three threads, reallocs, temporaries that straddle range
 * edges, RSS samples and runs of equal timestamps; for 1 to 7 ranges, for
 * the whole trace and up to a time. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranges_equal_one_pass),
        cmocka_unit_test(test_unsupported_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
