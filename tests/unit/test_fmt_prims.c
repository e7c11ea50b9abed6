/* SPDX-License-Identifier: MIT */
/* The format's primitives: CRC32C (instruction and table agree, known
 * values), varints (every length, overlong and truncated ones refused),
 * zigzag, split varints; the writer's helpers whose results must not
 * depend on how they are computed: the chunk's stack deltas sorted, ranks
 * counted over long spans, ranks of recently ended addresses, the address
 * model's bins (its fastbins are rings). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "format/fmt_buf_internal.h"
#include "format/fmt_crc_internal.h"
#include "format/fmt_pred_internal.h"
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

/* fmt_rank_count and fmt_rank_select against a count bit by bit, as
 * blocks start and end, over spans from one word to several groups of
 * 4,096 and 32,768 ords, at and beside their edges. */
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
        if (n % 32768 > 2 && n % 32768 < 32766 && n % 4099)
            continue;
        for (int t = 0; t < 6; t++) {
            uint32_t from = t == 0   ? 0
                            : t == 1 ? n - 1 - (uint32_t)(rng() % 600 % n)
                                     : (uint32_t)(rng() % n);
            /* to n, or short of it (blocks past the end have ended), as
             * the writer counts up to the last FMT_RANK_NEAR */
            uint32_t to = t < 4 ? n : from + (uint32_t)(rng() % (n - from + 1));
            uint32_t live = 0;

            for (uint32_t i = from; i < to; i++)
                live += !dead[i];
            assert_int_equal(fmt_rank_count(&k, from, to), live);
        }
        /* fmt_rank_select: the ord of the live block of rank r from the
         * newest, near and far, and one past the last; among all blocks
         * started, or among those before the last few, as the reader
         * selects among the blocks before the last FMT_RANK_NEAR */
        for (int t = 0; t < 6; t++) {
            uint32_t m = t < 3 ? n : n - (uint32_t)(rng() % (FMT_RANK_NEAR + 2) % n);
            uint32_t all = fmt_rank_count(&k, 0, m);
            uint32_t r = t % 3 == 0   ? all
                         : t % 3 == 1 ? (uint32_t)(rng() % 100)
                                      : (uint32_t)(rng() % m);
            int64_t want = -1;

            for (uint32_t i = m, seen = 0; i-- > 0;)
                if (!dead[i] && seen++ == r) {
                    want = i;
                    break;
                }
            assert_int_equal(fmt_rank_select(&k, r, m), want);
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

/* The address model (fmt_pred_internal.h) as plain arrays, as the format
 * describes it: per class a tcache LIFO of 7, a fastbin LIFO of 64 for
 * small classes (the oldest forgotten to the class's freed addresses when
 * full), the freed addresses newest first, and the top. */
struct ref_pred {
    uint64_t top;
    unsigned nr[FMT_PRED_CLASSES], nr_fast[FMT_PRED_FAST_CLASSES],
        nr_shadow[FMT_PRED_SHADOW_CLASSES];
    uint64_t bin[FMT_PRED_CLASSES][FMT_PRED_TCACHE], fast[FMT_PRED_FAST_CLASSES][FMT_PRED_FAST];
    uint64_t shadow[FMT_PRED_SHADOW_CLASSES][FMT_PRED_SHADOW]; /* [0]: the newest */
};

static void ref_shadow_push(struct ref_pred *p, uint64_t cls, uint64_t addr)
{
    if (cls >= FMT_PRED_SHADOW_CLASSES)
        return;
    memmove(p->shadow[cls] + 1, p->shadow[cls], (FMT_PRED_SHADOW - 1) * sizeof(uint64_t));
    p->shadow[cls][0] = addr;
    p->nr_shadow[cls] += p->nr_shadow[cls] < FMT_PRED_SHADOW;
}

/* Take addr out of a LIFO v of *n; 1 if it was there. Else all of it to
 * the freed addresses, oldest first. */
static int ref_take_or_drop(struct ref_pred *p, uint64_t cls, uint64_t *v, unsigned *n,
                            uint64_t addr)
{
    for (unsigned i = *n; i-- > 0;)
        if (v[i] == addr) {
            memmove(v + i, v + i + 1, (*n - i - 1) * sizeof(*v));
            --*n;
            return 1;
        }
    for (unsigned i = 0; i < *n; i++)
        ref_shadow_push(p, cls, v[i]);
    *n = 0;
    return 0;
}

static void ref_start(struct ref_pred *p, uint64_t addr, uint64_t size)
{
    uint64_t c = fmt_pred_csize(size), cls = c >> 4;

    if (cls < FMT_PRED_CLASSES && ref_take_or_drop(p, cls, p->bin[cls], &p->nr[cls], addr))
        return;
    if (c >= 1024)
        for (uint64_t i = 0; i < FMT_PRED_FAST_CLASSES; i++)
            ref_take_or_drop(p, i, p->fast[i], &p->nr_fast[i], 0);
    if (cls < FMT_PRED_FAST_CLASSES) {
        if (ref_take_or_drop(p, cls, p->fast[cls], &p->nr_fast[cls], addr)) {
            while (p->nr[cls] < FMT_PRED_TCACHE && p->nr_fast[cls])
                p->bin[cls][p->nr[cls]++] = p->fast[cls][--p->nr_fast[cls]];
            return;
        }
    }
    p->top = addr + c;
}

static void ref_end(struct ref_pred *p, uint64_t addr, uint64_t size)
{
    uint64_t cls = fmt_pred_csize(size) >> 4;

    if (cls >= FMT_PRED_CLASSES)
        return;
    if (p->nr[cls] < FMT_PRED_TCACHE) {
        p->bin[cls][p->nr[cls]++] = addr;
    } else if (cls >= FMT_PRED_FAST_CLASSES) {
        ref_shadow_push(p, cls, addr);
    } else {
        if (p->nr_fast[cls] == FMT_PRED_FAST) {
            ref_shadow_push(p, cls, p->fast[cls][0]);
            memmove(p->fast[cls], p->fast[cls] + 1, (FMT_PRED_FAST - 1) * sizeof(uint64_t));
            p->nr_fast[cls]--;
        }
        p->fast[cls][p->nr_fast[cls]++] = addr;
    }
}

static uint64_t ref_guess(const struct ref_pred *p, uint64_t size)
{
    uint64_t cls = fmt_pred_csize(size) >> 4;

    if (cls < FMT_PRED_CLASSES && p->nr[cls])
        return p->bin[cls][p->nr[cls] - 1];
    if (cls < FMT_PRED_FAST_CLASSES && p->nr_fast[cls])
        return p->fast[cls][p->nr_fast[cls] - 1];
    return p->top;
}

/* fmt_pred against the plain model: a program that frees hundreds of small
 * blocks of a class at a time (its fastbin ring wraps many times), takes
 * them back in and out of order, mixes in large blocks (consolidation) and
 * chunks that reset it. Every prediction and every freed-address rank
 * agree. */
static void test_pred_model(void **state)
{
    static struct fmt_pred p;
    static struct ref_pred r;
    static uint64_t live[4096], live_size[4096];
    static const uint64_t sizes[] = {8, 24, 40, 56, 72, 100, 120, 200, 500, 1500};
    unsigned nr_live = 0;

    (void)state;
    for (int chunk = 0; chunk < 3; chunk++) {
        fmt_pred_reset(&p);
        memset(&r, 0, sizeof(r));
        for (int op = 0; op < 200000; op++) {
            int burst = (op / 3000) % 2; /* frees outnumber mallocs, then the reverse */
            if (nr_live && rng() % 8 < (burst ? 6u : 2u)) {
                unsigned i =
                    (unsigned)(rng() % 4 ? nr_live - 1 - rng() % (nr_live < 8 ? nr_live : 8)
                                         : rng() % nr_live);
                fmt_pred_end(&p, live[i], live_size[i]);
                ref_end(&r, live[i], live_size[i]);
                live[i] = live[--nr_live];
                live_size[i] = live_size[nr_live];
                continue;
            }
            /* now and then a large block, which empties the fastbins */
            uint64_t size = sizes[rng() % 2000 ? rng() % 9 : 9];
            uint64_t guess = fmt_pred_guess(&p, size), addr = guess;
            assert_int_equal(guess, ref_guess(&r, size));
            if (rng() % 5 == 0 || !addr) {
                addr = 0x10000 + (rng() % 65536) * 16;
                /* a freed address by its rank, as a reader finds it */
                unsigned k = (unsigned)(rng() % 8);
                uint64_t cls = fmt_pred_csize(size) >> 4;
                if (rng() % 2 && cls < FMT_PRED_SHADOW_CLASSES && k < r.nr_shadow[cls]) {
                    uint64_t got = 0;
                    addr = r.shadow[cls][k];
                    memmove(r.shadow[cls] + k, r.shadow[cls] + k + 1,
                            (FMT_PRED_SHADOW - 1 - k) * sizeof(uint64_t));
                    r.nr_shadow[cls]--;
                    assert_int_equal(fmt_pred_shadow_get(&p, size, k, &got), 1);
                    assert_int_equal(got, addr);
                }
            }
            fmt_pred_start(&p, addr, size);
            ref_start(&r, addr, size);
            if (nr_live < 4096) {
                live[nr_live] = addr;
                live_size[nr_live++] = size;
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c),      cmocka_unit_test(test_origin_names),
        cmocka_unit_test(test_varints),     cmocka_unit_test(test_zigzag_and_split),
        cmocka_unit_test(test_wdelta_sort), cmocka_unit_test(test_rank_count),
        cmocka_unit_test(test_recent_rank), cmocka_unit_test(test_pred_model),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
