/* SPDX-License-Identifier: MIT */
/* The symbolizer's own .debug_line decoder against libdw's, row by row, on
 * sym_chain, its plugin and (when installed) libc's debug file; and on
 * corrupted line tables, where it must refuse, never crash. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/ana_sym_internal.h"
#include "test_ana_sym_fixture.h"

struct file {
    int fd;
    Elf *elf;
    Dwarf *dw;
    struct ana_sym_sections sec;
};

static bool open_file(const char *path, struct file *f)
{
    memset(f, 0, sizeof(*f));
    f->fd = open(path, O_RDONLY);
    if (f->fd < 0)
        return false;
    elf_version(EV_CURRENT);
    f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
    assert_non_null(f->elf);
    f->dw = dwarf_begin_elf(f->elf, DWARF_C_READ, NULL); /* decompresses in place */
    assert_non_null(f->dw);

    size_t shstrndx;
    Elf_Scn *scn = NULL;
    assert_int_equal(elf_getshdrstrndx(f->elf, &shstrndx), 0);
    while ((scn = elf_nextscn(f->elf, scn))) {
        GElf_Shdr sh;
        assert_non_null(gelf_getshdr(scn, &sh));
        const char *name = elf_strptr(f->elf, shstrndx, sh.sh_name);
        Elf_Data *d = elf_getdata(scn, NULL);
        if (!name || !d || sh.sh_type == SHT_NOBITS)
            continue;
        if (!strcmp(name, ".debug_line"))
            f->sec.line = d->d_buf, f->sec.line_size = d->d_size;
        else if (!strcmp(name, ".debug_line_str"))
            f->sec.line_str = d->d_buf, f->sec.line_str_size = d->d_size;
        else if (!strcmp(name, ".debug_str"))
            f->sec.str = d->d_buf, f->sec.str_size = d->d_size;
    }
    assert_non_null(f->sec.line);
    return true;
}

static void close_file(struct file *f)
{
    dwarf_end(f->dw);
    elf_end(f->elf);
    close(f->fd);
}

static const char *base_name(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;

    return s ? s + 1 : p;
}

/* Every row libdw reports that is the last at its address (the one in
 * effect there) must be what our decoder finds at that address: same
 * line, column and file. Returns the number of rows compared. */
static size_t compare_file(const char *path)
{
    struct file f;
    struct ana_sym_arena arena = {0};
    size_t compared = 0, units = 0;

    if (!open_file(path, &f))
        return 0;
    Dwarf_CU *cu = NULL, *next;
    Dwarf_Die cudie;
    uint8_t type;
    while (dwarf_get_units(f.dw, cu, &next, NULL, &type, &cudie, NULL) == 0) {
        Dwarf_Attribute attr;
        Dwarf_Word off;
        Dwarf_Lines *lines;
        size_t n;

        cu = next;
        if (dwarf_formudata(dwarf_attr(&cudie, DW_AT_stmt_list, &attr), &off) != 0 ||
            dwarf_getsrclines(&cudie, &lines, &n) != 0)
            continue;
        struct ana_sym_lines *lt;
        const char *comp_dir = dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir, &attr));
        assert_int_equal(ana_sym_lines_decode(&lt, &f.sec, off, comp_dir), 0);
        units++;
        for (size_t i = 0; i + 1 < n; i++) {
            Dwarf_Line *l = dwarf_onesrcline(lines, i), *nx = dwarf_onesrcline(lines, i + 1);
            Dwarf_Addr a, an;
            bool end;
            int line, col;
            dwarf_lineaddr(l, &a);
            dwarf_lineaddr(nx, &an);
            dwarf_lineendsequence(l, &end);
            /* Rows sharing an address (a sequence's end included, which
             * libdw may sort either side) are ties libdw breaks its own
             * way; the last row is the one in effect, and ours. */
            Dwarf_Addr ap = a + 1;
            if (i > 0)
                dwarf_lineaddr(dwarf_onesrcline(lines, i - 1), &ap);
            if (end || an == a || ap == a)
                continue;
            dwarf_lineno(l, &line);
            dwarf_linecol(l, &col);
            uint32_t ofile, oline, ocol;
            if (ana_sym_lines_find(lt, a, &ofile, &oline, &ocol) != 0)
                fail_msg("%s: 0x%lx: libdw has line %d, we have none", path, (unsigned long)a, line);
            const char *want = base_name(dwarf_linesrc(l, NULL, NULL));
            const char *got = base_name(ana_sym_lines_file(lt, &arena, ofile));
            if ((int)oline != line || (int)ocol != col || !got || strcmp(want, got))
                fail_msg("%s: 0x%lx: libdw %s:%d:%d, we %s:%u:%u", path, (unsigned long)a, want, line, col,
                         got ? got : "?", oline, ocol);
            compared++;
        }
        ana_sym_lines_free(lt);
    }
    print_message("  %s: %zu units, %zu rows agree\n", path, units, compared);
    ana_sym_arena_free(&arena);
    close_file(&f);
    return compared;
}

static void test_same_as_libdw(void **state)
{
    assert_true(compare_file(symfix_program("sym_chain")) > 40);
    assert_true(compare_file(symfix_program("libsym_plugin.so")) >= 2);
}

/* The path of libc's debug file (libc6-dbg) in path; false if absent. */
static bool libc_debug_file(char *path, size_t size)
{
    const void *id;

    int fd = open("/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY);
    if (fd < 0)
        return false;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    assert_non_null(elf);
    ssize_t len = dwelf_elf_gnu_build_id(elf, &id);
    assert_true(len > 1);
    const unsigned char *b = id;
    int n = snprintf(path, size, "/usr/lib/debug/.build-id/%02x/", b[0]);
    for (ssize_t i = 1; i < len; i++)
        n += snprintf(path + n, size - (size_t)n, "%02x", b[i]);
    snprintf(path + n, size - (size_t)n, ".debug");
    elf_end(elf);
    close(fd);
    return access(path, R_OK) == 0;
}

/* libc's debug file: hundreds of units, compressed sections. */
static void test_same_as_libdw_libc(void **state)
{
    char path[512];

    if (!libc_debug_file(path, sizeof(path)))
        skip();
    assert_true(compare_file(path) > 10000);
}

/* A function's first addresses are resolved by walking its DIEs, later
 * ones through an index of its body: both must give the same chains. The
 * first pass over every line address of sym_chain and libc's debug file
 * (when installed) walks (and, past 8 addresses per function, indexes);
 * the second pass finds the indexes built and must agree. */
static size_t chains_agree(const char *path)
{
    struct file f;
    struct ana_sym_dwarf *d;
    uint64_t *pcs = NULL;
    size_t nr = 0, cap = 0, differ = 0;

    if (!open_file(path, &f))
        return 0;
    assert_int_equal(ana_sym_dwarf_open(&d, f.elf), 0);
    Dwarf_CU *cu = NULL, *next;
    Dwarf_Die cudie;
    uint8_t type;
    while (dwarf_get_units(f.dw, cu, &next, NULL, &type, &cudie, NULL) == 0) {
        Dwarf_Lines *lines;
        size_t n;
        cu = next;
        if (dwarf_getsrclines(&cudie, &lines, &n) != 0)
            continue;
        for (size_t i = 0; i < n; i++) {
            Dwarf_Addr a;
            dwarf_lineaddr(dwarf_onesrcline(lines, i), &a);
            if (nr == cap) {
                cap = cap ? cap * 2 : 1024;
                pcs = realloc(pcs, cap * sizeof(*pcs));
                assert_non_null(pcs);
            }
            pcs[nr++] = a;
        }
    }
    struct ana_sym_dwarf_chain *first = calloc(nr, sizeof(*first));
    assert_non_null(first);
    for (size_t i = 0; i < nr; i++)
        ana_sym_dwarf_lookup(d, pcs[i], &first[i]);
    for (size_t i = 0; i < nr; i++) {
        struct ana_sym_dwarf_chain again;
        ana_sym_dwarf_lookup(d, pcs[i], &again);
        bool same = again.nr_frames == first[i].nr_frames;
        for (uint32_t k = 0; same && k < again.nr_frames; k++)
            same = again.frames[k].name == first[i].frames[k].name &&
                   again.frames[k].line == first[i].frames[k].line;
        if (!same && differ++ < 5)
            print_message("  0x%lx: %u frames, then %u\n", (unsigned long)pcs[i], first[i].nr_frames,
                          again.nr_frames);
    }
    print_message("  %s: %zu addresses, %zu differ\n", path, nr, differ);
    assert_int_equal(differ, 0);
    free(first);
    free(pcs);
    ana_sym_dwarf_close(d);
    close_file(&f);
    return nr;
}

static void test_path_walk_and_index_agree(void **state)
{
    char path[512];

    assert_true(chains_agree(symfix_program("sym_chain")) > 100);
    if (libc_debug_file(path, sizeof(path)))
        assert_true(chains_agree(path) > 10000);
}

/* Flipped bytes and cut tables: 0 or -EPROTO, and ASan watches the reads. */
static void test_corrupt_tables(void **state)
{
    struct file f;
    uint64_t seed = 12345;
    size_t accepted = 0, refused = 0;

    assert_true(open_file(symfix_program("sym_chain"), &f));
    size_t size = f.sec.line_size;
    uint8_t *copy = malloc(size);
    assert_non_null(copy);
    for (int round = 0; round < 3000; round++) {
        memcpy(copy, f.sec.line, size);
        struct ana_sym_sections sec = f.sec;
        sec.line = copy;
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        if (round % 3 == 0) {
            sec.line_size = (size_t)(seed >> 33) % size; /* cut */
        } else {
            for (int k = 0; k < 1 + round % 8; k++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                copy[(seed >> 33) % size] ^= (uint8_t)(1u << ((seed >> 20) % 8));
            }
        }
        struct ana_sym_lines *lt;
        int rc = ana_sym_lines_decode(&lt, &sec, 0, "/tmp");
        if (rc == 0) {
            uint32_t a, b, c;
            struct ana_sym_arena arena = {0};
            for (uint64_t pc = 0; pc < 0x3000; pc += 7)
                if (ana_sym_lines_find(lt, pc, &a, &b, &c) == 0)
                    ana_sym_lines_file(lt, &arena, a);
            ana_sym_arena_free(&arena);
            ana_sym_lines_free(lt);
            accepted++;
        } else {
            assert_int_equal(rc, -EPROTO);
            refused++;
        }
    }
    print_message("  %zu corrupt tables decoded anyway, %zu refused\n", accepted, refused);
    assert_true(refused > 0);
    free(copy);
    close_file(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_libdw),
        cmocka_unit_test(test_same_as_libdw_libc),
        cmocka_unit_test(test_path_walk_and_index_agree),
        cmocka_unit_test(test_corrupt_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
