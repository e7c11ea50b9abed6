/* SPDX-License-Identifier: MIT */
/* Which scan is an image's exit's (ana_reach_at_exit): its last scan, of
 * an image that ended but was not killed by a signal, at most 100 ms
 * before the end the recorder wrote (which an RSS sample or an event of
 * the exiting program can put well after the scan began: a 1 ms slack
 * failed on a loaded machine, e2e.rec_reach_attach). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "analysis/model/ana_reach.h"
#include "test_fmt_util.h"

#define MS 1000000ull

static const struct fmt_writer_options reach_opt = {
    .time_unit_ns = 1000, .time_pack = 1, .free_ranks = 1, .reach = 1};

/* A scan of image (thread 0: image 0, thread 2: image 1) at ts. */
static void scan(struct tfmt *t, uint32_t image, uint64_t ts)
{
    struct fmt_writer_reach rr = {.image = image, .ts_ns = ts, .nr_threads = 1};

    assert_int_equal(fmt_writer_reach(t->w, &rr), 0);
}

/* Image of thread ends at ts with wait status status. */
static void end(struct tfmt *t, uint32_t thread, uint64_t ts, int status)
{
    struct fmt_event ev = tfmt_mk(FMT_EV_PROCESS_EXIT, ts, thread);

    ev.arg[0] = (uint64_t)(uint32_t)status;
    ev.arg[1] = 1;
    assert_int_equal(fmt_writer_event(t->w, &ev), 0);
}

static void start(struct tfmt *t, uint32_t thread, uint64_t ts)
{
    struct fmt_event ev = tfmt_mk(FMT_EV_PROCESS_START, ts, thread);

    ev.arg[0] = 1;
    ev.arg[1] = FMT_START_INITIAL;
    assert_int_equal(fmt_writer_event(t->w, &ev), 0);
}

static void test_at_exit(void **state)
{
    struct tfmt t;
    struct fmt_reader *r;

    (void)state;
    tfmt_start_opt(&t, &reach_opt);
    start(&t, 0, 1000);
    start(&t, 2, 1000);
    /* Image 0: a scan on request, then its exit's, 5 ms before the end
     * its events put after it. Image 1: a scan on request, then killed
     * 5 ms later (no exit scan: SIGKILL). */
    scan(&t, 0, 10 * MS);
    scan(&t, 1, 10 * MS);
    scan(&t, 0, 20 * MS);
    end(&t, 0, 25 * MS, 0);
    end(&t, 2, 15 * MS, SIGKILL);
    tfmt_finish(&t);
    r = tfmt_open(&t);
    assert_int_equal(fmt_reader_nr_reach(r), 3);
    assert_false(ana_reach_at_exit(r, fmt_reader_reach(r, 0))); /* on request: not the last */
    assert_false(ana_reach_at_exit(r, fmt_reader_reach(r, 1))); /* killed */
    assert_true(ana_reach_at_exit(r, fmt_reader_reach(r, 2)));  /* the exit's, 5 ms before */
    fmt_reader_close(r);
    tfmt_close(&t);
}

/* A last scan long before a normal end is not the exit's. */
static void test_long_before(void **state)
{
    struct tfmt t;
    struct fmt_reader *r;

    (void)state;
    tfmt_start_opt(&t, &reach_opt);
    start(&t, 0, 1000);
    scan(&t, 0, 10 * MS);
    end(&t, 0, 500 * MS, 0);
    tfmt_finish(&t);
    r = tfmt_open(&t);
    assert_false(ana_reach_at_exit(r, fmt_reader_reach(r, 0)));
    fmt_reader_close(r);
    tfmt_close(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_at_exit),
        cmocka_unit_test(test_long_before),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
