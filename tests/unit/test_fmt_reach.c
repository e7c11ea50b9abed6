/* SPDX-License-Identifier: MIT */
/* Reachability classes at exit (format 1.6, feature bit REACH, the REACH
 * record: docs/format.md): the writer's live blocks of an image, the
 * record written and read back, its checks, and tests/golden/v1_6_reach.mscr
 * (two images: one scanned, its five blocks of every class, a block freed
 * before and one made after the scan; one whose scan was refused), which
 * must read back as it always did. MS_FMT_WRITE_GOLDEN_1_6=PATH writes it
 * anew; do that only for a new format version, into a new file. */
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

#define HEAP 0x5555300000ull

static const struct fmt_writer_options reach_opt = {
    .time_unit_ns = 1000, .time_pack = 1, .free_ranks = 1, .reach = 1};

/* Serials 1..6 on image 0 (sizes 100..105), 7 on image 1. */
static void write_blocks(struct tfmt *t)
{
    uint32_t id;
    uint64_t frame = 0x401000;

    assert_int_equal(fmt_writer_stack(t->w, 0, &frame, 1, &id), 0);
    for (uint64_t i = 0; i < 7; i++) {
        struct fmt_event ev = tfmt_mk(FMT_EV_MALLOC, 1000 * (i + 1), i == 6 ? 2 : 0);

        ev.addr = HEAP + 0x100 * i;
        ev.size = 100 + i;
        ev.stack = id;
        assert_int_equal(fmt_writer_event(t->w, &ev), 0);
    }
    struct fmt_event f = tfmt_mk(FMT_EV_FREE, 8000, 0);
    f.addr = HEAP + 0x100 * 5; /* serial 6: freed before the scan */
    assert_int_equal(fmt_writer_event(t->w, &f), 0);
}

static int collect(void *arg, const struct fmt_writer_block *b)
{
    uint64_t *mask = arg;

    assert_int_equal(b->addr, HEAP + 0x100 * (b->serial - 1));
    assert_int_equal(b->size, 100 + b->serial - 1);
    *mask |= 1ull << b->serial;
    return 0;
}

static void write_reach(struct tfmt *t)
{
    static const uint64_t serials[5] = {1, 2, 3, 4, 5};
    static const uint8_t classes[5] = {FMT_REACH_DEFINITE, FMT_REACH_INDIRECT, FMT_REACH_POSSIBLE,
                                       FMT_REACH_REACHABLE, FMT_REACH_REACHABLE};
    struct fmt_writer_reach rr = {.image = 0,
                                  .ts_ns = 9000,
                                  .nr_threads = 2,
                                  .root_bytes = 4096,
                                  .skipped_bytes = 0,
                                  .nr_blocks = 5,
                                  .serials = serials,
                                  .classes = classes};
    struct fmt_writer_reach off = {.image = 1,
                                   .ts_ns = 9500,
                                   .status = FMT_REACH_UNAVAILABLE,
                                   .reason = "ptrace refused (Operation not permitted)"};
    uint64_t mask = 0;

    assert_int_equal(fmt_writer_live_blocks(t->w, 0, collect, &mask), 0);
    assert_int_equal(mask, 0x3e); /* serials 1..5 */
    assert_int_equal(fmt_writer_reach(t->w, &rr), 0);
    assert_int_equal(fmt_writer_reach(t->w, &off), 0);
    struct fmt_event ev = tfmt_mk(FMT_EV_MALLOC, 10000, 0); /* serial 8: after the scan */
    ev.addr = HEAP + 0x1000;
    ev.size = 200;
    assert_int_equal(fmt_writer_event(t->w, &ev), 0);
}

static void check_reach(struct fmt_reader *r)
{
    const struct fmt_reach_info *ri, *off;
    uint64_t serial = 0;

    assert_true(fmt_reader_reach_on(r));
    assert_int_equal(fmt_reader_info(r)->version_minor, 6);
    assert_int_equal(fmt_reader_nr_reach(r), 2);
    ri = fmt_reader_find_reach(r, 0);
    assert_non_null(ri);
    assert_int_equal(ri->status, FMT_REACH_SCANNED);
    assert_int_equal(ri->ts_ns, 9000);
    assert_int_equal(ri->nr_threads, 2);
    assert_int_equal(ri->root_bytes, 4096);
    assert_int_equal(ri->nr_blocks, 5);
    assert_string_equal(ri->reason, "");
    assert_int_equal(fmt_reader_reach_class(r, ri, 1), FMT_REACH_DEFINITE);
    assert_int_equal(fmt_reader_reach_class(r, ri, 2), FMT_REACH_INDIRECT);
    assert_int_equal(fmt_reader_reach_class(r, ri, 3), FMT_REACH_POSSIBLE);
    assert_int_equal(fmt_reader_reach_class(r, ri, 4), FMT_REACH_REACHABLE);
    assert_int_equal(fmt_reader_reach_class(r, ri, 6), FMT_REACH_UNKNOWN);
    assert_int_equal(fmt_reader_reach_class(r, ri, 8), FMT_REACH_UNKNOWN);
    assert_int_equal(fmt_reader_reach_block(r, ri, 4, &serial), FMT_REACH_REACHABLE);
    assert_int_equal(serial, 5);
    off = fmt_reader_find_reach(r, 1);
    assert_non_null(off);
    assert_int_equal(off->status, FMT_REACH_UNAVAILABLE);
    assert_int_equal(off->nr_blocks, 0);
    assert_string_equal(off->reason, "ptrace refused (Operation not permitted)");
    assert_null(fmt_reader_find_reach(r, 2));
    assert_string_equal(fmt_reach_class_name(FMT_REACH_DEFINITE), "definite");
}

static void test_reach_roundtrip(void **state)
{
    struct tfmt t;

    (void)state;
    tfmt_start_opt(&t, &reach_opt);
    write_blocks(&t);
    write_reach(&t);
    tfmt_check_written(&t, "MS_FMT_WRITE_GOLDEN_1_6", check_reach);
}

/* The writer refuses what the format forbids. */
static void test_reach_refused(void **state)
{
    static const uint64_t back[2] = {3, 2};
    static const uint8_t cls[2] = {FMT_REACH_DEFINITE, FMT_REACH_DEFINITE};
    static const uint8_t unknown[1] = {FMT_REACH_UNKNOWN};
    struct fmt_writer_reach rr = {.nr_blocks = 2, .serials = back, .classes = cls};
    struct tfmt t;

    (void)state;
    tfmt_start_opt(&t, &reach_opt);
    write_blocks(&t);
    assert_int_equal(fmt_writer_reach(t.w, &rr), -EINVAL); /* serials going back */
    rr.nr_blocks = 1;
    rr.classes = unknown;
    assert_int_equal(fmt_writer_reach(t.w, &rr), -EINVAL); /* no class */
    rr.classes = cls;
    rr.status = FMT_REACH_UNAVAILABLE;
    assert_int_equal(fmt_writer_reach(t.w, &rr), -EINVAL); /* blocks without a scan */
    tfmt_finish(&t);
    tfmt_close(&t);
    /* Without the option, no record. */
    tfmt_start_pack(&t, 0, 1000, 2);
    rr.status = FMT_REACH_SCANNED;
    assert_int_equal(fmt_writer_reach(t.w, &rr), -EINVAL);
    tfmt_finish(&t);
    struct fmt_reader *r = tfmt_open(&t);
    assert_false(fmt_reader_reach_on(r));
    assert_int_equal(fmt_reader_info(r)->version_minor, 5);
    fmt_reader_close(r);
    tfmt_close(&t);
}

static void test_reach_golden(void **state)
{
    (void)state;
    tfmt_check_path(MS_GOLDEN_DIR "/v1_6_reach.mscr", check_reach);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reach_roundtrip),
        cmocka_unit_test(test_reach_refused),
        cmocka_unit_test(test_reach_golden),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
