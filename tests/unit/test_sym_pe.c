/* SPDX-License-Identifier: MIT */
/* Windows modules without debug information, and Wine's files: a PE built
 * here byte by byte (64 and 32-bit: code, an export table with an alias, a
 * forwarder, an export by ordinal alone and one of data; no COFF symbols,
 * no DWARF) names its frames by the nearest export below, exactly; the
 * same names every export of a real DLL with nothing else (mingw-w64's
 * zlib1.dll) against objdump's export table; damaged copies are refused
 * or read, never a crash (ASan, UBSan). Windows paths are found through a
 * Wine prefix (dosdevices, drive_c, names without case, system32 read as
 * syswow64 for a 32-bit module, checked by size of image) and Wine's DLL
 * folders, and the golden trace tests/golden/v1_3_wine.mscr is symbolized
 * through the prefix and folders it recorded (under --sysroot). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/sym/ana_sym_internal.h"
#include "memscribe/trace.h"

#ifndef MS_GOLDEN_DIR
#error "MS_GOLDEN_DIR must name tests/golden"
#endif

#define PE_FILE_SIZE 0x800
#define PE_SIZE 0x3000 /* SizeOfImage: headers, .text, .edata */
#define EDATA_RVA 0x2000
#define EDATA_OFF 0x600
#define EXPORT_DIR_SIZE 0x180 /* the forwarder's string lies inside, the data export past it */
#define BASE64 0x7ff8a0000000ull
#define BASE32 0x10000000ull

static char tmp[128]; /* this run's scratch directory */

static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, v);
    put16(p + 2, v >> 16);
}

static uint8_t *edata(uint8_t *p, uint32_t rva)
{
    return p + EDATA_OFF + (rva - EDATA_RVA);
}

/* The PE: .text at RVA 0x1000 (0x200 bytes of file), .edata at 0x2000.
 * Exports: exp_alpha 0x1010, exp_beta and Beta_Alias 0x1040, fwd_heap a
 * forwarder, ordinal 4 (no name) 0x1080, data_item 0x2180 (in .edata),
 * exp_gamma 0x10c0. */
static void make_pe(uint8_t *p, int is64, uint32_t image_size)
{
    static const char *const names[] = {"exp_alpha", "exp_beta",  "Beta_Alias",
                                        "fwd_heap",  "data_item", "exp_gamma"};
    static const uint16_t ords[] = {0, 1, 1, 2, 4, 5};
    static const uint32_t funcs[] = {0x1010, 0x1040, 0x2100, 0x1080, 0x2180, 0x10c0};
    uint8_t *coff = p + 0x44, *opt = coff + 20;
    uint16_t opt_size = is64 ? 240 : 224;
    uint32_t dirs = is64 ? 112 : 96, at = 0x2070;

    memset(p, 0, PE_FILE_SIZE);
    p[0] = 'M';
    p[1] = 'Z';
    put32(p + 60, 0x40);
    memcpy(p + 0x40, "PE\0\0", 4);
    put16(coff, is64 ? 0x8664 : 0x14c);
    put16(coff + 2, 2);
    put16(coff + 16, opt_size);
    put16(coff + 18, 0x2022); /* executable, large address aware, DLL */
    put16(opt, is64 ? 0x20b : 0x10b);
    if (is64) {
        put32(opt + 24, (uint32_t)BASE64);
        put32(opt + 28, (uint32_t)(BASE64 >> 32));
    } else {
        put32(opt + 28, (uint32_t)BASE32);
    }
    put32(opt + 32, 0x1000);
    put32(opt + 36, 0x200);
    put32(opt + 56, image_size);
    put32(opt + 60, 0x400);
    put32(opt + dirs - 4, 16);
    put32(opt + dirs, EDATA_RVA);
    put32(opt + dirs + 4, EXPORT_DIR_SIZE);
    uint8_t *sh = opt + opt_size;
    memcpy(sh, ".text", 5);
    put32(sh + 8, 0x1000);
    put32(sh + 12, 0x1000);
    put32(sh + 16, 0x200);
    put32(sh + 20, 0x400);
    put32(sh + 36, 0x60000020); /* code, execute, read */
    memcpy(sh + 40, ".edata", 6);
    put32(sh + 48, 0x200);
    put32(sh + 52, EDATA_RVA);
    put32(sh + 56, 0x200);
    put32(sh + 60, EDATA_OFF);
    put32(sh + 76, 0x40000040); /* initialized data, read */

    uint8_t *dir = edata(p, EDATA_RVA);
    put32(dir + 12, 0x2150);
    put32(dir + 16, 1);
    put32(dir + 20, 6);
    put32(dir + 24, 6);
    put32(dir + 28, 0x2028);
    put32(dir + 32, 0x2040);
    put32(dir + 36, 0x2058);
    for (uint32_t i = 0; i < 6; i++) {
        put32(edata(p, 0x2028) + 4 * i, funcs[i]);
        put32(edata(p, 0x2040) + 4 * i, at);
        put16(edata(p, 0x2058) + 2 * i, ords[i]);
        strcpy((char *)edata(p, at), names[i]);
        at += (uint32_t)strlen(names[i]) + 1;
    }
    strcpy((char *)edata(p, 0x2100), "NTDLL.RtlAllocateHeap");
    strcpy((char *)edata(p, 0x2150), "golden.dll");
}

#define COFF_OFF PE_FILE_SIZE /* the COFF symbol table of make_pe_coff */
#define COFF_FILE_SIZE (PE_FILE_SIZE + 0x100)

static void coff_put(uint8_t *rec, const char *name, uint32_t value, uint16_t type, uint8_t cls,
                     uint8_t naux)
{
    memcpy(rec, name, strlen(name)); /* at most 8 bytes: short names only */
    put32(rec + 8, value);
    put16(rec + 12, 1); /* .text */
    put16(rec + 14, type);
    rec[16] = cls;
    rec[17] = naux;
}

/* The same PE without its export table, with COFF symbols as mingw's ld
 * leaves them: cfirst at 0x1010 (external), the section definition of
 * `.text$hi` at 0x1030 (a function gcc put in a section of its own and
 * named by no symbol), csecond at 0x1050 (static), the last. */
static void make_pe_coff(uint8_t *p)
{
    uint8_t *coff = p + 0x44, *opt = coff + 20;
    uint8_t *sym = p + COFF_OFF;

    make_pe(p, 1, PE_SIZE);
    memset(p + PE_FILE_SIZE, 0, COFF_FILE_SIZE - PE_FILE_SIZE);
    put32(opt + 112, 0); /* no export directory */
    put32(opt + 116, 0);
    put32(coff + 8, COFF_OFF);
    put32(coff + 12, 4); /* records, the aux one included */
    coff_put(sym, "cfirst", 0x10, 0x20, 2, 0);
    coff_put(sym + 18, ".text$hi", 0x30, 0, 3, 1); /* and its aux record, zeros */
    coff_put(sym + 54, "csecond", 0x50, 0x20, 3, 0);
    put32(sym + 72, 4); /* an empty string table */
}

static void write_file(const char *path, const uint8_t *p, size_t size)
{
    char cmd[600];
    FILE *f;

    snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
    assert_int_equal(system(cmd), 0);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, size, f), size);
    fclose(f);
}

/* A PE of the layout above at path. */
static void plant_pe(const char *path, int is64, uint32_t image_size)
{
    uint8_t pe[PE_FILE_SIZE];

    make_pe(pe, is64, image_size);
    write_file(path, pe, sizeof(pe));
}

static struct fmt_module win_module(const char *path, uint64_t base, uint64_t size)
{
    struct fmt_module m = {.base = base, .path = path, .nr_segments = 1};

    m.path_len = (uint32_t)strlen(path);
    m.segments[0].memsz = size;
    m.segments[0].flags = 5;
    return m;
}

/* The formatted line of a return address in image 0. */
static const char *line_of(struct ana_sym *s, uint64_t addr, char *buf, size_t size)
{
    const struct ana_sym_frame *f;
    int n = ana_sym_resolve(s, 0, addr, ANA_SYM_RETURN, &f);

    assert_int_equal(n, 1);
    struct ana_sym_line l = {.frame = &f[0], .index = 0};
    ana_sym_format_line(&l, buf, size);
    return buf + strlen("[0] ") + 13; /* past the index and address */
}

static void expect_line(struct ana_sym *s, uint64_t addr, const char *want)
{
    char buf[512];

    assert_string_equal(line_of(s, addr, buf, sizeof(buf)), want);
}

/* The exports of the PE as frames of a module at base, file name name. */
static void expect_exports(struct ana_sym *s, uint64_t base, const char *name)
{
    char want[128];

    snprintf(want, sizeof(want), "%s!exp_alpha+0x5", name);
    expect_line(s, base + 0x1015, want);
    snprintf(want, sizeof(want), "%s!exp_gamma+0x1", name);
    expect_line(s, base + 0x10c1, want);
    /* the alias exp_beta (shorter) over Beta_Alias; the export by ordinal
     * alone at 0x1080 has no name: still exp_beta's */
    snprintf(want, sizeof(want), "%s!exp_beta+0x45", name);
    expect_line(s, base + 0x1085, want);
    /* before the first export, and past the code: no name */
    snprintf(want, sizeof(want), "%s+0x1005", name);
    expect_line(s, base + 0x1005, want);
    snprintf(want, sizeof(want), "%s+0x1301", name);
    expect_line(s, base + 0x1301, want);
}

static int has_note(const struct ana_sym *s, const char *part)
{
    for (size_t i = 0; i < ana_sym_nr_notes(s); i++)
        if (strstr(ana_sym_note(s, i), part))
            return 1;
    return 0;
}

static void print_notes(const struct ana_sym *s)
{
    for (size_t i = 0; i < ana_sym_nr_notes(s); i++)
        print_message("    note: %s\n", ana_sym_note(s, i));
}

static int group_setup(void **state)
{
    char cmd[700];

    (void)state;
    snprintf(tmp, sizeof(tmp), "%s/test_sym_pe.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmp))
        return -1;
    /* a prefix as wineboot leaves it: dosdevices/c: -> ../drive_c */
    snprintf(cmd, sizeof(cmd),
             "mkdir -p %s/pfx/dosdevices %s/pfx/drive_c %s/dlls && ln -s ../drive_c "
             "%s/pfx/dosdevices/c:",
             tmp, tmp, tmp, tmp);
    return system(cmd) == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
    char cmd[300];

    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

/* A symbolizer whose Wine is this run's prefix and DLL folder. */
static struct ana_sym *sym_with_wine(const struct ana_sym_options *o)
{
    struct ana_sym *s;
    char prefix[300], dlls[300];

    snprintf(prefix, sizeof(prefix), "%s/pfx", tmp);
    int n = snprintf(dlls, sizeof(dlls), "%s/dlls", tmp);
    assert_int_equal(ana_sym_create(&s, o), 0);
    assert_int_equal(ana_sym_set_wine(s, prefix, dlls, (size_t)n + 1), 0);
    return s;
}

/* The PE planted at tmp/rel (64 or 32-bit), a module recorded at
 * win_path: its frames named by its exports, and --verbose says it came
 * from `from`. */
static void expect_found(const char *rel, int is64, const char *win_path, uint64_t base,
                         const char *shown, const char *from)
{
    struct ana_sym_options o = {.verbose = true};
    char path[300];

    snprintf(path, sizeof(path), "%s/%s", tmp, rel);
    plant_pe(path, is64, PE_SIZE);
    struct ana_sym *s = sym_with_wine(&o);
    struct fmt_module m = win_module(win_path, base, PE_SIZE);
    assert_int_equal(ana_sym_add_module(s, 0, &m), 0);
    expect_exports(s, base, shown);
    print_notes(s);
    assert_true(has_note(s, from));
    ana_sym_destroy(s);
}

/* A 64-bit module at a C:\ path found through the prefix's dosdevices,
 * its names given in another case than the files'. */
static void test_exports_64(void **state)
{
    (void)state;
    expect_found("pfx/drive_c/windows/system32/golden.dll", 1, "C:\\Windows\\System32\\GOLDEN.dll",
                 BASE64, "GOLDEN.dll",
                 "pfx/dosdevices/c:/windows/system32/golden.dll (the Wine prefix the trace "
                 "recorded), symbols only");
}

/* A 32-bit module recorded at system32 in a 64-bit prefix: the 64-bit
 * file there is another size of image, the 32-bit one in syswow64 is
 * taken. */
static void test_exports_32_syswow64(void **state)
{
    char path[300];

    (void)state;
    snprintf(path, sizeof(path), "%s/pfx/drive_c/windows/system32/wow.dll", tmp);
    plant_pe(path, 1, PE_SIZE + 0x1000);
    expect_found("pfx/drive_c/windows/syswow64/wow.dll", 0, "C:\\windows\\system32\\wow.dll",
                 BASE32, "wow.dll", "/windows/syswow64/wow.dll (the Wine prefix");
}

/* Not in the prefix: by name in Wine's DLL folder. */
static void test_dll_folder(void **state)
{
    (void)state;
    expect_found("dlls/other.dll", 1, "C:\\windows\\system32\\other.dll", BASE64, "other.dll",
                 "(Wine's DLL folder the trace recorded)");
}

/* COFF function symbols end where the next code starts: a function
 * without a symbol of its own (a section definition marks it) is not
 * named after the one before it; the last one runs to the section's end. */
static void test_coff_bounds(void **state)
{
    struct ana_sym_options o = {0};
    uint8_t pe[COFF_FILE_SIZE];
    char path[300];

    (void)state;
    make_pe_coff(pe);
    snprintf(path, sizeof(path), "%s/dlls/coff.dll", tmp);
    write_file(path, pe, sizeof(pe));
    struct ana_sym *s = sym_with_wine(&o);
    struct fmt_module m = win_module("C:\\windows\\system32\\coff.dll", BASE64, PE_SIZE);
    assert_int_equal(ana_sym_add_module(s, 0, &m), 0);
    expect_line(s, BASE64 + 0x1015, "coff.dll!cfirst+0x5");
    expect_line(s, BASE64 + 0x1030, "coff.dll!cfirst+0x20");
    expect_line(s, BASE64 + 0x1031, "coff.dll+0x1031");
    expect_line(s, BASE64 + 0x1055, "coff.dll!csecond+0x5");
    expect_line(s, BASE64 + 0x1200, "coff.dll!csecond+0x1b0");
    expect_line(s, BASE64 + 0x1201, "coff.dll+0x1201");
    print_notes(s);
    assert_int_equal(ana_sym_nr_notes(s), 0);
    ana_sym_destroy(s);
}

/* Another build (size of image differs) or no file: module+offset and a
 * note saying where it looked. */
static void test_refused_and_missing(void **state)
{
    struct ana_sym_options o = {0};
    char path[300];

    (void)state;
    snprintf(path, sizeof(path), "%s/pfx/drive_c/windows/system32/golden.dll", tmp);
    plant_pe(path, 1, PE_SIZE);
    struct ana_sym *s = sym_with_wine(&o);
    struct fmt_module m = win_module("C:\\windows\\system32\\golden.dll", BASE64, PE_SIZE + 0x2000);
    struct fmt_module gone = win_module("C:\\windows\\system32\\gone.dll", BASE32, PE_SIZE);
    assert_int_equal(ana_sym_add_module(s, 0, &m), 0);
    assert_int_equal(ana_sym_add_module(s, 0, &gone), 0);
    expect_line(s, BASE64 + 0x1015, "golden.dll+0x1015");
    expect_line(s, BASE32 + 0x1015, "gone.dll+0x1015");
    print_notes(s);
    assert_int_equal(ana_sym_nr_notes(s), 2);
    assert_true(has_note(s, "C:\\windows\\system32\\golden.dll: size of image differs from the "
                            "recorded one in the Wine prefix"));
    assert_true(has_note(s, "C:\\windows\\system32\\gone.dll: not found in the Wine prefix"));
    assert_true(has_note(s, "/dlls (recorded), or --debug-dir; frames show module+offset"));
    ana_sym_destroy(s);
}

/* The golden trace's Wine folders, taken under --sysroot: the prefix
 * (here without dosdevices: C: is its drive_c), then the DLL folder. */
static void symbolize_golden(const char *sysroot)
{
    static const char *const want[] = {
        "[0] 7ff8a0001015 golden.dll!exp_alpha+0x5", "[1] 7ff8a00010c1 golden.dll!exp_gamma+0x1",
        "[2] 000140001714 prog.exe+0x1714",          "[0] 7ff8a0001085 golden.dll!exp_beta+0x45",
        "[1] 7ff8a0001005 golden.dll+0x1005",        "[2] 7ff8a0001301 golden.dll+0x1301",
        "[3] 000140001a45 prog.exe+0x1a45",
    };
    struct ana_sym_options o = {.sysroot = sysroot, .show_internal = true};
    struct fmt_reader *r;
    struct ana_sym *s;
    char err[600];
    size_t k = 0;

    if (fmt_reader_open(&r, MS_GOLDEN_DIR "/v1_3_wine.mscr", err, sizeof(err)))
        fail_msg("%s", err);
    assert_int_equal(ana_sym_create(&s, &o), 0);
    assert_int_equal(ana_sym_add_trace_modules(s, r), 0);
    for (uint32_t id = 3; id <= 7; id += 4) { /* the events' stacks (v1_3_wine.dump) */
        uint64_t frames[8];
        uint32_t image;
        struct ana_sym_stack st = {0};
        int depth = fmt_reader_stack(r, id, &image, frames, 8);
        assert_true(depth >= 3);
        assert_int_equal(ana_sym_stack(s, image, frames, (uint32_t)depth, &st), 0);
        for (uint32_t i = 0; i < st.nr_lines; i++, k++) {
            char line[256];
            ana_sym_format_line(&st.lines[i], line, sizeof(line));
            assert_true(k < sizeof(want) / sizeof(want[0]));
            assert_string_equal(line, want[k]);
        }
        ana_sym_stack_release(&st);
    }
    assert_int_equal(k, sizeof(want) / sizeof(want[0]));
    ana_sym_destroy(s);
    fmt_reader_close(r);
}

static void test_golden_trace(void **state)
{
    char root[300], path[400];

    (void)state;
    snprintf(root, sizeof(root), "%s/root1", tmp);
    snprintf(path, sizeof(path), "%s/wine-golden/prefix/drive_c/windows/system32/golden.dll", root);
    plant_pe(path, 1, PE_SIZE);
    symbolize_golden(root);
    snprintf(root, sizeof(root), "%s/root2", tmp);
    snprintf(path, sizeof(path), "%s/wine-golden/x86_64-windows/golden.dll", root);
    plant_pe(path, 1, PE_SIZE);
    symbolize_golden(root);
}

/* Each copy of pe (size bytes) with one byte set to 0 and to 0xff (but
 * code bytes, which nothing reads as structure), and cut at every 16
 * bytes, read or refused, never read out of bounds. Returns how many were
 * read. */
static size_t damage(const uint8_t *pe, size_t pe_size)
{
    uint8_t copy[COFF_FILE_SIZE];
    size_t nr_read = 0;

    assert_true(pe_size <= sizeof(copy));
    for (size_t off = 0; off < pe_size; off++) {
        if (off >= 0x200 && off < EDATA_OFF)
            continue;
        for (int v = 0; v < 3; v++) {
            size_t size = pe_size;
            memcpy(copy, pe, pe_size);
            if (v < 2)
                copy[off] = v ? 0xff : 0;
            else if (off % 16 == 0)
                size = off; /* cut */
            else
                continue;
            int fd = memfd_create("pe", MFD_CLOEXEC), efd;
            assert_true(fd >= 0);
            assert_int_equal(write(fd, copy, size), (ssize_t)size);
            struct ana_sym_pe_info info = {0};
            Elf *elf;
            if (ana_sym_pe_open(fd, &efd, &elf, &info) == 0) {
                struct ana_sym_table t;
                assert_int_equal(ana_sym_table_build(&t, &elf, 1), 0);
                ana_sym_table_free(&t);
                elf_end(elf);
                close(efd);
                free(info.pdb_name);
                nr_read++;
            }
            close(fd);
        }
    }
    return nr_read;
}

/* The PE damaged: its headers and export data, and the COFF variant's
 * symbol table. */
static void test_damaged(void **state)
{
    uint8_t pe[COFF_FILE_SIZE];
    size_t nr_read;

    (void)state;
    make_pe(pe, 1, PE_SIZE);
    nr_read = damage(pe, PE_FILE_SIZE);
    print_message("    %zu damaged copies read, the others refused\n", nr_read);
    assert_true(nr_read > 0);
    make_pe_coff(pe);
    nr_read = damage(pe, COFF_FILE_SIZE);
    print_message("    %zu damaged copies with COFF symbols read, the others refused\n", nr_read);
    assert_true(nr_read > 0);
}

#define ZLIB1 "/usr/x86_64-w64-mingw32/lib/zlib1.dll"
#define MAX_EXPORTS 1024

/* A real DLL with nothing but exports (mingw-w64's zlib1.dll: no COFF
 * symbols, no DWARF): each named export's first byte is named by it (or
 * by another name of the same address), against objdump's table. */
static void test_exports_vs_objdump(void **state)
{
    static uint32_t rva[MAX_EXPORTS];
    static struct {
        unsigned idx;
        char name[128];
    } named[MAX_EXPORTS];
    char line[512];
    unsigned size_of_image = 0, idx, x;
    int part = 0, nr = 0;

    (void)state;
    if (access(ZLIB1, R_OK) != 0)
        fail_msg("%s is missing (libz-mingw-w64-dev: scripts/setup.sh --test)", ZLIB1);
    FILE *p = popen("objdump -p " ZLIB1, "r");
    assert_non_null(p);
    while (fgets(line, sizeof(line), p)) {
        if (strstr(line, "Export Address Table -- Ordinal Base"))
            part = 1;
        else if (strstr(line, "[Ordinal/Name Pointer] Table"))
            part = 2;
        else if (sscanf(line, "SizeOfImage %x", &x) == 1)
            size_of_image = x;
        else if (part == 1 && sscanf(line, " [%u] +base[%*u] %x", &idx, &x) == 2 &&
                 idx < MAX_EXPORTS)
            rva[idx] = x;
        else if (part == 2 && nr < MAX_EXPORTS &&
                 sscanf(line, " [%u] %127s", &named[nr].idx, named[nr].name) == 2 &&
                 named[nr].idx < MAX_EXPORTS)
            nr++;
    }
    assert_int_equal(pclose(p), 0);
    assert_true(nr > 50 && size_of_image > 0);

    struct ana_sym_options o = {0};
    struct ana_sym *s;
    uint64_t base = 0x7ff8b0000000ull;
    struct fmt_module m = win_module(ZLIB1, base, size_of_image);
    assert_int_equal(ana_sym_create(&s, &o), 0);
    assert_int_equal(ana_sym_add_module(s, 0, &m), 0);
    for (int i = 0; i < nr; i++) {
        uint32_t at = rva[named[i].idx];
        const struct ana_sym_frame *f;
        int ok = 0;
        assert_int_equal(ana_sym_resolve(s, 0, base + at, ANA_SYM_PRECISE, &f), 1);
        assert_non_null(f->function);
        for (int k = 0; k < nr && !ok; k++)
            ok = rva[named[k].idx] == at && !strcmp(named[k].name, f->function);
        if (!ok || f->function_offset != 0)
            fail_msg("%s at 0x%x: named %s+0x%" PRIx64, named[i].name, at, f->function,
                     f->function_offset);
    }
    print_message("    %d named exports of zlib1.dll resolved to their names\n", nr);
    assert_int_equal(ana_sym_nr_notes(s), 0);
    ana_sym_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exports_64),
        cmocka_unit_test(test_exports_32_syswow64),
        cmocka_unit_test(test_dll_folder),
        cmocka_unit_test(test_coff_bounds),
        cmocka_unit_test(test_refused_and_missing),
        cmocka_unit_test(test_golden_trace),
        cmocka_unit_test(test_damaged),
        cmocka_unit_test(test_exports_vs_objdump),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
