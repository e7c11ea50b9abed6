/* SPDX-License-Identifier: MIT */
/* The synthetic trace of the export tests (test_ana_export_trace.h).
 *
 *  ms  thread  event                          heap   note
 *   1  T0      malloc  A1 100  stack A         100
 *   2  T0      malloc  B1 200  stack B         300
 *   3  T0      free    B1                      100   temporary 1
 *   4  T1      malloc  C1 300  stack C         400
 *   5  T0      malloc  A2  50  stack A         450
 *   6  T1      free    C1                      150   temporary 2 (T0 allocated, T1 did not)
 *   7  T0      free    A2                      100   temporary 3
 *   8  T1      malloc  C2 1000 stack C        1100
 *   9  T0      malloc  B2 400  stack B        1500   the peak: A 100, B 400, C 1000
 *  10  T1      free    C2                      500   temporary 4 (live at the peak)
 *  11  T0      realloc A1 -> A3 150 stack A    550
 *  12  T0      free    B2                      150
 *  13  T0      calloc  D 2 x 16 stack C        182
 *  14  T1      malloc  E 64 stack B            246
 *  15  T1      free    E                       182   temporary 5
 *  16  T0      malloc fails (NULL)             182
 *  end: leaked A3 150 (stack A) and D 32 (stack C): 182 bytes in 2 blocks.
 *
 * Virtual memory (for the SQLite mappings): at 2 ms T0 maps 3 pages
 * PROT_NONE at 0x7f0000000000 (reserved); at 3 ms makes the first page
 * read-write (committed); at 4 ms unmaps the last page; at 12 ms unmaps the
 * rest. At 5 ms it maps one read-write page at 0x7f1000000000, never
 * unmapped.
 *
 * Stack C's frames (0x3100, 0x3200) lie in a module loaded at 0x3000 whose
 * path has '#' in it (massif must not write a '#'); the others are in no
 * module. */
#include "test_ana_export_trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "format/fmt_writer.h"

#define MS 1000000ull
#define PID 4100
#define TID0 4100
#define TID1 4101

struct xw {
    struct fmt_writer *w;
    int rc;
};

static struct fmt_event mk(unsigned kind, uint64_t ms, uint32_t thread)
{
    struct fmt_event ev;

    memset(&ev, 0, sizeof(ev));
    ev.kind = (uint16_t)kind;
    ev.ts_ns = ms * MS;
    ev.thread = thread;
    ev.pid = PID;
    ev.tid = thread ? TID1 : TID0;
    return ev;
}

static void put(struct xw *x, const struct fmt_event *ev)
{
    if (!x->rc)
        x->rc = fmt_writer_event(x->w, ev);
}

static void heap(struct xw *x, unsigned kind, uint64_t ms, uint32_t thread, uint64_t addr,
                 uint64_t size, uint32_t stack)
{
    struct fmt_event ev = mk(kind, ms, thread);

    ev.addr = addr;
    ev.size = size;
    ev.stack = stack;
    put(x, &ev);
}

static void vm(struct xw *x, unsigned kind, uint64_t ms, uint64_t addr, uint64_t size,
               uint64_t prot, uint32_t stack)
{
    struct fmt_event ev = mk(kind, ms, 0);

    ev.addr = addr;
    ev.size = size;
    ev.arg[0] = prot;
    if (kind == FMT_EV_MMAP) {
        ev.arg[1] = MAP_PRIVATE | MAP_ANONYMOUS;
        ev.arg[2] = (uint64_t)-1;
    }
    ev.stack = stack;
    put(x, &ev);
}

static int stacks(struct fmt_writer *w, uint32_t st[3])
{
    static const uint64_t fa[] = {0x1100, 0x1200, 0x1300};
    static const uint64_t fb[] = {0x2100, 0x1200, 0x1300};
    static const uint64_t fc[] = {0x3100, 0x3200};
    int rc;

    if ((rc = fmt_writer_stack(w, 0, fa, 3, &st[0])) ||
        (rc = fmt_writer_stack(w, 0, fb, 3, &st[1])) ||
        (rc = fmt_writer_stack(w, 0, fc, 2, &st[2])))
        return rc;
    return st[0] == XT_STACK_A && st[1] == XT_STACK_B && st[2] == XT_STACK_C ? 0 : -EPROTO;
}

static int create(struct fmt_writer **w, int fd, uint32_t chunk_events)
{
    struct fmt_writer_options opt = {.chunk_events = chunk_events};
    static const char command[] = "synthetic\0--export-test";
    struct fmt_trace_info info = {
        .version_major = 1,
        .start_realtime_ns = 1700000000000000000ull,
        .start_monotonic_ns = 1000000000ull,
        .recorder_pid = 4000,
        .stack_depth = 64,
        .command = command,
        .command_len = sizeof(command),
        .hostname = "testhost",
    };

    return fmt_writer_create(w, fd, &info, &opt);
}

static const struct fmt_module xt_module = {
    .base = 0x3000,
    .path = "/opt/lib#1/libc#.so",
    .path_len = 19,
    .build_id_len = 4,
    .build_id = {0xde, 0xad, 0xbe, 0xef},
    .nr_segments = 1,
    .segments = {{.vaddr = 0, .memsz = 0x1000, .offset = 0, .flags = 1 /* PF_X */}},
};

static void starts(struct xw *x)
{
    struct fmt_event ev = mk(FMT_EV_PROCESS_START, 0, 0);

    ev.arg[0] = 1;
    ev.arg[1] = FMT_START_INITIAL;
    ev.str = "/usr/bin/synthetic";
    ev.str_len = (uint32_t)strlen(ev.str);
    ev.str2 = "synthetic\0--export-test";
    ev.str2_len = 24;
    put(x, &ev);
    ev = mk(FMT_EV_THREAD_START, 0, 0);
    ev.str = "main";
    ev.str_len = 4;
    put(x, &ev);
    ev = mk(FMT_EV_THREAD_START, 0, 1);
    ev.str = "worker";
    ev.str_len = 6;
    put(x, &ev);
    ev = mk(FMT_EV_MODULE_LOAD, 0, 0);
    ev.module = &xt_module;
    put(x, &ev);
}

/* Every trace here starts alike: the writer (chunk_events, 0: the
 * default), the three stacks, the process, its threads and its module. */
static int begin(struct xw *x, int fd, uint32_t chunk_events, uint32_t st[3])
{
    int rc = create(&x->w, fd, chunk_events);

    if (rc)
        return rc;
    if ((rc = stacks(x->w, st))) {
        fmt_writer_destroy(x->w);
        return rc;
    }
    starts(x);
    return 0;
}

static int end(struct xw *x)
{
    int rc = x->rc ? x->rc : fmt_writer_finish(x->w);

    fmt_writer_destroy(x->w);
    return rc;
}

int xtrace_write(int fd)
{
    struct xw x = {0};
    uint32_t st[3];
    int rc;

    if ((rc = begin(&x, fd, 0, st)))
        return rc;
    const uint32_t A = st[0], B = st[1], C = st[2];
    heap(&x, FMT_EV_MALLOC, 1, 0, 0x10000, 100, A);
    heap(&x, FMT_EV_MALLOC, 2, 0, 0x20000, 200, B);
    vm(&x, FMT_EV_MMAP, 2, 0x7f0000000000ull, 3 * 4096, PROT_NONE, C);
    heap(&x, FMT_EV_FREE, 3, 0, 0x20000, 0, B);
    vm(&x, FMT_EV_MPROTECT, 3, 0x7f0000000000ull, 4096, PROT_READ | PROT_WRITE, A);
    heap(&x, FMT_EV_MALLOC, 4, 1, 0x30000, 300, C);
    vm(&x, FMT_EV_MUNMAP, 4, 0x7f0000002000ull, 4096, 0, A);
    heap(&x, FMT_EV_MALLOC, 5, 0, 0x10100, 50, A);
    vm(&x, FMT_EV_MMAP, 5, 0x7f1000000000ull, 4096, PROT_READ | PROT_WRITE, B);
    heap(&x, FMT_EV_FREE, 6, 1, 0x30000, 0, C);
    heap(&x, FMT_EV_FREE, 7, 0, 0x10100, 0, A);
    heap(&x, FMT_EV_MALLOC, 8, 1, 0x40000, 1000, C);
    heap(&x, FMT_EV_MALLOC, 9, 0, 0x50000, 400, B);
    heap(&x, FMT_EV_FREE, 10, 1, 0x40000, 0, C);

    struct fmt_event ev = mk(FMT_EV_REALLOC, 11, 0);
    ev.old_addr = 0x10000;
    ev.addr = 0x60000;
    ev.size = 150;
    ev.stack = A;
    put(&x, &ev);

    heap(&x, FMT_EV_FREE, 12, 0, 0x50000, 0, B);
    vm(&x, FMT_EV_MUNMAP, 12, 0x7f0000000000ull, 2 * 4096, 0, A);

    ev = mk(FMT_EV_CALLOC, 13, 0);
    ev.addr = 0x70000;
    ev.size = 32;
    ev.arg[0] = 2;
    ev.arg[1] = 16;
    ev.stack = C;
    put(&x, &ev);

    heap(&x, FMT_EV_MALLOC, 14, 1, 0x80000, 64, B);
    heap(&x, FMT_EV_FREE, 15, 1, 0x80000, 0, B);

    ev = mk(FMT_EV_MALLOC, 16, 0);
    ev.flags = FMT_EVF_FAILED;
    ev.size = 1ull << 50;
    ev.stack = A;
    put(&x, &ev);

    return end(&x);
}

int xtrace_write_two_at_peak(int fd)
{
    struct xw x = {0};
    uint32_t st[3];
    int rc;

    if ((rc = begin(&x, fd, 0, st)))
        return rc;
    heap(&x, FMT_EV_MALLOC, 1, 0, 0x10000, 100, st[0]);
    heap(&x, FMT_EV_MALLOC, 2, 1, 0x20000, 200, st[1]);
    heap(&x, FMT_EV_FREE, 3, 0, 0x10000, 0, 0);
    heap(&x, FMT_EV_FREE, 4, 1, 0x20000, 0, 0);
    return end(&x);
}

int xtrace_write_spikes(int fd, bool churn)
{
    struct xw x = {0};
    uint32_t st[3];
    int rc;

    if ((rc = begin(&x, fd, 0, st)))
        return rc;
    for (uint64_t ms = 1; ms < 1000; ms++) {
        uint64_t i = ms / 100, addr = 0x10000000 + i * 0x1000000;
        if (ms % 100 == 5)
            heap(&x, FMT_EV_MALLOC, ms, 0, addr, XT_SPIKE_SIZE, st[0]);
        if (ms % 100 == 65)
            heap(&x, FMT_EV_FREE, ms, 0, addr, 0, 0);
        if (churn) {
            heap(&x, FMT_EV_MALLOC, ms, 1, 0x100000, 16, st[2]);
            heap(&x, FMT_EV_FREE, ms, 1, 0x100000, 0, 0);
        }
    }
    return end(&x);
}

int xtrace_write_random(int fd, uint64_t nr_events, uint64_t seed)
{
    struct xw x = {0};
    uint32_t st[3];
    uint64_t live[64] = {0};
    uint64_t rng = seed * 0x9e3779b97f4a7c15ull + 1;
    int rc;

    /* Small chunks, so that readers that seek (windows) cross several. */
    if ((rc = begin(&x, fd, 997, st)))
        return rc;
    for (uint64_t i = 0; i < nr_events && !x.rc; i++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        uint32_t slot = (uint32_t)(rng % 64), thread = (uint32_t)((rng >> 32) % 3);
        uint64_t addr = 0x100000 + (uint64_t)slot * 0x10000 + ((rng >> 40) % 16) * 16;
        uint64_t size = 1 + (rng >> 48) % 1000;
        uint64_t ms = 1 + i / 16;

        if (!live[slot]) {
            heap(&x, FMT_EV_MALLOC, ms, thread, addr, size, st[(rng >> 20) % 3]);
            live[slot] = addr;
        } else if ((rng >> 24) % 4 == 0) {
            struct fmt_event ev = mk(FMT_EV_REALLOC, ms, thread);
            ev.old_addr = live[slot];
            ev.addr = addr != live[slot] ? addr : addr + 8;
            ev.size = size;
            ev.stack = st[(rng >> 20) % 3];
            put(&x, &ev);
            live[slot] = ev.addr;
        } else {
            heap(&x, FMT_EV_FREE, ms, thread, live[slot], 0, 0);
            live[slot] = 0;
        }
    }
    return end(&x);
}

/* Chunks of 2^18 events, not the default 2^19: e2e.export_big compares
 * a reader's memory on 600,000 and 1.5 M events, and both must reach
 * chunks of the full size (the first ones grow from 2^16), which with the
 * default would take a million events and twice the test's time. */
#define XTRACE_BIG_CHUNK_EVENTS (1u << 18)

int xtrace_write_big(int fd, uint64_t nr_events)
{
    struct xw x = {0};
    uint32_t st[3];
    uint64_t live[4096] = {0};
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    int rc;

    if ((rc = begin(&x, fd, XTRACE_BIG_CHUNK_EVENTS, st)))
        return rc;
    for (uint64_t i = 0; i < nr_events && !x.rc; i++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        uint32_t slot = (uint32_t)(rng % 4096), thread = (uint32_t)(rng >> 40) & 1;
        uint64_t ms = 1 + i / 1000;
        if (live[slot]) {
            heap(&x, FMT_EV_FREE, ms, thread, live[slot], 0, 0);
            live[slot] = 0;
        } else {
            live[slot] = 0x100000 + (uint64_t)slot * 0x1000;
            heap(&x, FMT_EV_MALLOC, ms, thread, live[slot], 16 + (rng >> 50) % 512,
                 st[(rng >> 20) % 3]);
        }
    }
    return end(&x);
}

/* A process of xtrace_write_tree: its start (pid, thread) and its module,
 * the synthetic one loaded at base. */
static void child_starts(struct xw *x, uint64_t ms, uint32_t image, uint32_t thread, uint64_t base)
{
    struct fmt_event ev = mk(FMT_EV_PROCESS_START, ms, thread);
    struct fmt_module m = xt_module;

    ev.image = image;
    ev.pid = ev.tid = PID + 100 * image;
    ev.arg[0] = PID;
    ev.arg[1] = FMT_START_INITIAL;
    ev.str = "/usr/bin/child";
    ev.str_len = (uint32_t)strlen(ev.str);
    put(x, &ev);
    ev.kind = FMT_EV_THREAD_START;
    ev.str = "child";
    ev.str_len = 5;
    put(x, &ev);
    m.base = base;
    ev.kind = FMT_EV_MODULE_LOAD;
    ev.str = NULL;
    ev.str_len = 0;
    ev.module = &m;
    put(x, &ev);
}

/* A heap event of a process of xtrace_write_tree (its pid and thread). */
static void child_heap(struct xw *x, unsigned kind, uint64_t ms, uint32_t image, uint32_t thread,
                       uint64_t addr, uint64_t size, uint32_t stack)
{
    struct fmt_event ev = mk(kind, ms, thread);

    ev.image = image;
    ev.pid = ev.tid = PID + 100 * image;
    ev.addr = addr;
    ev.size = size;
    ev.stack = stack;
    put(x, &ev);
}

int xtrace_write_tree(int fd)
{
    static const uint64_t fp[] = {0x5100, 0x5200}, fq[] = {0x5300}, fr[] = {0x9100, 0x9200};
    struct xw x = {0};
    uint32_t st[3], p, q, r;
    int rc;

    if ((rc = begin(&x, fd, 0, st)))
        return rc;
    heap(&x, FMT_EV_MALLOC, 1, 0, 0x10000, 100, st[0]);
    child_starts(&x, 10, 1, 2, 0x5000);
    if ((rc = fmt_writer_stack(x.w, 1, fp, 2, &p)) || (rc = fmt_writer_stack(x.w, 1, fq, 1, &q)))
        x.rc = rc;
    child_heap(&x, FMT_EV_MALLOC, 11, 1, 2, 0x20000, 300, p);
    child_heap(&x, FMT_EV_MALLOC, 12, 1, 2, 0x21000, 40, 0);
    child_heap(&x, FMT_EV_MALLOC, 13, 1, 2, 0x22000, 50, q);
    child_heap(&x, FMT_EV_FREE, 14, 1, 2, 0x22000, 0, q);
    child_heap(&x, FMT_EV_PROCESS_EXIT, 20, 1, 2, 0, 0, 0);
    child_starts(&x, 1500, 2, 3, 0x9000);
    if ((rc = fmt_writer_stack(x.w, 2, fr, 2, &r)))
        x.rc = rc;
    child_heap(&x, FMT_EV_MALLOC, 1501, 2, 3, 0x30000, 600, r);
    child_heap(&x, FMT_EV_MALLOC, 1502, 2, 3, 0x31000, 8, 0);
    child_heap(&x, FMT_EV_FREE, 1503, 2, 3, 0x31000, 0, 0);
    child_heap(&x, FMT_EV_PROCESS_EXIT, 3000, 2, 3, 0, 0, 0);
    heap(&x, FMT_EV_MALLOC, 4000, 0, 0x11000, 70, st[1]);
    heap(&x, FMT_EV_FREE, 4001, 0, 0x11000, 0, st[1]);
    return end(&x);
}
