/* SPDX-License-Identifier: MIT */
/* The writer's table of live blocks (fmt_wlive): every block comes back
 * exactly as it went in, through growth, deletion, keys that share a home,
 * runs that spill past the last home, and fields too wide to pack; the
 * table's order and probe runs stay intact (checked slot by slot), and the
 * blocks of one bucket of the heap sit side by side. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <cmocka.h>

#include "format/fmt_wlive_internal.h"
#include "test_xorshift.h"

/* Every packed slot: its hash no lower than the one before it, no lower
 * than its home, and every slot from its home to it full; slots[end]
 * empty; the count right. */
static void check_table(const struct fmt_wlive *l)
{
    uint64_t nr = 0, prev_hash = 0;
    int prev_full = 0;

    assert_int_equal(l->slots[l->end].serial, 0);
    for (uint64_t i = 0; i < l->end; i++) {
        const struct fmt_wslot *s = &l->slots[i];

        if (!s->serial) {
            prev_full = 0;
            continue;
        }
        uint64_t h = fmt_wlive_hash(s->key), home = h >> l->shift;
        assert_true(home <= i);
        for (uint64_t j = home; j < i; j++)
            assert_int_not_equal(l->slots[j].serial, 0);
        if (prev_full)
            assert_true(prev_hash <= h);
        prev_hash = h;
        prev_full = 1;
        nr++;
    }
    assert_int_equal(nr, l->nr);
    assert_true(l->nr <= l->max_nr);
}

static void assert_block_equal(const struct fmt_wblock *a, const struct fmt_wblock *b)
{
    assert_int_equal(a->addr, b->addr);
    assert_int_equal(a->serial, b->serial);
    assert_int_equal(a->size, b->size);
    assert_int_equal(a->ts_ns, b->ts_ns);
    assert_int_equal(a->stack, b->stack);
    assert_int_equal(a->ctx, b->ctx);
    assert_int_equal(a->image, b->image);
    assert_int_equal(a->ord, b->ord);
}

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng(void)
{
    return test_xorshift64(&rng_state);
}

/* A block for a model entry: fields from the key and the serial, some of
 * them too wide to pack when wide is set. */
static struct fmt_wblock make_block(uint32_t image, uint64_t addr, uint64_t serial, uint32_t tu,
                                    int wide)
{
    struct fmt_wblock b = {.addr = addr,
                           .serial = serial,
                           .size = rng() % 100000,
                           .ts_ns = (rng() % 1000000000) * tu,
                           .stack = (uint32_t)(rng() % 5000),
                           .ctx = (uint32_t)(rng() % 300),
                           .image = image,
                           .ord = (uint32_t)(rng() % (1u << 20))};

    switch (wide ? rng() % 4 : 4) {
    case 0:
        b.size = ((uint64_t)1 << 32) + rng() % 1000;
        break;
    case 1:
        b.image = (1u << 16) + (uint32_t)(rng() % 4);
        break;
    case 2:
        b.ctx = (1u << 20) + (uint32_t)(rng() % 1000);
        break;
    case 3:
        b.ts_ns += tu > 1 ? 1 : 0; /* not a multiple of the unit */
        if (tu == 1)
            b.serial |= (uint64_t)1 << 44;
        break;
    default:
        break;
    }
    return b;
}

/* The reference: an array of blocks, searched one by one. */
struct model {
    struct fmt_wblock *v;
    size_t nr, cap;
};

static ssize_t model_find(const struct model *m, uint32_t image, uint64_t addr)
{
    for (size_t i = 0; i < m->nr; i++)
        if (m->v[i].addr == addr && m->v[i].image == image)
            return (ssize_t)i;
    return -1;
}

static void model_put(struct model *m, const struct fmt_wblock *b)
{
    ssize_t i = model_find(m, b->image, b->addr);

    if (i >= 0) {
        m->v[i] = *b;
        return;
    }
    if (m->nr == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 1024;
        m->v = realloc(m->v, m->cap * sizeof(*m->v));
        assert_non_null(m->v);
    }
    m->v[m->nr++] = *b;
}

static void model_del(struct model *m, size_t i)
{
    m->v[i] = m->v[--m->nr];
}

/* The table holds exactly the model's blocks. */
static void check_all(const struct fmt_wlive *l, const struct model *m)
{
    struct fmt_wblock b, got;
    uint64_t pos = 0, n = 0;

    check_table(l);
    while (fmt_wlive_next(l, &pos, &b)) {
        ssize_t i = model_find(m, b.image, b.addr);

        assert_true(i >= 0);
        assert_block_equal(&b, &m->v[i]);
        n++;
    }
    assert_int_equal(n, m->nr);
    for (size_t i = 0; i < m->nr; i++) {
        assert_int_equal(fmt_wlive_get(l, m->v[i].image, m->v[i].addr, &got), 1);
        assert_block_equal(&got, &m->v[i]);
    }
}

/* Random inserts, replacements and takes against the model, growing the
 * table from its first size through doublings (at least `doublings`) and
 * shrinking the population again; a share of the blocks is wide when
 * wide_every is set. */
static void run_model(uint32_t tu, unsigned wide_every, size_t steps, unsigned doublings)
{
    struct fmt_wlive l;
    struct model m = {0};
    uint64_t serial = 1;
    uint64_t first_end;

    assert_int_equal(fmt_wlive_init(&l, tu), 0);
    first_end = l.end;
    for (size_t step = 0; step < steps; step++) {
        /* Grow for the first 60 % of the steps, then mostly free. */
        unsigned grow = step < steps * 6 / 10 ? 70 : 25;
        uint64_t r = rng() % 100;

        if (r < grow || m.nr == 0) {
            /* Addresses a malloc gives (16-aligned, clustered), sometimes
             * a replacement of a live one, sometimes unaligned. */
            uint64_t addr = 0x5555a0000000ull + (rng() % (1u << 22)) * 16 + (rng() % 8 == 0);
            uint32_t image = (uint32_t)(rng() % 3);
            if (m.nr && rng() % 10 == 0) {
                size_t k = rng() % m.nr;

                addr = m.v[k].addr;
                image = m.v[k].image;
            }
            struct fmt_wblock b =
                make_block(image, addr, serial++, tu, wide_every && rng() % wide_every == 0);
            assert_int_equal(fmt_wlive_insert(&l, &b), 0);
            model_put(&m, &b);
        } else {
            size_t k = rng() % m.nr;
            struct fmt_wblock got;

            assert_int_equal(fmt_wlive_take(&l, m.v[k].image, m.v[k].addr, &got), 1);
            assert_block_equal(&got, &m.v[k]);
            assert_int_equal(fmt_wlive_take(&l, m.v[k].image, m.v[k].addr, &got), 0);
            model_del(&m, k);
        }
        if (step % 4096 == 0)
            check_all(&l, &m);
    }
    check_all(&l, &m);
    assert_true(l.end >= first_end << doublings);
    while (m.nr) {
        struct fmt_wblock got;

        assert_int_equal(fmt_wlive_take(&l, m.v[0].image, m.v[0].addr, &got), 1);
        assert_block_equal(&got, &m.v[0]);
        model_del(&m, 0);
    }
    check_all(&l, &m);
    assert_int_equal(l.wide.nr, 0);
    fmt_wlive_destroy(&l);
    free(m.v);
}

static void test_model_us(void **state)
{
    (void)state;
    run_model(1000, 0, 60000, 3);
}

static void test_model_ns(void **state)
{
    (void)state;
    run_model(1, 0, 60000, 3);
}

static void test_model_wide(void **state)
{
    (void)state;
    run_model(1000, 5, 40000, 2);
    run_model(7, 3, 20000, 1);
}

/* Keys whose hashes share their top bits share a home: a long run, taken
 * apart from the middle, the front and the back. */
static void test_same_home(void **state)
{
    struct fmt_wlive l;
    struct fmt_wblock v[200], got;
    unsigned n = 0;

    (void)state;
    assert_int_equal(fmt_wlive_init(&l, 1000), 0);
    /* The home of the first key, as the first table has it. */
    unsigned shift = l.shift;
    uint64_t want = fmt_wlive_hash(fmt_wlive_key(1, 0x10000)) >> shift;
    for (uint64_t a = 0x10000; n < 200; a += 16)
        if (fmt_wlive_hash(fmt_wlive_key(1, a)) >> shift == want) {
            v[n] = make_block(1, a, n + 1, 1000, 0);
            assert_int_equal(fmt_wlive_insert(&l, &v[n]), 0);
            n++;
        }
    check_table(&l);
    assert_int_equal(l.nr, 200);
    for (unsigned i = 100; i < 200; i += 2) {
        assert_int_equal(fmt_wlive_take(&l, 1, v[i].addr, &got), 1);
        assert_block_equal(&got, &v[i]);
        v[i].serial = 0;
        check_table(&l);
    }
    for (unsigned i = 0; i < 200; i++) {
        int live = v[i].serial != 0;

        assert_int_equal(fmt_wlive_get(&l, 1, v[i].addr, &got), live);
        if (live)
            assert_block_equal(&got, &v[i]);
    }
    /* The same addresses in another image are other keys. */
    assert_int_equal(fmt_wlive_get(&l, 2, v[0].addr, &got), 0);
    for (unsigned i = 0; i < 200; i++)
        if (v[i].serial)
            assert_int_equal(fmt_wlive_take(&l, 1, v[i].addr, &got), 1);
    assert_int_equal(l.nr, 0);
    check_table(&l);
    fmt_wlive_destroy(&l);
}

/* The blocks of one 128-byte bucket of the heap share a home and sit
 * side by side in address order, whatever order they came in; the next
 * bucket, and the same bucket in another image, hash elsewhere. */
static void test_bucket(void **state)
{
    const uint64_t base = 0x5555a0001280ull; /* a bucket's first byte */
    const uint64_t bucket = (uint64_t)1 << FMT_WLIVE_BUCKET_BITS;
    static const unsigned order[] = {5, 0, 7, 2, 6, 1, 4, 3};
    struct fmt_wlive l;
    struct fmt_wblock got;

    (void)state;
    assert_int_equal(base % bucket, 0);
    assert_int_equal(fmt_wlive_init(&l, 1000), 0);
    uint64_t home = fmt_wlive_hash(fmt_wlive_key(0, base)) >> l.shift;
    for (unsigned i = 0; i < 8; i++) {
        uint64_t a = base + 16 * order[i];
        struct fmt_wblock b = make_block(0, a, i + 1, 1000, 0);

        assert_int_equal(fmt_wlive_hash(fmt_wlive_key(0, a)) >> l.shift, home);
        assert_int_equal(fmt_wlive_insert(&l, &b), 0);
    }
    check_table(&l);
    int64_t at = fmt_wlive_slot(&l, fmt_wlive_key(0, base));
    assert_true(at >= (int64_t)home);
    for (unsigned i = 0; i < 8; i++)
        assert_int_equal(fmt_wlive_slot(&l, fmt_wlive_key(0, base + 16 * i)), at + i);
    assert_int_not_equal(fmt_wlive_hash(fmt_wlive_key(0, base + bucket)) >> 20,
                         fmt_wlive_hash(fmt_wlive_key(0, base)) >> 20);
    assert_int_not_equal(fmt_wlive_hash(fmt_wlive_key(1, base)) >> 20,
                         fmt_wlive_hash(fmt_wlive_key(0, base)) >> 20);
    for (unsigned i = 0; i < 8; i++)
        assert_int_equal(fmt_wlive_take(&l, 0, base + 16 * i, &got), 1);
    assert_int_equal(l.nr, 0);
    fmt_wlive_destroy(&l);
}

/* Keys of the last home: their run spills past it into the extra slots,
 * and when it would pass the last of them the table grows. */
static void test_spill(void **state)
{
    struct fmt_wlive l;
    struct fmt_wblock v[300], got;
    uint64_t first_end;
    unsigned n = 0;

    (void)state;
    assert_int_equal(fmt_wlive_init(&l, 1), 0);
    first_end = l.end;
    unsigned shift = l.shift;
    uint64_t last = ((uint64_t)1 << (64 - shift)) - 1; /* the last home */
    for (uint64_t a = 16; n < 300; a += 16)
        if (fmt_wlive_hash(fmt_wlive_key(0, a)) >> shift == last) {
            v[n] = make_block(0, a, n + 1, 1, 0);
            assert_int_equal(fmt_wlive_insert(&l, &v[n]), 0);
            check_table(&l);
            n++;
        }
    /* 300 blocks of one home do not fit in the first table's spill. */
    assert_true(l.end > first_end);
    for (unsigned i = 0; i < n; i++) {
        assert_int_equal(fmt_wlive_take(&l, 0, v[i].addr, &got), 1);
        assert_block_equal(&got, &v[i]);
    }
    check_table(&l);
    fmt_wlive_destroy(&l);
}

/* Each field at the largest value that packs, and one past it: the block
 * comes back exactly either way, and a key lives in one place only when a
 * packed block replaces a wide one and the other way round. */
static void test_widths(void **state)
{
    const uint64_t tu = 1000;
    struct fmt_wlive l;
    struct fmt_wblock got;
    struct fmt_wblock edge = {.addr = ((uint64_t)1 << 48) - 16,
                              .serial = ((uint64_t)1 << 44) - 1,
                              .size = UINT32_MAX,
                              .ts_ns = (((uint64_t)1 << 44) - 1) * tu,
                              .stack = UINT32_MAX,
                              .ctx = (1u << 20) - 1,
                              .image = 0xffff,
                              .ord = (1u << 20) - 1};

    (void)state;
    assert_int_equal(fmt_wlive_init(&l, (uint32_t)tu), 0);
    assert_int_equal(fmt_wlive_insert(&l, &edge), 0);
    assert_int_equal(l.nr, 1);
    assert_int_equal(l.wide.nr, 0);
    assert_int_equal(fmt_wlive_take(&l, edge.image, edge.addr, &got), 1);
    assert_block_equal(&got, &edge);
    for (int f = 0; f < 9; f++) {
        struct fmt_wblock b = edge;

        switch (f) {
        case 0:
            b.addr = (uint64_t)1 << 48;
            break;
        case 1:
            b.image = 0x10000;
            break;
        case 2:
            b.serial = (uint64_t)1 << 44;
            break;
        case 3:
            b.size = (uint64_t)1 << 32;
            break;
        case 4:
            b.ts_ns = ((uint64_t)1 << 44) * tu;
            break;
        case 5:
            b.ts_ns = tu + 1;
            break;
        case 6:
            b.ord = 1u << 20;
            break;
        case 7:
            b.ctx = 1u << 20;
            break;
        case 8:
            b.addr = UINT64_MAX;
            b.image = UINT32_MAX;
            b.size = b.serial = UINT64_MAX;
            b.ts_ns = UINT64_MAX;
            b.stack = b.ctx = b.ord = UINT32_MAX;
            break;
        }
        assert_int_equal(fmt_wlive_insert(&l, &b), 0);
        assert_int_equal(l.wide.nr, 1);
        assert_int_equal(l.nr, 0);
        assert_int_equal(fmt_wlive_get(&l, b.image, b.addr, &got), 1);
        assert_block_equal(&got, &b);
        if (fmt_wlive_key_fits(b.image, b.addr)) {
            /* A packed block at the same key replaces it, and back. */
            struct fmt_wblock p = edge;

            p.addr = b.addr;
            p.image = b.image;
            assert_int_equal(fmt_wlive_insert(&l, &p), 0);
            assert_int_equal(l.wide.nr, 0);
            assert_int_equal(l.nr, 1);
            assert_int_equal(fmt_wlive_insert(&l, &b), 0);
            assert_int_equal(l.wide.nr, 1);
            assert_int_equal(l.nr, 0);
        }
        assert_int_equal(fmt_wlive_take(&l, b.image, b.addr, &got), 1);
        assert_block_equal(&got, &b);
        assert_int_equal(fmt_wlive_take(&l, b.image, b.addr, &got), 0);
        assert_int_equal(l.wide.nr, 0);
    }
    fmt_wlive_destroy(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_us),   cmocka_unit_test(test_model_ns),
        cmocka_unit_test(test_model_wide), cmocka_unit_test(test_same_home),
        cmocka_unit_test(test_bucket),     cmocka_unit_test(test_spill),
        cmocka_unit_test(test_widths),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
