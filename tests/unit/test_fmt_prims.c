/* SPDX-License-Identifier: MIT */
/* The format's primitives: CRC32C (instruction and table agree, known
 * values), varints (every length, overlong and truncated ones refused),
 * zigzag, split varints. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "format/fmt_buf_internal.h"
#include "format/fmt_crc_internal.h"
#include "memscribe/trace.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c),
        cmocka_unit_test(test_origin_names),
        cmocka_unit_test(test_varints),
        cmocka_unit_test(test_zigzag_and_split),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
