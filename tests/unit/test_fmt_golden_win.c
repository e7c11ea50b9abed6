/* SPDX-License-Identifier: MIT */
/* Format 1.2, traces of Windows programs (docs/windows.md, "The trace"):
 * tests/golden/v1_2_windows.mscr, written from golden_win_events() with
 * the PE feature bit, must read back exactly (its dump is compared with
 * v1_2_windows.dump by tests/e2e/dump_golden.sh). A writer without the bit
 * refuses the Windows kinds and writes a 1.1 file. MS_FMT_WRITE_GOLDEN_1_2
 * =PATH writes the golden file anew: only for a new format version, into
 * a new file. tests/golden/v1_3_wine.mscr, format 1.3 with the META
 * records WINE_PREFIX and WINE_DLL_DIR (a Windows program's trace as
 * `memscribe record` writes it), reads back with them; MS_FMT_WRITE_GOLDEN_
 * WINE=PATH wrote it (test_sym_pe.c symbolizes it through the prefix). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_fmt_util.h"

#ifndef MS_GOLDEN_DIR
#error "MS_GOLDEN_DIR must name tests/golden"
#endif

#define HEAP 0x5a0000ull
#define HEAP2 0x17c0000ull

static const struct fmt_module pe_module = {
    .base = 0x140000000ull,
    .path = "Z:\\tmp\\prog.exe",
    .path_len = 15,
    .build_id_len = 20, /* CodeView GUID, age 1 */
    .build_id = {0x32, 0x9d, 0x97, 0x01, 0x10, 0x83, 0x9c, 0xa7, 0xa5, 0x9a,
                 0x42, 0x28, 0x35, 0x5d, 0xd8, 0xc8, 1,    0,    0,    0},
    .nr_segments = 1,
    .segments = {{0, 0x2d000, 0, 5}},
};

static struct fmt_event mk(uint16_t kind, uint64_t *ts, uint32_t stack)
{
    struct fmt_event ev = tfmt_mk(kind, *ts += 100, 0);

    ev.stack = stack;
    return ev;
}

/* The process's start by CreateProcess (arg0 its parent's pid) and its
 * program loaded: ev[0..2). */
static size_t pe_start(struct fmt_event *ev, uint64_t *ts, uint64_t arg0)
{
    ev[0] = mk(FMT_EV_PROCESS_START, ts, 0);
    ev[0].arg[0] = arg0;
    ev[0].arg[1] = FMT_START_CREATEPROCESS;
    ev[0].str = pe_module.path;
    ev[0].str_len = pe_module.path_len;
    ev[1] = mk(FMT_EV_MODULE_LOAD, ts, 0);
    ev[1].addr = pe_module.base;
    ev[1].module = &pe_module;
    return 2;
}

/* A process with every Windows kind: two heaps (one destroyed with a block
 * still in it), HeapAlloc/ReAlloc/Free with flags, a reservation committed,
 * protected, decommitted and released, a failed commit, an image view
 * mapped before tracing and a section view mapped and unmapped. Stacks
 * 1..2, which the caller interns. */
static size_t golden_win_events(struct fmt_event *ev)
{
    uint64_t ts = 1000;
    size_t n = 0;

    n += pe_start(&ev[n], &ts, 4);
    ev[n] = mk(FMT_EV_SECTION_MAP, &ts, 0);
    ev[n].origin = FMT_ORIGIN_SNAPSHOT;
    ev[n].addr = pe_module.base;
    ev[n].size = 0x2d000;
    ev[n].arg[0] = 0x20;        /* PAGE_EXECUTE_READ */
    ev[n++].arg[1] = 0x1000000; /* MEM_IMAGE */
    ev[n] = mk(FMT_EV_HEAP_CREATE, &ts, 1);
    ev[n].addr = HEAP2;
    ev[n].size = 0x100000;
    ev[n].arg[0] = 0x2; /* HEAP_GROWABLE */
    ev[n++].arg[1] = 0x2000;
    ev[n] = mk(FMT_EV_MALLOC, &ts, 1);
    ev[n].addr = HEAP + 0x40;
    ev[n].size = 40;
    ev[n].arg[0] = 0x8; /* HEAP_ZERO_MEMORY */
    ev[n++].arg[1] = HEAP;
    ev[n] = mk(FMT_EV_MALLOC, &ts, 2);
    ev[n].addr = HEAP2 + 0x370;
    ev[n].size = 100;
    ev[n++].arg[1] = HEAP2;
    ev[n] = mk(FMT_EV_REALLOC, &ts, 2);
    ev[n].old_addr = HEAP + 0x40;
    ev[n].addr = HEAP + 0x40;
    ev[n].size = 60;
    ev[n].flags = FMT_EVF_IN_PLACE;
    ev[n++].arg[1] = HEAP;
    ev[n] = mk(FMT_EV_FREE, &ts, 2);
    ev[n].addr = HEAP + 0x40;
    ev[n++].arg[1] = HEAP;
    ev[n] = mk(FMT_EV_FREE, &ts, 0);
    ev[n].addr = HEAP2 + 0x370;
    ev[n].flags = FMT_EVF_HEAP_DESTROYED;
    ev[n++].arg[1] = HEAP2;
    ev[n] = mk(FMT_EV_HEAP_DESTROY, &ts, 1);
    ev[n++].addr = HEAP2;
    ev[n] = mk(FMT_EV_VM_RESERVE, &ts, 1);
    ev[n].addr = 0x1cc0000;
    ev[n].size = 0x100000;
    ev[n].arg[0] = 0x1;    /* PAGE_NOACCESS */
    ev[n].arg[1] = 0x2000; /* MEM_RESERVE */
    ev[n++].arg[2] = 0x100000;
    ev[n] = mk(FMT_EV_VM_COMMIT, &ts, 2);
    ev[n].addr = 0x1cd0000;
    ev[n].size = 0x2000;
    ev[n].arg[0] = 0x4; /* PAGE_READWRITE */
    ev[n].arg[1] = 0x1000;
    ev[n++].arg[2] = 0x1800;
    ev[n] = mk(FMT_EV_VM_COMMIT, &ts, 2);
    ev[n].flags = FMT_EVF_FAILED;
    ev[n].addr = 0x1;
    ev[n].size = 0x1000;
    ev[n].arg[0] = 0x4;
    ev[n++].arg[1] = 0x1000;
    ev[n] = mk(FMT_EV_VM_PROTECT, &ts, 2);
    ev[n].addr = 0x1cd0000;
    ev[n].size = 0x1000;
    ev[n].arg[0] = 0x2; /* PAGE_READONLY, was PAGE_READWRITE */
    ev[n++].arg[1] = 0x4;
    ev[n] = mk(FMT_EV_VM_DECOMMIT, &ts, 2);
    ev[n].addr = 0x1cd0000;
    ev[n].size = 0x2000;
    ev[n++].arg[1] = 0x4000;
    ev[n] = mk(FMT_EV_VM_RELEASE, &ts, 2);
    ev[n].addr = 0x1cc0000;
    ev[n].size = 0x100000;
    ev[n++].arg[1] = 0x8000;
    ev[n] = mk(FMT_EV_SECTION_MAP, &ts, 1);
    ev[n].addr = 0x2000000;
    ev[n].size = 0x11000;
    ev[n].arg[0] = 0x2;
    ev[n++].arg[2] = 0x44; /* the section handle */
    ev[n] = mk(FMT_EV_SECTION_UNMAP, &ts, 1);
    ev[n].addr = 0x2000000;
    ev[n++].size = 0x11000;
    ev[n] = mk(FMT_EV_PROCESS_EXIT, &ts, 0);
    ev[n].arg[0] = 7;
    ev[n++].arg[1] = 1;
    return n;
}

static void start_coded(struct tfmt *t, int pe, int zlib)
{
    struct fmt_writer_options opt = {.chunk_events = 8, .pe_process = pe, .zlib = zlib};

    tfmt_start_short(t, &opt, NULL);
}

static void start(struct tfmt *t, int pe)
{
    start_coded(t, pe, 0);
}

/* The events with their stacks interned on t's writer. */
static size_t events(struct tfmt *t, struct fmt_event *ev)
{
    static const uint64_t frames[3] = {0x7b00a000ull, 0x140001713ull, 0x140001a45ull};

    return tfmt_two_stacks(t, frames, 3, ev, golden_win_events(ev));
}

static void test_golden_v1_2_windows(void **state)
{
    struct fmt_event want[32];
    struct fmt_reader *r;
    struct tfmt t;

    (void)state;
    start(&t, 1);
    size_t n = events(&t, want);
    r = tfmt_golden_open(&t, want, n, "MS_FMT_WRITE_GOLDEN_1_2",
                         MS_GOLDEN_DIR "/v1_2_windows.mscr");
    assert_int_equal(fmt_reader_info(r)->version_minor, 2);
    assert_true(fmt_reader_pe(r));
    tfmt_read_expect(r, want, n);
    fmt_reader_close(r);
}

/* Without the PE bit: every Windows kind refused, the file stays 1.1. */
static void test_windows_kinds_need_pe(void **state)
{
    struct fmt_event ev[32];
    struct tfmt t;

    (void)state;
    start(&t, 0);
    size_t n = events(&t, ev);
    for (size_t i = 0; i < n; i++) {
        int win = ev[i].kind == FMT_EV_HEAP_CREATE || ev[i].kind == FMT_EV_HEAP_DESTROY ||
                  fmt_kind_is_win_vm(ev[i].kind);
        assert_int_equal(fmt_writer_event(t.w, &ev[i]), win ? -EINVAL : 0);
    }
    tfmt_finish(&t);
    struct fmt_reader *r = tfmt_open(&t);
    assert_int_equal(fmt_reader_info(r)->version_minor, 1);
    assert_false(fmt_reader_pe(r));
    fmt_reader_close(r);
    tfmt_close(&t);
}

/* The zlib coding (the Windows launcher's): the same events read back, and
 * no zstd frame in the file. */
static void test_zlib_coding(void **state)
{
    struct fmt_event want[32];
    struct tfmt t;

    (void)state;
    start_coded(&t, 1, 1);
    size_t n = events(&t, want);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(fmt_writer_event(t.w, &want[i]), 0);
    tfmt_finish(&t);
    size_t size;
    uint8_t *p = tfmt_bytes(t.fd, &size);
    static const uint8_t zstd_magic[4] = {0x28, 0xb5, 0x2f, 0xfd};
    assert_null(memmem(p, size, zstd_magic, 4));
    free(p);
    struct fmt_reader *r = tfmt_open(&t);
    tfmt_read_expect(r, want, n);
    fmt_reader_close(r);
    tfmt_close(&t);
}

/* v1_3_wine.mscr: a process whose stacks run through a DLL recorded at
 * C:\\windows\\system32\\golden.dll (no CodeView record, one segment of
 * 0x3000 bytes: the PE test_sym_pe.c makes), and the Wine folders. */
#define GOLDEN_DLL 0x7ff8a0000000ull
static const struct fmt_module wine_dll = {
    .base = GOLDEN_DLL,
    .path = "C:\\windows\\system32\\golden.dll",
    .path_len = 30,
    .nr_segments = 1,
    .segments = {{0, 0x3000, 0, 5}},
};
static const char wine_dirs[] = "/wine-golden/x86_64-windows\0/wine-golden/i386-windows";

static size_t golden_wine_events(struct tfmt *t, struct fmt_event *ev)
{
    static const uint64_t frames[2][4] = {
        {GOLDEN_DLL + 0x1015, GOLDEN_DLL + 0x10c1, 0x140001714ull, 0},
        {GOLDEN_DLL + 0x1085, GOLDEN_DLL + 0x1005, GOLDEN_DLL + 0x1301, 0x140001a45ull},
    };
    uint32_t ids[2];
    uint64_t ts = 1000;
    size_t n = 0;

    assert_int_equal(fmt_writer_stack(t->w, 0, frames[0], 3, &ids[0]), 0);
    assert_int_equal(fmt_writer_stack(t->w, 0, frames[1], 4, &ids[1]), 0);
    n += pe_start(&ev[n], &ts, 0);
    ev[n] = mk(FMT_EV_MODULE_LOAD, &ts, 0);
    ev[n].addr = wine_dll.base;
    ev[n++].module = &wine_dll;
    ev[n] = mk(FMT_EV_VM_RESERVE, &ts, ids[0]);
    ev[n].addr = 0x1cc0000;
    ev[n].size = 0x100000;
    ev[n].arg[0] = 0x4;    /* PAGE_READWRITE */
    ev[n].arg[1] = 0x3000; /* MEM_COMMIT | MEM_RESERVE */
    ev[n++].arg[2] = 0x100000;
    ev[n] = mk(FMT_EV_VM_COMMIT, &ts, ids[0]);
    ev[n].addr = 0x1cc0000;
    ev[n].size = 0x100000;
    ev[n].arg[0] = 0x4;
    ev[n].arg[1] = 0x3000;
    ev[n++].arg[2] = 0x100000;
    ev[n] = mk(FMT_EV_MALLOC, &ts, ids[1]);
    ev[n].addr = HEAP + 0x40;
    ev[n].size = 48;
    ev[n++].arg[1] = HEAP;
    ev[n] = mk(FMT_EV_PROCESS_EXIT, &ts, 0);
    ev[n++].arg[1] = 1;
    return n;
}

static void test_golden_wine(void **state)
{
    struct fmt_writer_options opt = {.chunk_events = 8, .pe_process = 1, .time_unit_ns = 1};
    const struct fmt_trace_info wine = {.wine_prefix = "/wine-golden/prefix",
                                        .wine_dll_dirs = wine_dirs,
                                        .wine_dll_dirs_len = sizeof(wine_dirs)};
    struct fmt_event want[16];
    struct fmt_reader *r;
    struct tfmt t;

    (void)state;
    tfmt_start_short(&t, &opt, &wine);
    size_t n = golden_wine_events(&t, want);
    r = tfmt_golden_open(&t, want, n, "MS_FMT_WRITE_GOLDEN_WINE", MS_GOLDEN_DIR "/v1_3_wine.mscr");
    const struct fmt_trace_info *info = fmt_reader_info(r);
    assert_int_equal(info->version_minor, 3);
    assert_string_equal(info->wine_prefix, "/wine-golden/prefix");
    assert_int_equal(info->wine_dll_dirs_len, sizeof(wine_dirs));
    assert_memory_equal(info->wine_dll_dirs, wine_dirs, sizeof(wine_dirs));
    tfmt_read_expect(r, want, n);
    fmt_reader_close(r);
}

/* A trace without them (every golden file before) has none. */
static void test_no_wine(void **state)
{
    struct fmt_reader *r = tfmt_open_path(MS_GOLDEN_DIR "/v1_2_windows.mscr");

    (void)state;
    assert_null(fmt_reader_info(r)->wine_prefix);
    assert_null(fmt_reader_info(r)->wine_dll_dirs);
    assert_int_equal(fmt_reader_info(r)->wine_dll_dirs_len, 0);
    fmt_reader_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_v1_2_windows),
        cmocka_unit_test(test_windows_kinds_need_pe),
        cmocka_unit_test(test_zlib_coding),
        cmocka_unit_test(test_golden_wine),
        cmocka_unit_test(test_no_wine),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
