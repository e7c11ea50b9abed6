/* SPDX-License-Identifier: MIT */
/* Aggregated traces (format 1.8, feature bit AGGREGATE: docs/format-events.md,
 * "Aggregated traces"; docs/aggregate.md): the three kinds written and read
 * back field by field, the trace facts aggregate_ns and aggregate_from_ns
 * from a trace aggregated from its start (META AGGREGATE), from one that
 * switched (the AGGREGATE record), finished or cut short, the kinds refused
 * without the bit and out of place, and tests/golden/v1_8_aggregate.mscr,
 * which must read back as it always did. MS_FMT_WRITE_GOLDEN_1_8=PATH
 * writes it anew; do that only for a new format version, into a new file. */
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

#include "format/fmt_crc_internal.h"
#include "format/fmt_layout_internal.h"
#include "test_fmt_util.h"

#ifndef MS_GOLDEN_DIR
#error "MS_GOLDEN_DIR must name tests/golden"
#endif

#define HEAP 0x5555400000ull
#define MS 1000000ull /* the golden trace's period: 1 ms */

static const struct fmt_writer_options agg_opt = {
    .time_unit_ns = 1000, .time_pack = 1, .free_ranks = 1, .realloc_pred = 1, .aggregate = 1};

static struct fmt_event mk_batch(uint64_t ts, uint32_t thread, uint32_t stack, uint64_t blocks,
                                 uint64_t bytes, uint64_t temp, uint64_t temp_bytes, uint64_t cls)
{
    struct fmt_event ev = tfmt_mk(FMT_EV_HEAP_BATCH, ts, thread);

    ev.stack = stack;
    ev.size = bytes;
    ev.arg[0] = blocks;
    ev.arg[1] = temp;
    ev.arg[2] = temp_bytes;
    ev.arg[3] = cls;
    return ev;
}

static struct fmt_event mk_transient(uint64_t ts, uint32_t thread, uint32_t stack, uint64_t bytes,
                                     uint64_t blocks, int of_image, int end)
{
    struct fmt_event ev = tfmt_mk(FMT_EV_HEAP_TRANSIENT, ts, thread);

    ev.stack = stack;
    ev.size = bytes;
    ev.arg[0] = blocks;
    ev.arg[1] = (uint64_t)of_image;
    ev.flags = end ? FMT_EVF_TRANSIENT_END : 0;
    return ev;
}

static struct fmt_event mk_aggregate(uint64_t ts, uint64_t period, uint64_t why)
{
    struct fmt_event ev = tfmt_mk(FMT_EV_AGGREGATE, ts, 0);

    ev.arg[0] = period;
    ev.arg[1] = why;
    return ev;
}

/* An aggregated trace as the recorder writes one, period 1 ms, two images
 * (threads 0, 1 of image 0; thread 2 of image 1): at the cuts each
 * interval's kept allocations with their own times, a free of an address
 * the recorder did not know, the transient moments at each interval's
 * highest heap (all images', then each image's), the batch rows; a kept
 * block's realloc, a pending block's realloc kept (an allocation of
 * old_addr 0), the ends of kept blocks, a batch row of temporaries alone,
 * a leak. Sizes 100.. and stacks 1..3. */
static size_t golden_events(struct fmt_event *ev)
{
    size_t n = 0;

    ev[n++] = mk_aggregate(0, MS, 0);
    ev[n] = tfmt_mk(FMT_EV_PROCESS_START, 0, 0);
    ev[n].str = "/usr/bin/agg";
    ev[n++].str_len = 12;
    ev[n++] = tfmt_heap(FMT_EV_MALLOC, 100000, 0, HEAP + 0x100, 100, 1); /* kept, freed at 1.5 ms */
    ev[n++] = tfmt_heap(FMT_EV_FREE, 200000, 1, 0x7f0000001000, 0, 2);   /* unknown: as is */
    ev[n++] = tfmt_heap(FMT_EV_MALLOC, 250000, 2, HEAP + 0x900, 300, 3); /* kept, leaked */
    ev[n++] = mk_transient(300000, 0, 1, 64, 2, 0, 0);                   /* all images' peak */
    ev[n++] = mk_transient(300000, 2, 3, 48, 1, 0, 0);
    ev[n++] = mk_transient(300000, 0, 1, 64, 2, 0, 1);
    ev[n++] = mk_transient(300000, 2, 3, 48, 1, 0, 1);
    ev[n++] = mk_transient(400000, 0, 2, 4000, 1, 1, 0); /* image 0's own peak */
    ev[n++] = mk_transient(400000, 0, 2, 4000, 1, 1, 1);
    ev[n++] = tfmt_heap(FMT_EV_MALLOC, 700000, 1, HEAP + 0x200, 101, 2); /* kept, realloc'd */
    ev[n++] = mk_batch(MS, 0, 1, 2, 64, 1, 32, 6);
    ev[n++] = mk_batch(MS, 0, 2, 1, 4000, 0, 0, 12);
    ev[n++] = mk_batch(MS, 2, 3, 1, 48, 1, 48, 6);
    ev[n] = tfmt_heap(FMT_EV_REALLOC, 1200000, 1, HEAP + 0x300, 202, 2); /* a kept block's */
    ev[n++].old_addr = HEAP + 0x200;
    ev[n++] = tfmt_heap(FMT_EV_REALLOC, 1300000, 0, HEAP + 0x400, 50, 1); /* pending's new, kept */
    ev[n++] = tfmt_heap(FMT_EV_FREE, 1500000, 0, HEAP + 0x100, 0, 1);
    ev[n++] = tfmt_heap(FMT_EV_FREE, 1600000, 1, HEAP + 0x300, 0, 2);
    ev[n++] = mk_batch(2 * MS, 0, 1, 1, 20, 1, 100, 5); /* the temporary: the kept 100 */
    ev[n++] = tfmt_heap(FMT_EV_FREE, 2100000, 0, HEAP + 0x400, 0, 1);
    ev[n++] = mk_batch(3 * MS, 0, 1, 0, 0, 1, 50, 6); /* a kept block's temporary alone */
    ev[n] = tfmt_mk(FMT_EV_PROCESS_EXIT, 3 * MS + 5000, 0);
    ev[n++].arg[1] = 1;
    return n;
}

static void write_events(struct tfmt *t, struct fmt_event *ev, size_t n)
{
    uint64_t frames[3] = {0x401000, 0x401100, 0x401200};
    uint32_t id;

    for (uint32_t s = 0; s < 3; s++) {
        assert_int_equal(fmt_writer_stack(t->w, s == 2 ? 1 : 0, &frames[s], 1, &id), 0);
        assert_int_equal(id, s + 1);
    }
    for (size_t i = 0; i < n; i++)
        assert_int_equal(fmt_writer_event(t->w, &ev[i]), 0);
}

static void check_info(struct fmt_reader *r, uint64_t period, uint64_t from)
{
    const struct fmt_trace_info *info = fmt_reader_info(r);

    assert_int_equal(info->version_minor, 8);
    assert_int_equal(info->aggregate_ns, period);
    assert_int_equal(info->aggregate_from_ns, from);
}

/* The golden trace's events read back as written, their reader fields as
 * the model says (the ends of kept blocks name them). */
static void check_golden(struct fmt_reader *r)
{
    struct fmt_event want[64];
    size_t n = golden_events(want);

    check_info(r, MS, 0);
    tfmt_read_expect(r, want, n);
}

static void test_agg_roundtrip(void **state)
{
    struct fmt_event ev[64];
    size_t n = golden_events(ev);
    struct tfmt t;

    (void)state;
    struct fmt_writer_options opt = agg_opt;
    opt.chunk_events = 8; /* three chunks: the reader finds the record in the first's DEFS */
    struct fmt_trace_info info = tfmt_info("agg\0--x", 7);
    info.aggregate_ns = MS; /* the period in the trace info */
    tfmt_start_info(&t, &opt, &info);
    write_events(&t, ev, n);
    tfmt_check_written(&t, "MS_FMT_WRITE_GOLDEN_1_8", check_golden);
}

static void test_agg_golden(void **state)
{
    (void)state;
    tfmt_check_path(MS_GOLDEN_DIR "/v1_8_aggregate.mscr", check_golden);
}

/* record --max-size: exact events, then the switch (arg[1] 1) at a cut;
 * the trace facts come from the AGGREGATE record, in a finished trace and
 * in one cut short after the switch's chunk (no index), and not before. */
static void write_switch(struct tfmt *t, int flush_before)
{
    struct fmt_event ev[] = {
        tfmt_heap(FMT_EV_MALLOC, 1000, 0, HEAP + 0x100, 100, 1),
        tfmt_heap(FMT_EV_FREE, 2000, 0, HEAP + 0x100, 0, 1),
        mk_aggregate(5 * MS, 100 * 1000, 1),
        mk_batch(5 * MS + 100000, 0, 1, 3, 300, 3, 300, 7),
    };

    write_events(t, ev, 2);
    if (flush_before)
        assert_int_equal(fmt_writer_flush(t->w), 0);
    for (size_t i = 2; i < 4; i++)
        assert_int_equal(fmt_writer_event(t->w, &ev[i]), 0);
}

static void test_agg_switch(void **state)
{
    struct tfmt t;
    struct fmt_reader *r;
    struct fmt_event ev;

    (void)state;
    tfmt_start_opt(&t, &agg_opt);
    write_switch(&t, 0);
    tfmt_finish(&t);
    r = tfmt_open(&t);
    check_info(r, 100000, 5 * MS);
    for (int i = 0; i < 3; i++)
        assert_int_equal(fmt_reader_next(r, &ev), 1);
    assert_int_equal(ev.kind, FMT_EV_AGGREGATE);
    assert_int_equal(ev.ts_ns, 5 * MS);
    assert_int_equal(ev.arg[1], 1);
    assert_int_equal(fmt_reader_next(r, &ev), 1);
    assert_int_equal(ev.kind, FMT_EV_HEAP_BATCH);
    assert_int_equal(ev.arg[0], 3);
    assert_int_equal(ev.arg[3], 7);
    assert_int_equal(fmt_reader_next(r, &ev), 0);
    fmt_reader_close(r);
    tfmt_close(&t);

    /* Cut short: the exact chunk and the switch's chunk flushed, no end. */
    tfmt_start_opt(&t, &agg_opt);
    write_switch(&t, 1);
    assert_int_equal(fmt_writer_flush(t.w), 0);
    r = tfmt_open(&t);
    assert_true(fmt_reader_incomplete(r));
    check_info(r, 100000, 5 * MS);
    fmt_reader_close(r);
    tfmt_close(&t);

    /* Cut before the switch's chunk: an exact trace with the bit. */
    tfmt_start_opt(&t, &agg_opt);
    write_switch(&t, 1);
    r = tfmt_open(&t);
    check_info(r, 0, 0);
    fmt_reader_close(r);
    tfmt_close(&t);
}

/* A trace with the bit and a batch row but no AGGREGATE event; with the
 * bit cleared (its header CRC made again). */
static uint8_t *batch_without_switch(size_t *size)
{
    struct fmt_event ev[] = {tfmt_heap(FMT_EV_MALLOC, 1000, 0, HEAP, 8, 1),
                             mk_batch(2000, 0, 1, 1, 8, 0, 0, 4)};
    struct tfmt t;
    uint8_t *p;

    tfmt_start_opt(&t, &agg_opt);
    write_events(&t, ev, 2);
    tfmt_finish(&t);
    p = tfmt_bytes(t.fd, size);
    tfmt_close(&t);
    return p;
}

static void expect_read_error(const uint8_t *p, size_t size, const char *what)
{
    int fd = tfmt_memfd(p, size);
    struct fmt_reader *r = NULL;
    struct fmt_event ev;
    char err[600] = "";
    int rc = fmt_reader_open_fd(&r, fd, "agg.trace", err, sizeof(err));

    if (!rc) {
        while ((rc = fmt_reader_next(r, &ev)) > 0)
            ;
        snprintf(err, sizeof(err), "%s", fmt_reader_error(r));
        fmt_reader_close(r);
    }
    assert_int_equal(rc, -EPROTO);
    if (!strstr(err, what))
        fail_msg("'%s' does not say '%s'", err, what);
    close(fd);
}

static void test_agg_refused(void **state)
{
    struct fmt_event batch = mk_batch(2000, 0, 0, 1, 8, 0, 0, 4);
    struct fmt_event agg = mk_aggregate(0, MS, 0);
    struct tfmt t;
    size_t size;
    uint8_t *p;

    (void)state;
    /* The writer: not without the option, nor a class past 64 bits, nor a
     * second AGGREGATE event, nor a period other than the META's. */
    tfmt_start_pack(&t, 0, 1000, 3);
    assert_int_equal(fmt_writer_event(t.w, &batch), -EINVAL);
    assert_int_equal(fmt_writer_event(t.w, &agg), -EINVAL);
    tfmt_finish(&t);
    tfmt_close(&t);
    tfmt_start_opt(&t, &agg_opt);
    batch.arg[3] = 65;
    assert_int_equal(fmt_writer_event(t.w, &batch), -EINVAL);
    assert_int_equal(fmt_writer_event(t.w, &agg), 0);
    assert_int_equal(fmt_writer_event(t.w, &agg), -EINVAL);
    tfmt_finish(&t);
    tfmt_close(&t);
    memset(&t, 0, sizeof(t));
    t.fd = memfd_create("trace", MFD_CLOEXEC);
    t.info.aggregate_ns = MS;
    assert_int_equal(fmt_writer_create(&t.w, t.fd, &t.info, &agg_opt), 0);
    agg.arg[0] = 2 * MS;
    assert_int_equal(fmt_writer_event(t.w, &agg), -EINVAL);
    tfmt_close(&t);
    t.fd = memfd_create("trace", MFD_CLOEXEC);
    struct fmt_writer *w = NULL;
    assert_int_equal(fmt_writer_create(&w, t.fd, &t.info, NULL), -EINVAL); /* no bit */
    close(t.fd);

    /* The reader: a batch outside an aggregated stretch; without the bit,
     * an unknown kind. */
    p = batch_without_switch(&size);
    expect_read_error(p, size, "aggregated event in an exact stretch");
    uint64_t features = fmt_get_le64(p + 16) & ~(uint64_t)FMT_FEAT_AGGREGATE;
    fmt_put_le64(p + 16, features);
    fmt_put_le16(p + 10, 7);
    fmt_put_le32(p + 60, fmt_crc32c(0, p, 60));
    expect_read_error(p, size, "unknown event kind");
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agg_roundtrip),
        cmocka_unit_test(test_agg_golden),
        cmocka_unit_test(test_agg_switch),
        cmocka_unit_test(test_agg_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
