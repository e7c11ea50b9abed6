/* SPDX-License-Identifier: MIT */
/* memscribe check's limits and decisions (ana_check.h): sizes, counts and
 * percentages parsed, growth decided exactly at the edge of a percentage,
 * unknown numbers failing. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/diff/ana_check.h"

static void test_measures(void **state)
{
    (void)state;
    assert_int_equal(ana_check_measure_parse("leaked-blocks", 13), ANA_CHECK_LEAKED_BLOCKS);
    assert_int_equal(ana_check_measure_parse("leaked-blocks=0", 6), ANA_CHECK_LEAKED);
    assert_int_equal(ana_check_measure_parse("heap", 4), -EINVAL);
    assert_string_equal(ana_check_measure_key(ANA_CHECK_PEAK_RSS), "peak_rss_bytes");
    assert_true(ana_check_measure_bytes(ANA_CHECK_PEAK));
    assert_false(ana_check_measure_bytes(ANA_CHECK_ALLOCATIONS));
}

static void test_parse_limit(void **state)
{
    struct ana_check_limit l;

    (void)state;
    assert_int_equal(ana_check_parse_limit(ANA_CHECK_LEAKED, false, "0", &l), 0);
    assert_int_equal(l.limit, 0);
    assert_int_equal(ana_check_parse_limit(ANA_CHECK_PEAK, false, "64K", &l), 0);
    assert_int_equal(l.limit, 65536);
    assert_int_equal(ana_check_parse_limit(ANA_CHECK_ALLOCATIONS, false, "64K", &l), -EINVAL);
    assert_int_equal(ana_check_parse_limit(ANA_CHECK_ALLOCATIONS, false, "17", &l), 0);
    assert_int_equal(l.limit, 17);
    assert_int_equal(ana_check_parse_limit(ANA_CHECK_PEAK, false, "5%", &l), -EINVAL);
    assert_int_equal(ana_check_parse_limit(ANA_CHECK_PEAK, false, "-1", &l), -EINVAL);
    assert_int_equal(ana_check_parse_limit(ANA_CHECK_PEAK, true, "2.5%", &l), 0);
    assert_true(l.percent && l.growth);
    assert_int_equal(l.limit, 2500000);
    assert_int_equal(ana_check_parse_limit(ANA_CHECK_PEAK, true, "0.000001%", &l), 0);
    assert_int_equal(l.limit, 1);
    assert_int_equal(ana_check_parse_limit(ANA_CHECK_PEAK, true, "0.0000001%", &l), -EINVAL);
    assert_int_equal(ana_check_parse_limit(ANA_CHECK_PEAK, true, "5.%", &l), -EINVAL);
    assert_int_equal(ana_check_parse_limit(ANA_CHECK_PEAK, true, "5%%", &l), -EINVAL);
    assert_int_equal(ana_check_parse_limit(ANA_CHECK_PEAK, true, "%", &l), -EINVAL);
}

static void test_parse_growth(void **state)
{
    struct ana_check_limit l[4];
    size_t nr = 0;
    const char *bad = NULL;

    (void)state;
    assert_int_equal(ana_check_parse_growth("peak=5%,leaked=0,allocations=10", l, 4, &nr, &bad), 0);
    assert_int_equal(nr, 3);
    assert_int_equal(l[0].measure, ANA_CHECK_PEAK);
    assert_true(l[0].percent);
    assert_int_equal(l[1].measure, ANA_CHECK_LEAKED);
    assert_false(l[1].percent);
    assert_int_equal(l[2].limit, 10);
    assert_int_equal(ana_check_parse_growth("peak=1,peak=2", l, 4, &nr, &bad), -E2BIG);
    nr = 0;
    assert_int_equal(ana_check_parse_growth("peak=1,heap=2", l, 4, &nr, &bad), -EINVAL);
    assert_string_equal(bad, "heap=2");
    nr = 0;
    assert_int_equal(ana_check_parse_growth("peak=1,", l, 4, &nr, &bad), -EINVAL);
    nr = 0;
    assert_int_equal(ana_check_parse_growth("peak", l, 4, &nr, &bad), -EINVAL);
}

static struct ana_check_values values(enum ana_check_measure m, uint64_t v)
{
    struct ana_check_values out = {0};

    out.v[m] = v;
    out.known[m] = true;
    return out;
}

static void test_eval(void **state)
{
    struct ana_check_limit l;
    struct ana_check_result r;
    struct ana_check_values run = values(ANA_CHECK_ALLOCATIONS, 23);
    struct ana_check_values base = values(ANA_CHECK_ALLOCATIONS, 22);

    (void)state;
    ana_check_parse_limit(ANA_CHECK_ALLOCATIONS, false, "23", &l);
    ana_check_eval(&l, &run, NULL, &r);
    assert_true(r.known && r.pass);
    ana_check_parse_limit(ANA_CHECK_ALLOCATIONS, false, "22", &l);
    ana_check_eval(&l, &run, NULL, &r);
    assert_false(r.pass);
    /* 1 of 22 is 4.5454...%: exact at the sixth decimal. */
    ana_check_parse_limit(ANA_CHECK_ALLOCATIONS, true, "4.545454%", &l);
    ana_check_eval(&l, &run, &base, &r);
    assert_false(r.pass);
    assert_int_equal(r.growth, 1);
    assert_int_equal(r.allowed, 0);
    ana_check_parse_limit(ANA_CHECK_ALLOCATIONS, true, "4.545455%", &l);
    ana_check_eval(&l, &run, &base, &r);
    assert_true(r.pass);
    assert_int_equal(r.allowed, 1);
    /* Shrinking passes; a base of 0 allows no growth under a percentage. */
    ana_check_parse_limit(ANA_CHECK_ALLOCATIONS, true, "0", &l);
    ana_check_eval(&l, &base, &run, &r);
    assert_true(r.pass);
    assert_int_equal(r.growth, -1);
    struct ana_check_values zero = values(ANA_CHECK_ALLOCATIONS, 0);
    ana_check_parse_limit(ANA_CHECK_ALLOCATIONS, true, "1000%", &l);
    ana_check_eval(&l, &run, &zero, &r);
    assert_false(r.pass);
    /* Large values do not overflow. */
    struct ana_check_values big = values(ANA_CHECK_PEAK, UINT64_MAX);
    struct ana_check_values big_base = values(ANA_CHECK_PEAK, UINT64_MAX / 2);
    ana_check_parse_limit(ANA_CHECK_PEAK, true, "100%", &l);
    ana_check_eval(&l, &big, &big_base, &r);
    assert_false(r.pass); /* grew by base + 1 */
    ana_check_parse_limit(ANA_CHECK_PEAK, true, "100.000001%", &l);
    ana_check_eval(&l, &big, &big_base, &r);
    assert_true(r.pass);
}

static void test_unknown(void **state)
{
    struct ana_check_limit l;
    struct ana_check_result r;
    struct ana_check_values run = values(ANA_CHECK_PEAK, 10);

    (void)state;
    ana_check_parse_limit(ANA_CHECK_PEAK_RSS, false, "1G", &l);
    ana_check_eval(&l, &run, NULL, &r);
    assert_false(r.known);
    assert_false(r.pass);
    ana_check_parse_limit(ANA_CHECK_PEAK, true, "0", &l);
    struct ana_check_values none = {0};
    ana_check_eval(&l, &run, &none, &r);
    assert_false(r.known || r.pass);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_measures),     cmocka_unit_test(test_parse_limit),
        cmocka_unit_test(test_parse_growth), cmocka_unit_test(test_eval),
        cmocka_unit_test(test_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
