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

#include "analysis/sym/ana_sym_internal.h"
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
                fail_msg("%s: 0x%lx: libdw has line %d, we have none", path, (unsigned long)a,
                         line);
            const char *want = base_name(dwarf_linesrc(l, NULL, NULL));
            const char *got = base_name(ana_sym_lines_file(lt, &arena, ofile));
            if ((int)oline != line || (int)ocol != col || !got || strcmp(want, got))
                fail_msg("%s: 0x%lx: libdw %s:%d:%d, we %s:%u:%u", path, (unsigned long)a, want,
                         line, col, got ? got : "?", oline, ocol);
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
    char path[512] = "libc's debug file";

    if (!libc_debug_file(path, sizeof(path))) /* scripts/setup.sh --test installs it */
        fail_msg("%s: no libc6-dbg here: run scripts/setup.sh --test", path);
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
            print_message("  0x%lx: %u frames, then %u\n", (unsigned long)pcs[i],
                          first[i].nr_frames, again.nr_frames);
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

/* ---- a hand-made DWARF 4 line table, with every opcode kind */

struct buf {
    uint8_t b[512];
    size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
    assert_true(b->n + n <= sizeof(b->b));
    memcpy(b->b + b->n, p, n);
    b->n += n;
}

static void put_u8(struct buf *b, uint8_t v)
{
    put(b, &v, 1);
}

static void put_uleb(struct buf *b, uint64_t v)
{
    do {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        put_u8(b, byte | (v ? 0x80 : 0));
    } while (v);
}

static void put_sleb(struct buf *b, int64_t v)
{
    bool more = true;
    while (more) {
        uint8_t byte = v & 0x7f;
        v >>= 7; /* arithmetic on gcc and clang */
        more = !((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40)));
        put_u8(b, byte | (more ? 0x80 : 0));
    }
}

static void expect_row(struct ana_sym_lines *lt, uint64_t pc, uint32_t file, uint32_t line)
{
    uint32_t f, l, c;

    if (ana_sym_lines_find(lt, pc, &f, &l, &c) != 0)
        fail_msg("0x%lx: no row, expected file %u line %u", (unsigned long)pc, file, line);
    if (f != file || l != line)
        fail_msg("0x%lx: file %u line %u, expected file %u line %u", (unsigned long)pc, f, l, file,
                 line);
}

static void test_handmade_table(void **state)
{
    struct buf hdr = {0}, prog = {0}, all = {0};
    static const uint8_t std_lengths[12] = {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};
    uint64_t addr = 0x1000;

    /* After header_length: the fields up to the file table. */
    put_u8(&hdr, 1);           /* minimum_instruction_length */
    put_u8(&hdr, 1);           /* maximum_operations_per_instruction */
    put_u8(&hdr, 1);           /* default_is_stmt */
    put_u8(&hdr, (uint8_t)-5); /* line_base */
    put_u8(&hdr, 14);          /* line_range */
    put_u8(&hdr, 13);          /* opcode_base */
    put(&hdr, std_lengths, sizeof(std_lengths));
    put(&hdr, "inc", 4); /* include_directories[1] */
    put_u8(&hdr, 0);
    put(&hdr, "a.c", 4); /* file 1, directory 0 (the compile directory) */
    put_uleb(&hdr, 0), put_uleb(&hdr, 0), put_uleb(&hdr, 0);
    put(&hdr, "b.h", 4); /* file 2, in directory 1 */
    put_uleb(&hdr, 1), put_uleb(&hdr, 0), put_uleb(&hdr, 0);
    put_u8(&hdr, 0);

    put_u8(&prog, 0), put_uleb(&prog, 9), put_u8(&prog, 2), put(&prog, &addr, 8); /* set_address */
    put_u8(&prog, 3), put_sleb(&prog, 9);  /* advance_line: 10 */
    put_u8(&prog, 1);                      /* copy: 0x1000 a.c:10 */
    put_u8(&prog, 13 + (1 + 5) + 14 * 2);  /* special: +2 bytes, +1 line: 0x1002 a.c:11 */
    put_u8(&prog, 4), put_uleb(&prog, 2);  /* set_file 2 */
    put_u8(&prog, 8);                      /* const_add_pc: +17: 0x1013 */
    put_u8(&prog, 3), put_sleb(&prog, -8); /* advance_line: 3 */
    put_u8(&prog, 12), put_uleb(&prog, 7); /* an opcode known by its length (set_isa) */
    put_u8(&prog, 1);                      /* copy: 0x1013 b.h:3 */
    put_u8(&prog, 9), put_u8(&prog, 0x10), put_u8(&prog, 0); /* fixed_advance_pc: 0x1023 */
    put_u8(&prog, 3), put_sleb(&prog, INT64_MAX); /* a corrupt advance: no line, no overflow */
    put_u8(&prog, 1);                             /* copy: 0x1023, line unknown */
    put_u8(&prog, 2), put_uleb(&prog, 5);         /* advance_pc: 0x1028 */
    put_u8(&prog, 0), put_uleb(&prog, 1), put_u8(&prog, 1); /* end_sequence */

    uint32_t header_length = (uint32_t)hdr.n;
    uint32_t unit_length = (uint32_t)(2 + 4 + hdr.n + prog.n);
    uint16_t version = 4;
    put(&all, &unit_length, 4);
    put(&all, &version, 2);
    put(&all, &header_length, 4);
    put(&all, hdr.b, hdr.n);
    put(&all, prog.b, prog.n);

    struct ana_sym_sections sec = {.line = all.b, .line_size = all.n};
    struct ana_sym_lines *lt;
    struct ana_sym_arena arena = {0};
    uint32_t f, l, c;
    assert_int_equal(ana_sym_lines_decode(&lt, &sec, 0, "/cd"), 0);
    assert_int_equal(ana_sym_lines_find(lt, 0xfff, &f, &l, &c), -ENOENT);
    expect_row(lt, 0x1000, 1, 10);
    expect_row(lt, 0x1001, 1, 10);
    expect_row(lt, 0x1002, 1, 11);
    expect_row(lt, 0x1012, 1, 11);
    expect_row(lt, 0x1013, 2, 3);
    expect_row(lt, 0x1022, 2, 3);
    expect_row(lt, 0x1023, 2, 0);
    expect_row(lt, 0x1027, 2, 0);
    assert_int_equal(ana_sym_lines_find(lt, 0x1028, &f, &l, &c), -ENOENT); /* the sequence's end */
    assert_null(ana_sym_lines_file(lt, &arena, 0)); /* before v5, files count from 1 */
    assert_string_equal(ana_sym_lines_file(lt, &arena, 1),
                        "/cd/a.c"); /* directory 0: the compile directory */
    assert_string_equal(ana_sym_lines_file(lt, &arena, 2), "/cd/inc/b.h");
    assert_null(ana_sym_lines_file(lt, &arena, 3));
    ana_sym_lines_free(lt);

    /* Cut anywhere, it is refused or decoded, never read past its end. */
    for (size_t cut = 0; cut < all.n; cut++) {
        sec.line_size = cut;
        if (ana_sym_lines_decode(&lt, &sec, 0, "/cd") == 0)
            ana_sym_lines_free(lt);
    }
    ana_sym_arena_free(&arena);
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
        cmocka_unit_test(test_handmade_table),
        cmocka_unit_test(test_corrupt_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
