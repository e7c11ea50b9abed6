/* SPDX-License-Identifier: MIT */
/* The format's primitives: CRC32C (instruction and table agree, known
 * values), varints (every length, overlong and truncated ones refused),
 * zigzag, split varints; the writer's helpers whose results must not
 * depend on how they are computed: the chunk's stack deltas sorted, ranks
 * counted over long spans, ranks of recently ended addresses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "format/fmt_buf_internal.h"
#include "format/fmt_crc_internal.h"
#include "format/fmt_rank_internal.h"
#include "format/fmt_recent_internal.h"
#include "format/fmt_wdelta_internal.h"
#include "memscribe/trace.h"
#include "test_xorshift.h"

static void test_crc32c(void **state)
{
    uint8_t buf[1000];

    (void)state;
    /* The check value of CRC-32C (RFC 3720, and every CRC catalogue). */
    assert_int_equal(fmt_crc32c(0, "123456789", 9), 0xe3069283u);
    assert_int_equal(fmt_crc32c_table(0, "123456789", 9), 0xe3069283u);
    assert_int_equal(fmt_crc32c(0, "", 0), 0);
    /* 32 bytes of zeros: RFC 3720 B.4. */
    memset(buf, 0, 32);
    assert_int_equal(fmt_crc32c(0, buf, 32), 0x8a9136aau);
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)(i * 7 + 3);
    /* Every length and alignment: both paths agree, and pieces chain. */
    for (size_t off = 0; off < 8; off++) {
        for (size_t len = 0; len + off <= 300; len++) {
            uint32_t whole = fmt_crc32c(0, buf + off, len);
            assert_int_equal(whole, fmt_crc32c_table(0, buf + off, len));
            size_t cut = len / 3;
            uint32_t part = fmt_crc32c(0, buf + off, cut);
            assert_int_equal(fmt_crc32c(part, buf + off + cut, len - cut), whole);
        }
    }
}

static uint64_t read_one(const uint8_t *p, size_t n, int *bad)
{
    struct fmt_cur c;

    fmt_cur_init(&c, p, n);
    uint64_t v = fmt_cur_varint(&c);
    *bad = c.bad || fmt_cur_left(&c);
    return v;
}

static void test_varints(void **state)
{
    static const uint64_t values[] = {
        0,        1,          127,        128,        300,        16383,          16384,
        1u << 21, UINT32_MAX, 1ull << 35, 1ull << 56, 1ull << 63, UINT64_MAX - 1, UINT64_MAX};
    uint8_t mem[16];
    int bad;

    (void)state;
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        struct fmt_buf b = {mem, 0, sizeof(mem)};
        fmt_buf_put_varint(&b, values[i]);
        size_t want_len = 1;
        for (uint64_t v = values[i]; v >= 0x80; v >>= 7)
            want_len++;
        assert_int_equal(b.len, want_len);
        assert_true(b.len <= FMT_VARINT_MAX);
        assert_int_equal(read_one(mem, b.len, &bad), values[i]);
        assert_false(bad);
        /* Cut short: refused. */
        if (b.len > 1) {
            read_one(mem, b.len - 1, &bad);
            assert_true(bad);
        }
    }
    /* Eleven bytes, or a tenth byte above 1: refused, not wrapped. */
    static const uint8_t longer[11] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                       0x80, 0x80, 0x80, 0x80, 0x00};
    read_one(longer, sizeof(longer), &bad);
    assert_true(bad);
    static const uint8_t over[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    read_one(over, sizeof(over), &bad);
    assert_true(bad);
    /* A bad cursor stays bad and reads zeros. */
    struct fmt_cur c;
    fmt_cur_init(&c, over, 3);
    assert_int_equal(fmt_cur_varint(&c), 0);
    assert_true(c.bad);
    assert_int_equal(fmt_cur_u8(&c), 0);
    assert_null(fmt_cur_bytes(&c, 1));
    assert_true(c.bad);
    /* u32 refuses what does not fit. */
    uint8_t big[8];
    struct fmt_buf b = {big, 0, sizeof(big)};
    fmt_buf_put_varint(&b, 1ull << 32);
    fmt_cur_init(&c, big, b.len);
    assert_int_equal(fmt_cur_u32(&c), 0);
    assert_true(c.bad);
}

static void test_zigzag_and_split(void **state)
{
    static const int64_t values[] = {0, -1, 1, -2, 2, 63, -64, 64, INT64_MAX, INT64_MIN};
    static const uint64_t encoded[] = {0, 1, 2, 3, 4, 126, 127, 128, UINT64_MAX - 1, UINT64_MAX};
    uint8_t lo[64], hi[128];

    (void)state;
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        assert_int_equal(fmt_zigzag(values[i]), encoded[i]);
        assert_int_equal(fmt_unzigzag(encoded[i]), values[i]);
    }
    struct fmt_buf bl = {lo, 0, sizeof(lo)}, bh = {hi, 0, sizeof(hi)};
    static const uint64_t split[] = {0, 127, 128, 255, 512, 1ull << 40, UINT64_MAX};
    for (size_t i = 0; i < sizeof(split) / sizeof(split[0]); i++)
        fmt_buf_put_split(&bl, &bh, split[i]);
    assert_int_equal(bl.len, 7);   /* one byte each in the low plane */
    assert_int_equal(lo[1], 127);  /* small values whole */
    assert_int_equal(lo[2], 0x80); /* 128: low 7 bits 0, rest elsewhere */
    struct fmt_cur cl, ch;
    fmt_cur_init(&cl, lo, bl.len);
    fmt_cur_init(&ch, hi, bh.len);
    for (size_t i = 0; i < sizeof(split) / sizeof(split[0]); i++)
        assert_int_equal(fmt_cur_split(&cl, &ch), split[i]);
    assert_false(cl.bad || ch.bad);
    assert_int_equal(fmt_cur_left(&cl) + fmt_cur_left(&ch), 0);
}

/* Origin names, the one table dump, vmem, frag and the SQLite export use:
 * every origin below FMT_NR_ORIGINS has one, nothing beyond. */
static void test_origin_names(void **state)
{
    (void)state;
    assert_string_equal(fmt_origin_name(FMT_ORIGIN_CALL), "call");
    assert_string_equal(fmt_origin_name(FMT_ORIGIN_LIBC), "libc");
    assert_string_equal(fmt_origin_name(FMT_ORIGIN_LOADER), "loader");
    assert_string_equal(fmt_origin_name(FMT_ORIGIN_THREAD), "thread");
    assert_string_equal(fmt_origin_name(FMT_ORIGIN_SNAPSHOT), "snapshot");
    assert_null(fmt_origin_name(FMT_NR_ORIGINS));
    assert_null(fmt_origin_name(255));
}

static uint64_t prims_rng = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
    return test_xorshift64(&prims_rng);
}

/* Distinct stacks in a scrambled order, below 2^bits (32: any): sorted,
 * each with its own sums, both below the radix sort's threshold and above
 * it, with one, two and three radix passes. */
static void test_wdelta_sort(void **state)
{
    static const uint32_t sizes[] = {5, 255, 256, 3000, 70000};
    static const unsigned bits[] = {9, 11, 20, 32};

    (void)state;
    for (size_t a = 0; a < sizeof(sizes) / sizeof(sizes[0]); a++)
        for (size_t b = 0; b < sizeof(bits) / sizeof(bits[0]); b++) {
            uint64_t range = (uint64_t)1 << bits[b];
            uint32_t n = sizes[a] < range ? sizes[a] : (uint32_t)range;
            struct fmt_wdeltas d = {0};

            for (uint32_t i = 0; i < n; i++) {
                /* an odd multiplier is a bijection modulo 2^bits */
                uint32_t stack = (uint32_t)((i * 2654435761ull + 12345) & (range - 1));

                assert_int_equal(fmt_wdelta_add(&d, 7, stack, 3 * (int64_t)stack + 1, 1), 0);
                if (i % 3 == 0) /* a second change of the same stack */
                    assert_int_equal(fmt_wdelta_add(&d, 7, stack, -1, -1), 0);
            }
            assert_int_equal(d.nr, n);
            fmt_wdelta_sort(&d);
            for (uint32_t i = 0; i < n; i++) {
                const struct fmt_wdelta *t = &d.touched[i];
                uint32_t j = 0;

                if (i)
                    assert_true(d.touched[i - 1].stack < t->stack);
                /* find which i made it, for its expected sums */
                while (((j * 2654435761ull + 12345) & (range - 1)) != t->stack)
                    j++;
                assert_int_equal(t->bytes, 3 * (int64_t)t->stack + 1 - (j % 3 == 0));
                assert_int_equal(t->blocks, 1 - (j % 3 == 0));
                if (n > 3000)
                    break; /* the search above is quadratic: the order is checked below */
            }
            for (uint32_t i = 1; i < n; i++)
                assert_true(d.touched[i - 1].stack < d.touched[i].stack);
            fmt_wdelta_destroy(&d);
        }
}

/* fmt_rank_count against a count bit by bit, as blocks start and end,
 * over spans from one word to several groups of 4,096 and 65,536 ords, at
 * and beside their edges. */
static void test_rank_count(void **state)
{
    enum { N = 300000 };
    struct fmt_rank k = {0};
    uint8_t *dead = calloc(N, 1);

    (void)state;
    assert_non_null(dead);
    for (uint32_t n = 1; n <= N; n++) {
        uint32_t o = n - 1;

        assert_int_equal(fmt_rank_start(&k, o), 0);
        /* ends: runs where most blocks end young, and older blocks at random */
        if ((o / 5000) % 3 == 1 && rng() % 8 != 0) {
            fmt_rank_end(&k, o);
            dead[o] = 1;
        }
        uint32_t old = (uint32_t)(rng() % n);
        if (rng() % 3 == 0 && !dead[old]) {
            fmt_rank_end(&k, old);
            dead[old] = 1;
        }
        if (n % 65536 > 2 && n % 65536 < 65534 && n % 4099)
            continue;
        for (int t = 0; t < 4; t++) {
            uint32_t from = t == 0   ? 0
                            : t == 1 ? n - 1 - (uint32_t)(rng() % 600 % n)
                                     : (uint32_t)(rng() % n);
            uint32_t live = 0;

            for (uint32_t i = from; i < n; i++)
                live += !dead[i];
            assert_int_equal(fmt_rank_count(&k, from, n), live);
        }
    }
    fmt_rank_clear(&k);
    assert_int_equal(fmt_rank_count(&k, 0, N), N);
    fmt_rank_free(&k);
    free(dead);
}

/* fmt_recent_rank against its meaning: the last address put in this chunk
 * with the same hash, if it is this one and among the last FMT_RECENT
 * put; across chunks (the ring and the table are not cleared). */
static void test_recent_rank(void **state)
{
    struct fmt_recent r;
    struct fmt_recent_index *x = calloc(1, sizeof(*x));
    static uint64_t put[3 * FMT_RECENT]; /* this chunk's puts */
    uint64_t pool[3000];

    (void)state;
    assert_non_null(x);
    for (size_t i = 0; i < sizeof(pool) / sizeof(pool[0]); i++)
        pool[i] = 0x5555a0000000ull + (rng() % (1u << 20)) * 16;
    for (int chunk = 0; chunk < 4; chunk++) {
        uint32_t len = chunk == 1 ? 100 : 3 * FMT_RECENT;

        fmt_recent_reset(&r);
        for (uint32_t p = 0; p < len; p++) {
            uint64_t a = pool[rng() % (sizeof(pool) / sizeof(pool[0]))];
            uint64_t q = rng() % 4 ? a : pool[rng() % (sizeof(pool) / sizeof(pool[0]))];
            int64_t want = -1;

            for (uint32_t i = r.nr; i-- > 0;)
                if (fmt_recent_hash(put[i]) == fmt_recent_hash(q)) {
                    if (put[i] == q && r.nr - i <= FMT_RECENT)
                        want = r.nr - 1 - i;
                    break;
                }
            assert_int_equal(fmt_recent_rank(&r, x, q), want);
            put[r.nr] = a;
            fmt_recent_put(&r, x, a);
        }
    }
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c),      cmocka_unit_test(test_origin_names),
        cmocka_unit_test(test_varints),     cmocka_unit_test(test_zigzag_and_split),
        cmocka_unit_test(test_wdelta_sort), cmocka_unit_test(test_rank_count),
        cmocka_unit_test(test_recent_rank),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
