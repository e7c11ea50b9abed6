/* SPDX-License-Identifier: MIT */
/* Old traces stay readable: tests/golden/v1.mscr, written by format 1.0
 * from tfmt_every_kind() with 3 events per chunk, must read back exactly.
 * (Its dump is compared with tests/golden/v1.dump by tests/e2e/dump_golden.sh.)
 * MS_FMT_WRITE_GOLDEN=PATH writes the file anew; do that only for a new
 * format version, into a new file, and keep the old one. */
#include <errno.h>
#include <fcntl.h>
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

#define GOLDEN_CHUNK_EVENTS 3

/* The events, with their stacks interned on w (if given) the way they were
 * when the golden file was written: ids 1..5 become 2-frame stacks. */
static size_t golden_events(struct fmt_writer *w, struct fmt_event *ev, size_t max)
{
    size_t n = tfmt_every_kind(ev, max);

    for (size_t i = 0; i < n; i++) {
        if (!ev[i].stack)
            continue;
        uint64_t frames[2] = {0x7f0000001000ull + ev[i].stack * 0x10, 0x7f0000002000ull};
        uint32_t id = 0;
        if (w)
            assert_int_equal(fmt_writer_stack(w, ev[i].image, frames, 2, &id), 0);
        ev[i].stack = id;
    }
    return n;
}

static void write_golden(const char *path)
{
    struct tfmt t;
    struct fmt_event ev[64];

    tfmt_start(&t, GOLDEN_CHUNK_EVENTS);
    size_t n = golden_events(t.w, ev, 64);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(fmt_writer_event(t.w, &ev[i]), 0);
    tfmt_finish(&t);
    size_t size;
    uint8_t *p = tfmt_bytes(t.fd, &size);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
    free(p);
    tfmt_close(&t);
}

static void test_golden_v1(void **state)
{
    struct fmt_reader *r;
    char err[600];
    struct fmt_event want[64], got;
    struct tmodel m;

    (void)state;
    if (getenv("MS_FMT_WRITE_GOLDEN")) {
        write_golden(getenv("MS_FMT_WRITE_GOLDEN"));
        skip();
    }
    int rc = fmt_reader_open(&r, MS_GOLDEN_DIR "/v1.mscr", err, sizeof(err));
    if (rc)
        fail_msg("%s", err);

    /* Stack ids as the writer gave them: intern on a scratch writer. */
    struct tfmt t;
    tfmt_start(&t, GOLDEN_CHUNK_EVENTS);
    size_t n = golden_events(t.w, want, 64);
    tfmt_close(&t);

    const struct fmt_trace_info *info = fmt_reader_info(r);
    assert_int_equal(info->version_major, 1);
    assert_int_equal(info->version_minor, 0);
    assert_int_equal(info->start_realtime_ns, 1700000000123456789ull);
    assert_int_equal(info->recorder_pid, 4242);
    assert_string_equal(info->hostname, "testhost");
    assert_false(fmt_reader_incomplete(r));
    struct fmt_trace_counts c;
    fmt_reader_counts(r, &c);
    assert_int_equal(c.nr_events, n);
    assert_int_equal(c.nr_chunks, (n + GOLDEN_CHUNK_EVENTS - 1) / GOLDEN_CHUNK_EVENTS);
    assert_int_equal(c.nr_dropped, 17);
    assert_int_equal(c.nr_images, 2);
    assert_int_equal(c.nr_modules, 1);

    tmodel_init(&m);
    for (size_t i = 0; i < n; i++) {
        tmodel_apply(&m, &want[i]);
        assert_int_equal(fmt_reader_next(r, &got), 1);
        tfmt_assert_event(&want[i], &got, i);
    }
    assert_int_equal(fmt_reader_next(r, &got), 0);
    uint64_t frames[4];
    uint32_t image;
    assert_int_equal(fmt_reader_stack(r, want[3].stack, &image, frames, 4), 2);
    assert_int_equal(frames[0], 0x7f0000001010ull);
    assert_int_equal(frames[1], 0x7f0000002000ull);
    tmodel_free(&m);
    fmt_reader_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_v1),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
