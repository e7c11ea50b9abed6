/* SPDX-License-Identifier: MIT */
/* Stacks left for later (FMT_OPEN_STACKS_LATER) and let go by image
 * (fmt_reader_forget_image), on every golden trace: each stack reads the
 * same as when the open decodes them all, whatever order it is asked in;
 * an image let go gives -ESTALE for its stacks and nothing else changes;
 * and the events read the same. A stack's image is known without decoding
 * it (fmt_reader_stack_image), let go or not, and an image may be let go
 * by that table before any chunk is read. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "memscribe/trace.h"

static const char *const goldens[] = {
    "v1",         "v1_1", "v1_2_windows", "v1_3", "v1_3_sampled",   "v1_3_wine",    "v1_4",
    "v1_4_pools", "v1_5", "v1_6_reach",   "v1_7", "v1_8_aggregate", "v1_9_segment",
};

static struct fmt_reader *open_golden(const char *name, unsigned flags)
{
    char path[512], err[512];
    struct fmt_reader *r;

    snprintf(path, sizeof(path), "%s/%s.mscr", MS_GOLDEN_DIR, name);
    int rc = fmt_reader_open_flags(&r, path, flags, err, sizeof(err));
    if (rc)
        fail_msg("%s", err);
    return r;
}

static unsigned nr_gone; /* stacks found let go */

/* Stack id of both readers reads the same (or b's is let go: -ESTALE). */
static void same_stack(struct fmt_reader *a, struct fmt_reader *b, uint32_t id, uint32_t gone)
{
    uint64_t fa[256], fb[256];
    uint32_t ia = 0, ib = 0;
    int na = fmt_reader_stack(a, id, &ia, fa, 256);
    int nb = fmt_reader_stack(b, id, &ib, fb, 256);

    if (na >= 0 && ia == gone) {
        assert_int_equal(nb, -ESTALE);
        nr_gone++;
        return;
    }
    assert_int_equal(na, nb);
    if (na > 0) {
        assert_int_equal(ia, ib);
        assert_memory_equal(fa, fb, (size_t)(na < 256 ? na : 256) * sizeof(*fa));
    }
}

static void test_later_reads_alike(void **state)
{
    (void)state;
    for (size_t g = 0; g < sizeof(goldens) / sizeof(goldens[0]); g++) {
        struct fmt_reader *now = open_golden(goldens[g], 0);
        struct fmt_reader *later = open_golden(goldens[g], FMT_OPEN_STACKS_LATER);
        struct fmt_trace_counts c, cl;
        fmt_reader_counts(now, &c);
        fmt_reader_counts(later, &cl);
        assert_int_equal(c.nr_stacks, cl.nr_stacks);
        /* The last first (it decodes them all), then every one. */
        for (uint32_t id = c.nr_stacks + 1; id-- > 0;)
            same_stack(now, later, id, UINT32_MAX);
        fmt_reader_close(later);
        /* In order, with one image let go half way through the events. */
        later = open_golden(goldens[g], FMT_OPEN_STACKS_LATER);
        struct fmt_event e1, e2;
        uint32_t gone = UINT32_MAX;
        uint64_t n = 0;
        int r1, r2;
        while ((r1 = fmt_reader_next(now, &e1)) > 0) {
            r2 = fmt_reader_next(later, &e2);
            assert_int_equal(r2, 1);
            assert_int_equal(e1.serial, e2.serial);
            assert_int_equal(e1.stack, e2.stack);
            assert_int_equal(e1.ts_ns, e2.ts_ns);
            if (++n == c.nr_events / 2 && e1.stack) {
                uint32_t image;
                assert_true(fmt_reader_stack(later, e1.stack, &image, NULL, 0) >= 0);
                assert_int_equal(fmt_reader_forget_image(later, image), 0);
                gone = image;
            }
        }
        assert_int_equal(r1, 0);
        assert_int_equal(fmt_reader_next(later, &e2), 0);
        for (uint32_t id = 0; id <= c.nr_stacks; id++)
            same_stack(now, later, id, gone);
        assert_int_equal(fmt_reader_load_stacks(later), 0);
        fmt_reader_close(now);
        fmt_reader_close(later);
    }
    assert_true(nr_gone > 0); /* some golden trace let an image's stacks go */
}

/* Each stack's image from the table equals the decoded node's. */
static void same_images(struct fmt_reader *now, struct fmt_reader *later, uint32_t nr_stacks)
{
    uint32_t ia, ib;

    for (uint32_t id = nr_stacks; id > 0; id--) {
        assert_int_equal(fmt_reader_stack(now, id, &ia, NULL, 0) >= 0, 1);
        assert_int_equal(fmt_reader_stack_image(later, id, &ib), 0);
        assert_int_equal(ia, ib);
    }
    assert_int_equal(fmt_reader_stack_image(later, 0, &ib), -EINVAL);
    assert_int_equal(fmt_reader_stack_image(later, nr_stacks + 1, &ib), -EINVAL);
}

static void test_stack_images(void **state)
{
    (void)state;
    for (size_t g = 0; g < sizeof(goldens) / sizeof(goldens[0]); g++) {
        struct fmt_reader *now = open_golden(goldens[g], 0);
        struct fmt_reader *later = open_golden(goldens[g], FMT_OPEN_STACKS_LATER);
        struct fmt_trace_counts c;
        uint32_t gone;
        fmt_reader_counts(now, &c);
        if (!c.nr_stacks) {
            fmt_reader_close(now);
            fmt_reader_close(later);
            continue;
        }
        /* Asked last first, before any stack is decoded: from the table. */
        same_images(now, later, c.nr_stacks);
        /* The first stack's image let go, no chunk read: its nodes were
         * decoded up to its last, the others read the same. */
        assert_int_equal(fmt_reader_stack_image(later, 1, &gone), 0);
        assert_int_equal(fmt_reader_forget_image(later, gone), 0);
        for (uint32_t id = 0; id <= c.nr_stacks; id++)
            same_stack(now, later, id, gone);
        same_images(now, later, c.nr_stacks);
        fmt_reader_close(now);
        fmt_reader_close(later);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_later_reads_alike),
        cmocka_unit_test(test_stack_images),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
