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

#ifndef MS_PDB_CORPUS
#error "MS_PDB_CORPUS must name tests/fuzz/corpus_pdb"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* tiny.exe's CodeView record: GUID, age 1 */
static const uint8_t tiny_id[20] = {0x3c, 0x02, 0x2c, 0x92, 0x74, 0xa0, 0x6d, 0x8a, 0x4c, 0x4c,
                                    0x44, 0x20, 0x50, 0x44, 0x42, 0x2e, 0x01, 0x00, 0x00, 0x00};

static uint8_t *load(size_t *size)
{
    FILE *f = fopen(MS_PDB_CORPUS "/tiny.pdb", "rb");
    uint8_t *buf = malloc(1 << 20);

    assert_non_null(f);
    assert_non_null(buf);
    *size = fread(buf, 1, 1 << 20, f);
    fclose(f);
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

static void test_damaged(void **state)
{
    size_t size;
    uint8_t *buf = load(&size);
    uint8_t *copy = malloc(size);
    int refused = 0;

    (void)state;
    assert_non_null(copy);
    for (size_t cut = 0; cut < size; cut += 512) {
        struct ana_sym_pdb *p;
        const char *why = NULL;
        memcpy(copy, buf, cut);
        int rc = ana_sym_pdb_parse(&p, copy, cut, NULL, 0, &why);
        if (rc == 0) {
            /* only the unused tail of the last block is gone */
            assert_true(cut >= 70144);
            expect_at(p, 0x104c, "twice", 0x1030, 15);
            ana_sym_pdb_close(p);
        } else {
            assert_int_equal(rc, -EPROTO);
            assert_non_null(why);
            refused++;
        }
    }
    assert_int_equal(refused, 70144 / 512);
    for (size_t off = 0; off < size; off += 61) {
        for (int v = 0; v < 2; v++) {
            memcpy(copy, buf, size);
            copy[off] = v ? 0xff : 0;
            LLVMFuzzerTestOneInput(copy, size);
        }
    }
    free(copy);
    free(buf);
}

/* A symbol's name that does not end inside its record (its NUL and the
 * padding after it overwritten): the record is left out, never taken for
 * an allocation failure. */
static void test_unended_names(void **state)
{
    size_t size;
    uint8_t *buf = load(&size);
    uint8_t *copy = malloc(size);
    int parsed = 0;

    (void)state;
    assert_non_null(copy);
    for (size_t k = 1; k < size; k++) {
        if (buf[k] || buf[k - 1] < 'a' || buf[k - 1] > 'z')
            continue;
        struct ana_sym_pdb *p;
        const char *why = NULL;
        memcpy(copy, buf, size);
        for (size_t i = k; i == k || i % 4; i++)
            copy[i] = 'x';
        int rc = ana_sym_pdb_parse(&p, copy, size, NULL, 0, &why);
        assert_true(rc == 0 || rc == -EPROTO);
        if (!rc) {
            parsed++;
            ana_sym_pdb_close(p);
        }
    }
    assert_true(parsed > 0);
    free(copy);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny),
        cmocka_unit_test(test_damaged),
        cmocka_unit_test(test_unended_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
