/* SPDX-License-Identifier: MIT */
/* util's primitives: arrays grow by doubling from the first size (or to
 * what is needed, if more), keep their elements, zero the new ones when
 * asked and refuse sizes that overflow; the binary search finds the first
 * key above x at every position, with duplicates, at any element size and
 * key offset; a partial sort's first k elements are a full sort's; LEB128
 * decodes DWARF's examples, drops bits past 64 and says when it is cut. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_xorshift.h"
#include "util/util_array.h"
#include "util/util_duration.h"
#include "util/util_leb128.h"
#include "util/util_search.h"
#include "util/util_sort.h"

static void test_grow(void **state)
{
    uint32_t *v = NULL;
    uint32_t cap = 0;

    (void)state;
    /* Nothing to do when the capacity holds it (need 0: cap itself, as a
     * literal 0 would make the comparison a constant). */
    assert_int_equal(UTIL_ARRAY_RESERVE(v, cap, cap, 8), 0);
    assert_null(v);
    assert_int_equal(cap, 0);
    /* The first size, then doubling. */
    assert_int_equal(UTIL_ARRAY_RESERVE(v, cap, 1, 8), 0);
    assert_non_null(v);
    assert_int_equal(cap, 8);
    for (uint32_t i = 0; i < 8; i++)
        v[i] = i * 3;
    assert_int_equal(UTIL_ARRAY_RESERVE(v, cap, 8, 8), 0);
    assert_int_equal(cap, 8);
    assert_int_equal(UTIL_ARRAY_RESERVE(v, cap, 9, 8), 0);
    assert_int_equal(cap, 16);
    /* More than twice: exactly what is needed. */
    assert_int_equal(UTIL_ARRAY_RESERVE(v, cap, 100, 8), 0);
    assert_int_equal(cap, 100);
    for (uint32_t i = 0; i < 8; i++)
        assert_int_equal(v[i], i * 3);
    free(v);

    /* A first size below what is needed: what is needed. */
    uint64_t *w = NULL;
    size_t wcap = 0;
    assert_int_equal(UTIL_ARRAY_RESERVE(w, wcap, 5, 1), 0);
    assert_int_equal(wcap, 5);
    free(w);
}

static void test_grow_zero(void **state)
{
    uint64_t *v = NULL;
    uint32_t nr = 0;

    (void)state;
    assert_int_equal(UTIL_ARRAY_RESERVE_ZERO(v, nr, 3, 1), 0);
    assert_int_equal(nr, 3);
    for (uint32_t i = 0; i < nr; i++) {
        assert_int_equal(v[i], 0);
        v[i] = ~0ull;
    }
    assert_int_equal(UTIL_ARRAY_RESERVE_ZERO(v, nr, 4, 1), 0);
    assert_int_equal(nr, 6);
    for (uint32_t i = 0; i < 3; i++)
        assert_true(v[i] == ~0ull);
    for (uint32_t i = 3; i < 6; i++)
        assert_int_equal(v[i], 0);
    free(v);
}

static void test_grow_overflow(void **state)
{
    uint64_t *v = NULL;
    size_t cap = 0;

    (void)state;
    /* need * size overflows: refused, nothing changed. */
    assert_int_equal(UTIL_ARRAY_RESERVE(v, cap, SIZE_MAX / 4, 1), -ENOMEM);
    assert_null(v);
    assert_int_equal(cap, 0);
    /* Doubling would overflow. */
    size_t c = SIZE_MAX / 2 + 1;
    assert_null(util_array_grow(NULL, 1, &c, c + 1, 1, SIZE_MAX, 0));
    assert_true(c == SIZE_MAX / 2 + 1);
}

/* A capacity of a narrow type: doubling stops at what the type holds, and
 * a need beyond it is refused. */
static void test_grow_narrow_cap(void **state)
{
    uint8_t *v = NULL;
    uint8_t cap = 0;

    (void)state;
    assert_int_equal(UTIL_ARRAY_RESERVE_ZERO(v, cap, 200, 16), 0);
    assert_int_equal(cap, 200);
    assert_int_equal(UTIL_ARRAY_RESERVE_ZERO(v, cap, 201, 16), 0);
    assert_int_equal(cap, 255); /* not 400, which a uint8_t cannot hold */
    assert_int_equal(v[254], 0);
    assert_int_equal(UTIL_ARRAY_RESERVE_ZERO(v, cap, 256, 16), -ENOMEM);
    assert_int_equal(cap, 255);
    free(v);
}

struct piece {
    uint32_t tag;
    uint64_t lo, hi;
};

static void test_search(void **state)
{
    uint64_t keys[] = {10, 20, 20, 20, 30, 50};
    struct piece p[4] = {{1, 0, 10}, {2, 10, 15}, {3, 20, 40}, {4, 40, 41}};

    (void)state;
    assert_int_equal(util_search_above(keys, 0, 8, 0, 5), 0);
    assert_int_equal(util_search_above(keys, 6, 8, 0, 0), 0);
    assert_int_equal(util_search_above(keys, 6, 8, 0, 9), 0);
    assert_int_equal(util_search_above(keys, 6, 8, 0, 10), 1);
    assert_int_equal(util_search_above(keys, 6, 8, 0, 19), 1);
    assert_int_equal(util_search_above(keys, 6, 8, 0, 20), 4);
    assert_int_equal(util_search_above(keys, 6, 8, 0, 49), 5);
    assert_int_equal(util_search_above(keys, 6, 8, 0, 50), 6);
    assert_int_equal(util_search_above(keys, 6, 8, 0, UINT64_MAX), 6);
    /* Keys inside larger elements: the first piece whose end is above x,
     * and the last piece starting at or before x. */
    size_t size = sizeof(p[0]), hi = offsetof(struct piece, hi), lo = offsetof(struct piece, lo);
    assert_int_equal(util_search_above(p, 4, size, hi, 9), 0);
    assert_int_equal(util_search_above(p, 4, size, hi, 10), 1);
    assert_int_equal(util_search_above(p, 4, size, hi, 17), 2);
    assert_int_equal(util_search_above(p, 4, size, hi, 41), 4);
    assert_int_equal(util_search_above(p, 4, size, lo, 12), 2);
    assert_int_equal(p[util_search_above(p, 4, size, lo, 39) - 1].tag, 3);
    assert_int_equal(p[util_search_above(p, 4, size, lo, 40) - 1].tag, 4);
}

/* Pairs ordered by value down, then by index up: a total order, as the
 * tables' rankings are. */
struct ranked_pair {
    uint32_t value, index;
};

static int by_value_down(const void *x, const void *y, void *arg)
{
    const struct ranked_pair *a = x, *b = y;

    (void)arg;
    if (a->value != b->value)
        return a->value < b->value ? 1 : -1;
    return (a->index > b->index) - (a->index < b->index);
}

/* The first k of a partial sort are those of a full sort, for every k,
 * on values with many ties and on sorted and reversed input. */
static void test_sort_first(void **state)
{
    enum { N = 1000 };
    static struct ranked_pair full[N], part[N];
    uint64_t x = 88172645463325252ull;

    (void)state;
    for (int shape = 0; shape < 3; shape++) {
        for (uint32_t i = 0; i < N; i++) {
            test_xorshift64(&x);
            uint32_t v = shape == 0 ? (uint32_t)(x % 50) : shape == 1 ? i : N - i;
            full[i] = (struct ranked_pair){v, i};
        }
        memcpy(part, full, sizeof(full));
        util_sort_first(full, N, sizeof(full[0]), 0, by_value_down, NULL);
        for (size_t k = 1; k <= N; k += k < 20 ? 1 : 97) {
            struct ranked_pair v[N];
            memcpy(v, part, sizeof(v));
            util_sort_first(v, N, sizeof(v[0]), k, by_value_down, NULL);
            assert_memory_equal(v, full, k * sizeof(v[0]));
        }
    }
    /* Nothing to sort, or one. */
    util_sort_first(NULL, 0, sizeof(full[0]), 10, by_value_down, NULL);
    util_sort_first(full, 1, sizeof(full[0]), 10, by_value_down, NULL);
}

/* The sort in place orders as a full sort does (a total order), on
 * values with many ties and on sorted and reversed input, of any size. */
static void test_sort_in_place(void **state)
{
    enum { N = 1000 };
    static struct ranked_pair full[N], heap[N];
    uint64_t x = 88172645463325252ull;

    (void)state;
    for (int shape = 0; shape < 3; shape++) {
        for (size_t n = 0; n <= N; n += n < 20 ? 1 : 97) {
            for (uint32_t i = 0; i < n; i++) {
                test_xorshift64(&x);
                uint32_t v = shape == 0 ? (uint32_t)(x % 50) : shape == 1 ? i : N - i;
                full[i] = heap[i] = (struct ranked_pair){v, i};
            }
            if (n)
                qsort_r(full, n, sizeof(full[0]), by_value_down, NULL);
            util_sort_in_place(heap, n, sizeof(heap[0]), by_value_down, NULL);
            assert_memory_equal(heap, full, n * sizeof(heap[0]));
        }
    }
}

/* DWARF 5's examples (figures 7.6 and 7.7), one after the other in a
 * buffer, as CFI holds them. */
static void test_leb128(void **state)
{
    static const uint8_t u[] = {0x02, 0x7f, 0x80, 0x01, 0x81, 0x01, 0x82, 0x01, 0xb9, 0x64};
    static const uint64_t uv[] = {2, 127, 128, 129, 130, 12857};
    static const uint8_t sb[] = {0x02, 0x7e, 0xff, 0x00, 0x81, 0x7f, 0x80,
                                 0x01, 0x80, 0x7f, 0x81, 0x01, 0xff, 0x7e};
    static const int64_t sv[] = {2, -2, 127, -127, 128, -128, 129, -129};
    const uint8_t *p = u;
    uint64_t v;
    int64_t w;

    (void)state;
    for (size_t i = 0; i < sizeof(uv) / sizeof(uv[0]); i++) {
        assert_int_equal(util_uleb128(&p, u + sizeof(u), &v), 1);
        assert_int_equal(v, uv[i]);
    }
    assert_ptr_equal(p, u + sizeof(u));
    assert_int_equal(util_uleb128(&p, u + sizeof(u), &v), 0); /* nothing left */
    p = sb;
    for (size_t i = 0; i < sizeof(sv) / sizeof(sv[0]); i++) {
        assert_int_equal(util_sleb128(&p, sb + sizeof(sb), &w), 1);
        assert_int_equal(w, sv[i]);
    }
    assert_ptr_equal(p, sb + sizeof(sb));

    /* Cut in its middle: the bits read, the end reached, 0. */
    p = u + 2;
    assert_int_equal(util_uleb128(&p, u + 3, &v), 0);
    assert_int_equal(v, 0);
    assert_ptr_equal(p, u + 3);

    /* UINT64_MAX and INT64_MIN take ten bytes; an eleventh's bits are dropped. */
    static const uint8_t big[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    static const uint8_t min[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f};
    static const uint8_t over[] = {0x81, 0x80, 0x80, 0x80, 0x80, 0x80,
                                   0x80, 0x80, 0x80, 0x80, 0x7f};
    p = big;
    assert_int_equal(util_uleb128(&p, big + sizeof(big), &v), 1);
    assert_true(v == UINT64_MAX);
    p = min;
    assert_int_equal(util_sleb128(&p, min + sizeof(min), &w), 1);
    assert_true(w == INT64_MIN);
    p = over;
    assert_int_equal(util_uleb128(&p, over + sizeof(over), &v), 1);
    assert_int_equal(v, 1);
    assert_ptr_equal(p, over + sizeof(over));
}

/* Each text, what util_duration_parse returns and, where it takes the text,
 * the nanoseconds it gives. */
static void test_duration(void **state)
{
    static const struct {
        const char *text;
        int rc;
        uint64_t ns;
    } cases[] = {
        {"1.5s", 0, 1500000000},
        {"250ms", 0, 250000000},
        {"0.000000001s", 0, 1},
        {"2", 0, 2000000000},
        {"40us", 0, 40000},
        {"1.25us", 0, 1250},
        {"123456789ns", 0, 123456789},
        {"1.5min", 0, 90000000000ull},
        {"18446744073709551615ns", 0, UINT64_MAX},
        {"18446744073709551616ns", -ERANGE, 0},
        {"1.0000000001s", -EINVAL, 0},
        {"0.5ns", -EINVAL, 0},
        {"1.5xs", -EINVAL, 0},
        {"", -EINVAL, 0},
        {".s", -EINVAL, 0},
        {"-1s", -EINVAL, 0},
        {"3\xc2\xb5s", 0, 3000}, /* µs */
        {"2h", 0, 7200000000000ull},
        {"0", 0, 0},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t ns = 42; /* no case wants 42: the parse must write it */
        int rc = util_duration_parse(cases[i].text, &ns);

        if (rc != cases[i].rc || (rc == 0 && ns != cases[i].ns))
            fail_msg("'%s': %d, %" PRIu64 " ns; want %d, %" PRIu64 " ns", cases[i].text, rc, ns,
                     cases[i].rc, cases[i].ns);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow),          cmocka_unit_test(test_grow_zero),
        cmocka_unit_test(test_grow_overflow), cmocka_unit_test(test_grow_narrow_cap),
        cmocka_unit_test(test_search),        cmocka_unit_test(test_sort_first),
        cmocka_unit_test(test_sort_in_place), cmocka_unit_test(test_leb128),
        cmocka_unit_test(test_duration),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
