/* SPDX-License-Identifier: MIT */
/* The PDB reader on a PDB lld wrote (tests/fuzz/corpus_pdb/tiny.pdb, from
 * tests/fuzz/pdb/tiny.c): exact functions, lines and file at known RVAs,
 * the GUID and age check; and on damaged copies (cut at every 512 bytes, a
 * byte set to 0xff or 0 at many offsets, names left without their NUL),
 * where it must answer or refuse with a reason, never crash (ASan, UBSan). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/sym/ana_sym_internal.h"
#include "analysis/sym/ana_sym_pdb_inl.h"

#ifndef MS_PDB_CORPUS
#error "MS_PDB_CORPUS must name tests/fuzz/corpus_pdb"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* tiny.exe's CodeView record: GUID, age 1 */
static const uint8_t tiny_id[20] = {0x3c, 0x02, 0x2c, 0x92, 0x74, 0xa0, 0x6d, 0x8a, 0x4c, 0x4c,
                                    0x44, 0x20, 0x50, 0x44, 0x42, 0x2e, 0x01, 0x00, 0x00, 0x00};

static uint8_t *load_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = malloc(1 << 20);

    assert_non_null(f);
    assert_non_null(buf);
    *size = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

/* Every step-th byte of the PDB set to 0 and to 0xff, each copy read by
 * the fuzz target: an answer or a refusal, never a crash (ASan, UBSan). */
static void overwrite_each(const uint8_t *buf, size_t size, size_t step)
{
    uint8_t *copy = malloc(size);

    assert_non_null(copy);
    for (size_t off = 0; off < size; off += step) {
        for (int v = 0; v < 2; v++) {
            memcpy(copy, buf, size);
            copy[off] = v ? 0xff : 0;
            LLVMFuzzerTestOneInput(copy, size);
        }
    }
    free(copy);
}

static uint8_t *load(size_t *size)
{
    uint8_t *buf = load_file(MS_PDB_CORPUS "/tiny.pdb", size);

    assert_int_equal(*size, 73728);
    return buf;
}

static void expect_at(const struct ana_sym_pdb *p, uint64_t rva, const char *fn, uint32_t fn_rva,
                      uint32_t line)
{
    struct ana_sym_pdb_hit h;

    assert_int_equal(ana_sym_pdb_lookup(p, rva, &h), 0);
    assert_non_null(h.function);
    assert_string_equal(h.function, fn);
    assert_int_equal(h.function_rva, fn_rva);
    assert_int_equal(h.line, line);
    assert_non_null(h.file);
    size_t n = strlen(h.file), k = strlen("/fuzz/pdb/tiny.c");
    assert_true(n >= k && !strcmp(h.file + n - k, "/fuzz/pdb/tiny.c"));
}

static void test_tiny(void **state)
{
    size_t size;
    uint8_t *buf = load(&size);
    struct ana_sym_pdb *p;
    const char *why = NULL;
    struct ana_sym_pdb_hit h;

    (void)state;
    assert_int_equal(ana_sym_pdb_parse(&p, buf, size, tiny_id, 20, &why), 0);
    /* the call instructions (llvm-objdump -d tiny.exe) and entries */
    expect_at(p, 0x1000, "helper", 0x1000, 8);
    expect_at(p, 0x1019, "start", 0x1010, 21);
    expect_at(p, 0x103c, "twice", 0x1030, 14);
    expect_at(p, 0x104c, "twice", 0x1030, 15);
    assert_int_equal(ana_sym_pdb_lookup(p, 0x2000, &h), -ENOENT);
    assert_int_equal(ana_sym_pdb_lookup(p, 0xfff, &h), -ENOENT);
    ana_sym_pdb_close(p);

    /* another GUID, another age */
    uint8_t other[20];
    memcpy(other, tiny_id, 20);
    other[3] ^= 1;
    assert_int_equal(ana_sym_pdb_parse(&p, buf, size, other, 20, &why), -ESTALE);
    memcpy(other, tiny_id, 20);
    other[16] = 2;
    assert_int_equal(ana_sym_pdb_parse(&p, buf, size, other, 20, &why), -ESTALE);
    free(buf);
}

/* tiny.pdb (its size in *size) and a buffer as large for damaged copies. */
static uint8_t *load_with_copy(size_t *size, uint8_t **copy)
{
    uint8_t *buf = load(size);

    *copy = malloc(*size);
    assert_non_null(*copy);
    return buf;
}

/* Parse len bytes of a damaged copy: 0 and *p, or -EPROTO with a reason;
 * any other answer fails the test. */
static int parse_damaged(const uint8_t *copy, size_t len, struct ana_sym_pdb **p)
{
    const char *why = NULL;
    int rc = ana_sym_pdb_parse(p, copy, len, NULL, 0, &why);

    if (rc) {
        assert_int_equal(rc, -EPROTO);
        assert_non_null(why);
    }
    return rc;
}

static void test_damaged(void **state)
{
    size_t size;
    uint8_t *copy, *buf = load_with_copy(&size, &copy);
    int refused = 0;

    (void)state;
    for (size_t cut = 0; cut < size; cut += 512) {
        struct ana_sym_pdb *p;

        memcpy(copy, buf, cut);
        if (parse_damaged(copy, cut, &p)) {
            refused++;
            continue;
        }
        /* only the unused tail of the last block is gone */
        assert_true(cut >= 70144);
        expect_at(p, 0x104c, "twice", 0x1030, 15);
        ana_sym_pdb_close(p);
    }
    assert_int_equal(refused, 70144 / 512);
    overwrite_each(buf, size, 61);
    free(copy);
    free(buf);
}

/* A symbol's name that does not end inside its record (its NUL and the
 * padding after it overwritten): the record is left out, never taken for
 * an allocation failure. */
static void test_unended_names(void **state)
{
    size_t size;
    uint8_t *copy, *buf = load_with_copy(&size, &copy);
    int parsed = 0;

    (void)state;
    for (size_t k = 1; k < size; k++) {
        if (buf[k] || buf[k - 1] < 'a' || buf[k - 1] > 'z')
            continue;
        struct ana_sym_pdb *p;
        memcpy(copy, buf, size);
        for (size_t i = k; i == k || i % 4; i++)
            copy[i] = 'x';
        if (!parse_damaged(copy, size, &p)) {
            parsed++;
            ana_sym_pdb_close(p);
        }
    }
    assert_true(parsed > 0);
    free(copy);
    free(buf);
}

/* A row of inlined code: [start, end) at line. */
static void expect_row(const struct pdb_inl_row *r, uint32_t start, uint32_t end, uint32_t line)
{
    assert_int_equal(r->start, start);
    assert_int_equal(r->end, end);
    assert_int_equal(r->line, line);
}

/* Binary annotations as lld wrote them for inl_outer in inline.pdb
 * (llvm-pdbutil: "0B45 code 0x5 line +2, 0602 line +1, 031F code 0x24,
 * 0407 code end 0x2B"), and the other operations and operand sizes. */
static void test_inline_annotations(void **state)
{
    static const uint8_t lld[] = {0x0b, 0x45, 0x06, 0x02, 0x03, 0x1f, 0x04, 0x07, 0x00};
    /* a file change, a 2-byte offset (0x81 0x00 = 0x100), a line -3
     * (7: odd, so negative), then code length and offset together (12:
     * length 4, offset +8), and no explicit end for the last range */
    static const uint8_t ops[] = {0x05, 0x18, 0x01, 0x81, 0x00, 0x06,
                                  0x07, 0x0c, 0x04, 0x08, 0x03, 0x10};
    static const uint8_t cut[] = {0x0b}, big[] = {0x03, 0xc0, 0x01, 0x00, 0x00};
    struct pdb_inl_row r[8];

    (void)state;
    assert_int_equal(pdb_inl_decode(lld, sizeof(lld), 20, 0, 56, r, 8), 2);
    expect_row(&r[0], 0x5, 0x24, 22);
    expect_row(&r[1], 0x24, 0x2b, 23);

    assert_int_equal(pdb_inl_decode(ops, sizeof(ops), 10, 0, 0x200, r, 8), 3);
    expect_row(&r[0], 0x100, 0x108, 10);
    assert_int_equal(r[0].file, 0x18);
    expect_row(&r[1], 0x108, 0x10c, 7);
    assert_int_equal(r[2].start, 0x118);
    assert_int_equal(r[2].end, 0x200);

    assert_int_equal(pdb_inl_decode(cut, sizeof(cut), 1, 0, 9, r, 8), -EPROTO);
    assert_int_equal(pdb_inl_decode(big, sizeof(big), 1, 0, 0x20000, r, 8), 1);
    assert_int_equal(r[0].start, 0x10000);
    /* more ranges than room: the first ones are kept */
    assert_int_equal(pdb_inl_decode(lld, sizeof(lld), 20, 0, 56, r, 1), 1);
    assert_int_equal(r[0].end, 0x24);
}

/* inline.pdb (tests/windows/win_prog_inline.c, clang -O2, lld): the return
 * address of the HeapAlloc call in inl_caller, where inl_outer and, inside
 * it, inl_inner were inlined: three frames, each at its line. Then the
 * same PDB with bytes overwritten through the fuzz target (never a crash). */
static void test_inline_pdb(void **state)
{
    size_t size;
    uint8_t *buf = load_file(MS_PDB_CORPUS "/inline.pdb", &size);
    struct ana_sym_pdb *p;
    struct ana_sym_pdb_hit hit;
    const char *why = NULL;

    (void)state;
    assert_int_equal(size, 118784);
    assert_int_equal(ana_sym_pdb_parse(&p, buf, size, NULL, 0, &why), 0);
    assert_int_equal(ana_sym_pdb_lookup(p, 0x152c, &hit), 0);
    assert_string_equal(hit.function, "inl_caller");
    assert_int_equal(hit.function_rva, 0x1510);
    assert_int_equal(hit.line, 30);
    assert_int_equal(hit.nr_inline, 2);
    assert_string_equal(hit.inl[0].function, "inl_inner");
    assert_int_equal(hit.inl[0].line, 15);
    assert_non_null(strstr(hit.inl[0].file, "win_prog_inline.c"));
    assert_string_equal(hit.inl[1].function, "inl_outer");
    assert_int_equal(hit.inl[1].line, 22);
    /* before the inlined code (the procedure's first instruction): none */
    assert_int_equal(ana_sym_pdb_lookup(p, 0x1510, &hit), 0);
    assert_int_equal(hit.nr_inline, 0);
    /* inside inl_outer, after inl_inner's code: one */
    assert_int_equal(ana_sym_pdb_lookup(p, 0x1534, &hit), 0);
    assert_int_equal(hit.nr_inline, 1);
    assert_string_equal(hit.inl[0].function, "inl_outer");
    assert_int_equal(hit.inl[0].line, 23);
    ana_sym_pdb_close(p);

    overwrite_each(buf, size, 149);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inline_annotations),
        cmocka_unit_test(test_inline_pdb),
        cmocka_unit_test(test_tiny),
        cmocka_unit_test(test_damaged),
        cmocka_unit_test(test_unended_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
