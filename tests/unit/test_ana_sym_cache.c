/* SPDX-License-Identifier: MIT */
/* The symbol cache on disk (ana_sym_cache.c): frames and module notes
 * read back as written; a tail cut short or damaged is cut and the records
 * before it kept; a cache of other options is emptied; a file that is not
 * a cache, another user's link and a directory are refused and left as
 * they were; two writers at once both land. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/sym/ana_sym_internal.h"

static const uint8_t BID[20] = {0xde, 0xad, 0xbe, 0xef, 1,  2,  3,  4,  5,  6,
                                7,    8,    9,    10,   11, 12, 13, 14, 15, 16};
static const uint8_t OTHER[8] = {1, 1, 2, 3, 5, 8, 13, 21};

struct dir {
    char path[64], file[96];
};

static void dir_make(struct dir *d)
{
    strcpy(d->path, "/tmp/ms-symcache-XXXXXX");
    assert_non_null(mkdtemp(d->path));
    snprintf(d->file, sizeof(d->file), "%s/cache", d->path);
}

static void dir_remove(struct dir *d)
{
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->path);
    assert_int_equal(system(cmd), 0);
}

static struct ana_sym_cache *open_ok(const char *path, uint64_t key)
{
    struct ana_sym_cache *c;
    char why[200] = "";
    int rc = ana_sym_cache_open(&c, path, key, why, sizeof(why));

    if (rc)
        fail_msg("open %s: %s", path, why);
    return c;
}

/* An inline chain: an inlined frame, then its physical frame. */
static const struct ana_sym_frame chain[2] = {
    {.function = "inner(int)", .file = "/src/a.c", .line = 12, .column = 3, .inlined = true},
    {.function = "outer",
     .file = "/src/a.c",
     .line = 40,
     .function_offset = 0x1c,
     .has_offset = true},
};

/* The address's own fields, which the cache gives each frame. */
static const struct ana_sym_frame base = {
    .addr = 0x7f0000001234, .module = "/lib/x.so", .module_offset = 0x1234};

static void expect_chain(struct ana_sym_cache *c, uint64_t off)
{
    struct ana_sym_frame f[ANA_SYM_MAX_INLINE];
    struct ana_sym_arena a = {0};

    assert_int_equal(ana_sym_cache_find(c, BID, sizeof(BID), off, 0, &base, f, &a), 2);
    for (int i = 0; i < 2; i++) {
        assert_string_equal(f[i].function, chain[i].function);
        assert_string_equal(f[i].file, chain[i].file);
        assert_int_equal(f[i].line, chain[i].line);
        assert_int_equal(f[i].column, chain[i].column);
        assert_int_equal(f[i].inlined, chain[i].inlined);
        assert_int_equal(f[i].has_offset, chain[i].has_offset);
        assert_int_equal(f[i].function_offset, chain[i].function_offset);
        assert_int_equal(f[i].addr, base.addr);
        assert_ptr_equal(f[i].module, base.module);
        assert_int_equal(f[i].module_offset, base.module_offset);
    }
    ana_sym_arena_free(&a);
}

static int find_nr(struct ana_sym_cache *c, const uint8_t *bid, uint32_t len, uint64_t off,
                   unsigned kind)
{
    struct ana_sym_frame f[ANA_SYM_MAX_INLINE];
    struct ana_sym_arena a = {0};
    int n = ana_sym_cache_find(c, bid, len, off, kind, &base, f, &a);

    ana_sym_arena_free(&a);
    return n;
}

/* Frames (with no name and no file too), modules' notes, the kind and the
 * build id all part of the key. */
static void test_roundtrip(void **state)
{
    struct dir d;
    const struct ana_sym_frame bare = {.signal_frame = true};
    const char *note;

    (void)state;
    dir_make(&d);
    struct ana_sym_cache *c = open_ok(d.file, 7);
    assert_int_equal(find_nr(c, BID, sizeof(BID), 0x100, 0), 0);
    assert_int_equal(ana_sym_cache_add(c, BID, sizeof(BID), 0x100, 0, chain, 2), 0);
    assert_int_equal(ana_sym_cache_add(c, BID, sizeof(BID), 0x200, 1, &bare, 1), 0);
    assert_int_equal(ana_sym_cache_add_module(c, BID, sizeof(BID), "libx.so: no debug file"), 0);
    assert_int_equal(ana_sym_cache_add_module(c, OTHER, sizeof(OTHER), NULL), 0);
    ana_sym_cache_close(c);

    c = open_ok(d.file, 7);
    expect_chain(c, 0x100);
    assert_int_equal(find_nr(c, BID, sizeof(BID), 0x100, 1), 0); /* another kind */
    assert_int_equal(find_nr(c, OTHER, sizeof(OTHER), 0x100, 0), 0);
    assert_int_equal(find_nr(c, BID, 8, 0x100, 0), 0); /* a prefix of the build id */
    struct ana_sym_frame f[ANA_SYM_MAX_INLINE];
    struct ana_sym_arena a = {0};
    assert_int_equal(ana_sym_cache_find(c, BID, sizeof(BID), 0x200, 1, &base, f, &a), 1);
    assert_null(f[0].function);
    assert_null(f[0].file);
    assert_true(f[0].signal_frame);
    ana_sym_arena_free(&a);
    assert_true(ana_sym_cache_module(c, BID, sizeof(BID), &note));
    assert_string_equal(note, "libx.so: no debug file");
    assert_true(ana_sym_cache_module(c, OTHER, sizeof(OTHER), &note));
    assert_null(note);
    assert_false(ana_sym_cache_module(c, BID, 4, &note));
    ana_sym_cache_close(c);

    /* other options: emptied, then filled anew */
    c = open_ok(d.file, 8);
    assert_int_equal(find_nr(c, BID, sizeof(BID), 0x100, 0), 0);
    ana_sym_cache_close(c);
    struct stat st;
    assert_int_equal(stat(d.file, &st), 0);
    assert_int_equal(st.st_size, 16);
    dir_remove(&d);
}

static off_t file_size(const char *path)
{
    struct stat st;

    assert_int_equal(stat(path, &st), 0);
    return st.st_size;
}

static void append(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0600);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, p, n), (ssize_t)n);
    close(fd);
}

/* A record cut short (a kill mid-write) or a byte changed: that record
 * and what follows are cut, the ones before kept, and appends go on. */
static void test_damage(void **state)
{
    struct dir d;

    (void)state;
    dir_make(&d);
    struct ana_sym_cache *c = open_ok(d.file, 1);
    assert_int_equal(ana_sym_cache_add(c, BID, sizeof(BID), 0x10, 0, chain, 2), 0);
    ana_sym_cache_close(c);
    off_t good = file_size(d.file);
    c = open_ok(d.file, 1);
    assert_int_equal(ana_sym_cache_add(c, BID, sizeof(BID), 0x20, 0, chain, 2), 0);
    ana_sym_cache_close(c);
    off_t two = file_size(d.file);
    assert_int_equal(truncate(d.file, two - 3), 0); /* the second record cut short */

    c = open_ok(d.file, 1);
    expect_chain(c, 0x10);
    assert_int_equal(find_nr(c, BID, sizeof(BID), 0x20, 0), 0);
    assert_int_equal(file_size(d.file), good);
    assert_int_equal(ana_sym_cache_add(c, BID, sizeof(BID), 0x30, 0, chain, 2), 0);
    ana_sym_cache_close(c);
    c = open_ok(d.file, 1);
    expect_chain(c, 0x30);
    ana_sym_cache_close(c);

    /* a byte of the first record's payload changed: nothing is read */
    int fd = open(d.file, O_RDWR);
    uint8_t b;
    assert_int_equal(pread(fd, &b, 1, 40), 1);
    b ^= 0x40;
    assert_int_equal(pwrite(fd, &b, 1, 40), 1);
    close(fd);
    c = open_ok(d.file, 1);
    assert_int_equal(find_nr(c, BID, sizeof(BID), 0x10, 0), 0);
    assert_int_equal(find_nr(c, BID, sizeof(BID), 0x30, 0), 0);
    ana_sym_cache_close(c);
    assert_int_equal(file_size(d.file), 16);

    /* a length of 4 GiB: cut, no read beyond the file */
    static const uint8_t huge[12] = {0xff, 0xff, 0xff, 0xff};
    append(d.file, huge, sizeof(huge));
    c = open_ok(d.file, 1);
    ana_sym_cache_close(c);
    assert_int_equal(file_size(d.file), 16);
    dir_remove(&d);
}

static void expect_refused(const char *path, int want)
{
    struct ana_sym_cache *c = (struct ana_sym_cache *)1;
    char why[200] = "";

    assert_int_equal(ana_sym_cache_open(&c, path, 1, why, sizeof(why)), want);
    assert_null(c);
    assert_true(why[0] != 0);
}

/* Files that are not caches are never written over. */
static void test_refused(void **state)
{
    struct dir d;
    char link[128], text[128], buf[64];

    (void)state;
    dir_make(&d);
    snprintf(text, sizeof(text), "%s/notes.txt", d.path);
    append(text, "dear diary\n", 11);
    expect_refused(text, -EINVAL);
    int fd = open(text, O_RDONLY);
    assert_int_equal(read(fd, buf, sizeof(buf)), 11);
    close(fd);
    assert_memory_equal(buf, "dear diary\n", 11);
    expect_refused(d.path, -EISDIR); /* a directory */
    expect_refused("/nonexistent-dir/cache", -ENOENT);
    /* a link another user planted (root can make one: lchown) */
    snprintf(link, sizeof(link), "%s/planted", d.path);
    assert_int_equal(symlink(d.file, link), 0);
    if (geteuid() == 0 && !lchown(link, 65534, 65534)) {
        expect_refused(link, -EPERM);
        assert_int_equal(access(d.file, F_OK), -1); /* not made through it */
    }
    dir_remove(&d);
}

/* Two symbolizers at once, as serve's queries: each appends at the end as
 * it is when it closes, and both records are read; one of other options
 * that empties the file meanwhile keeps it. */
static void test_two_writers(void **state)
{
    struct dir d;

    (void)state;
    dir_make(&d);
    struct ana_sym_cache *a = open_ok(d.file, 3), *b = open_ok(d.file, 3);
    assert_int_equal(ana_sym_cache_add(a, BID, sizeof(BID), 0x1, 0, chain, 2), 0);
    assert_int_equal(ana_sym_cache_add(b, BID, sizeof(BID), 0x2, 0, chain, 2), 0);
    ana_sym_cache_close(a);
    ana_sym_cache_close(b);
    struct ana_sym_cache *c = open_ok(d.file, 3);
    expect_chain(c, 0x1);
    expect_chain(c, 0x2);
    ana_sym_cache_close(c);

    /* one of other options made the file its own meanwhile: the first's
     * records, made for its options, do not go into it */
    a = open_ok(d.file, 3);
    assert_int_equal(ana_sym_cache_add(a, BID, sizeof(BID), 0x3, 0, chain, 2), 0);
    b = open_ok(d.file, 4);
    ana_sym_cache_close(b);
    ana_sym_cache_close(a);
    c = open_ok(d.file, 4);
    assert_int_equal(find_nr(c, BID, sizeof(BID), 0x3, 0), 0);
    ana_sym_cache_close(c);
    dir_remove(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_damage),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_two_writers),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
