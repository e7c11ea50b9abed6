/* SPDX-License-Identifier: MIT */
/* Helpers for the format tests: memfd traces and the reference model. */
#include "test_fmt_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

void tfmt_start(struct tfmt *t, uint32_t chunk_events)
{
    tfmt_start_unit(t, chunk_events, 0);
}

void tfmt_start_unit(struct tfmt *t, uint32_t chunk_events, uint32_t time_unit_ns)
{
    tfmt_start_pack(t, chunk_events, time_unit_ns, 0);
}

void tfmt_start_pack(struct tfmt *t, uint32_t chunk_events, uint32_t time_unit_ns, int time_pack)
{
    struct fmt_writer_options opt = {.chunk_events = chunk_events,
                                     .time_unit_ns = time_unit_ns,
                                     .time_pack = time_pack,
                                     .free_ranks = time_pack > 1,
                                     .realloc_pred = time_pack > 2};

    tfmt_start_opt(t, &opt);
}

struct fmt_trace_info tfmt_info(const char *command, uint32_t command_len)
{
    return (struct fmt_trace_info){.start_realtime_ns = 1700000000123456789ull,
                                   .start_monotonic_ns = 5000000000ull,
                                   .recorder_pid = 4242,
                                   .stack_depth = 64,
                                   .command = command,
                                   .command_len = command_len,
                                   .hostname = "testhost"};
}

void tfmt_start_opt(struct tfmt *t, const struct fmt_writer_options *opt)
{
    const struct fmt_trace_info info = tfmt_info("prog\0arg1\0arg 2", 15);

    tfmt_start_info(t, opt, &info);
}

void tfmt_start_info(struct tfmt *t, const struct fmt_writer_options *opt,
                     const struct fmt_trace_info *info)
{
    memset(t, 0, sizeof(*t));
    t->fd = memfd_create("trace", MFD_CLOEXEC);
    assert_true(t->fd >= 0);
    t->info = *info;
    assert_int_equal(fmt_writer_create(&t->w, t->fd, &t->info, opt), 0);
}

void tfmt_start_short(struct tfmt *t, const struct fmt_writer_options *opt,
                      const struct fmt_trace_info *base)
{
    struct fmt_trace_info info = base ? *base : (struct fmt_trace_info){0};

    info.start_realtime_ns = 1700000000123456789ull;
    info.recorder_pid = 4242;
    info.stack_depth = 32;
    tfmt_start_info(t, opt, &info);
}

void tfmt_restart(struct tfmt *t, int zstd_level, uint32_t chunk_events, uint32_t stack_depth)
{
    struct fmt_writer_options opt = {.zstd_level = zstd_level, .chunk_events = chunk_events};

    fmt_writer_destroy(t->w);
    assert_int_equal(ftruncate(t->fd, 0), 0);
    assert_int_equal(lseek(t->fd, 0, SEEK_SET), 0);
    t->info.stack_depth = stack_depth;
    assert_int_equal(fmt_writer_create(&t->w, t->fd, &t->info, &opt), 0);
}

void tfmt_finish(struct tfmt *t)
{
    assert_int_equal(fmt_writer_finish(t->w), 0);
    fmt_writer_destroy(t->w);
    t->w = NULL;
}

struct fmt_reader *tfmt_open(struct tfmt *t)
{
    struct fmt_reader *r = NULL;
    char err[600] = "";
    int rc = fmt_reader_open_fd(&r, t->fd, "mem.trace", err, sizeof(err));

    if (rc)
        fail_msg("open failed: %d %s", rc, err);
    return r;
}

void tfmt_close(struct tfmt *t)
{
    fmt_writer_destroy(t->w);
    t->w = NULL;
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
}

uint8_t *tfmt_bytes(int fd, size_t *size)
{
    off_t end = lseek(fd, 0, SEEK_END);
    assert_true(end >= 0);
    uint8_t *p = malloc((size_t)end + 1);
    assert_non_null(p);
    assert_int_equal(pread(fd, p, (size_t)end, 0), end);
    *size = (size_t)end;
    return p;
}

void tfmt_save(struct tfmt *t, const char *path)
{
    size_t size;
    uint8_t *p;
    FILE *f;

    tfmt_finish(t);
    p = tfmt_bytes(t->fd, &size);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
    free(p);
    tfmt_close(t);
}

void tfmt_check_written(struct tfmt *t, const char *env, tfmt_check_fn *check)
{
    const char *golden = env ? getenv(env) : NULL;

    if (golden) {
        tfmt_save(t, golden);
        return;
    }
    tfmt_finish(t);
    struct fmt_reader *r = tfmt_open(t);
    check(r);
    fmt_reader_close(r);
    tfmt_close(t);
}

void tfmt_check_path(const char *path, tfmt_check_fn *check)
{
    struct fmt_reader *r = tfmt_open_path(path);

    check(r);
    fmt_reader_close(r);
}

struct fmt_reader *tfmt_golden_open(struct tfmt *t, const struct fmt_event *want, size_t n,
                                    const char *env, const char *golden)
{
    if (getenv(env)) {
        for (size_t i = 0; i < n; i++)
            assert_int_equal(fmt_writer_event(t->w, &want[i]), 0);
        tfmt_save(t, getenv(env));
        skip();
    }
    tfmt_close(t);
    return tfmt_open_path(golden);
}

struct fmt_reader *tfmt_open_path(const char *path)
{
    struct fmt_reader *r;
    char err[600];

    if (fmt_reader_open(&r, path, err, sizeof(err)))
        fail_msg("%s", err);
    return r;
}

int tfmt_memfd(const uint8_t *p, size_t size)
{
    int fd = memfd_create("copy", MFD_CLOEXEC);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, p, size), (ssize_t)size);
    return fd;
}

void tmodel_init(struct tmodel *m)
{
    memset(m, 0, sizeof(*m));
    m->next_serial = 1;
}

void tmodel_free(struct tmodel *m)
{
    free(m->live);
    free(m->slot);
}

/* The heap a block of ev lives in: a pool's handle + 1 (format 1.4), 0
 * for malloc's (and every Windows heap, whose blocks never share an
 * address). */
static uint64_t pool_of(const struct fmt_event *ev)
{
    return ev->flags & FMT_EVF_POOL ? ev->arg[1] + 1 : 0;
}

static size_t key_hash(uint32_t image, uint64_t pool, uint64_t addr)
{
    uint64_t h = addr * 0x9e3779b97f4a7c15ull ^ pool * 0xc2b2ae3d27d4eb4full ^ image;
    return (size_t)(h ^ h >> 29);
}

/* The slot of the heap block (image, pool, addr), or of where it would go
 * (the first removed slot on the way, else the empty one ending it). */
static uint32_t *slot_find(struct tmodel *m, uint32_t image, uint64_t pool, uint64_t addr)
{
    uint32_t *reuse = NULL;

    for (size_t h = key_hash(image, pool, addr);; h++) {
        uint32_t *s = &m->slot[h & (m->cap_slot - 1)];
        if (!*s)
            return reuse ? reuse : s;
        if (*s == UINT32_MAX) {
            reuse = reuse ? reuse : s;
            continue;
        }
        const struct tmodel_blk *b = &m->live[*s - 1];
        if (b->image == image && b->pool == pool && b->addr == addr)
            return s;
    }
}

static uint32_t *slot_of(struct tmodel *m, const struct tmodel_blk *b)
{
    return slot_find(m, b->image, b->pool, b->addr);
}

/* Index every heap block again in a table at least four times their
 * number, so that a probe ends soon. */
static void slot_rebuild(struct tmodel *m)
{
    free(m->slot);
    m->cap_slot = 64;
    while (m->cap_slot < 4 * (m->nr_live + 1))
        m->cap_slot *= 2;
    m->slot = calloc(m->cap_slot, sizeof(*m->slot));
    assert_non_null(m->slot);
    m->used_slot = 0;
    for (size_t i = 0; i < m->nr_live; i++)
        if (!m->live[i].vm) {
            *slot_of(m, &m->live[i]) = (uint32_t)i + 1;
            m->used_slot++;
        }
}

static void model_add(struct tmodel *m, const struct tmodel_blk *b)
{
    if (m->nr_live == m->cap_live) {
        m->cap_live = m->cap_live ? m->cap_live * 2 : 64;
        m->live = realloc(m->live, m->cap_live * sizeof(*m->live));
        assert_non_null(m->live);
    }
    m->live[m->nr_live++] = *b;
    if (b->vm)
        return;
    if (2 * (m->used_slot + 1) > m->cap_slot) {
        slot_rebuild(m); /* indexes b too */
        return;
    }
    uint32_t *s = slot_of(m, b);
    if (!*s)
        m->used_slot++; /* a removed slot reused stays counted */
    *s = (uint32_t)m->nr_live;
}

static void model_del(struct tmodel *m, size_t i)
{
    if (!m->live[i].vm)
        *slot_of(m, &m->live[i]) = UINT32_MAX;
    m->live[i] = m->live[--m->nr_live];
    if (i < m->nr_live && !m->live[i].vm)
        *slot_of(m, &m->live[i]) = (uint32_t)i + 1;
}

/* The index in live of the heap block (image, pool, addr), or -1. */
static ptrdiff_t heap_find(struct tmodel *m, uint32_t image, uint64_t pool, uint64_t addr)
{
    if (!m->cap_slot)
        return -1;
    uint32_t s = *slot_find(m, image, pool, addr);
    return s && s != UINT32_MAX ? (ptrdiff_t)s - 1 : -1;
}

static void set_ref(struct fmt_event *ev, const struct tmodel_blk *b)
{
    ev->ref = b->serial;
    ev->ref_size = b->orig_size;
    ev->ref_stack = b->stack;
    ev->ref_ts_ns = b->ts;
    ev->ref_thread = b->thread;
}

/* Heap: the live block at (image, heap, addr), removed. */
static int heap_end(struct tmodel *m, struct fmt_event *ev, uint64_t addr)
{
    ptrdiff_t i = heap_find(m, ev->image, pool_of(ev), addr);

    if (i < 0)
        return 0;
    set_ref(ev, &m->live[i]);
    ev->nr_refs = 1;
    model_del(m, (size_t)i);
    return 1;
}

/* Mappings: cut [a, a+len) out of every piece; ref = the lowest touched. */
static void vm_end(struct tmodel *m, struct fmt_event *ev, uint64_t a, uint64_t len)
{
    uint64_t e = a + len;
    const struct tmodel_blk *low = NULL;
    struct tmodel_blk lowc;
    size_t n = m->nr_live;
    int partial = 0;
    uint32_t touched = 0;

    if (!len)
        return;
    for (size_t i = 0; i < n; i++) {
        struct tmodel_blk *b = &m->live[i];
        if (!b->vm || b->image != ev->image || b->end <= a || b->addr >= e)
            continue;
        touched++;
        if (!low || b->addr < low->addr) {
            lowc = *b;
            low = &lowc;
        }
        if (b->addr >= a && b->end <= e) {
            b->vm = 2; /* removed below */
            continue;
        }
        partial = 1;
        if (b->addr < a && b->end > e) {
            struct tmodel_blk right = *b;
            right.addr = e;
            b->end = a;
            model_add(m, &right);
            b = &m->live[i];
        } else if (b->addr < a) {
            b->end = a;
        } else {
            b->addr = e;
        }
    }
    for (size_t i = m->nr_live; i-- > 0;)
        if (m->live[i].vm == 2)
            model_del(m, i);
    if (touched) {
        set_ref(ev, low);
        ev->nr_refs = touched;
        if (partial)
            ev->flags |= FMT_EVF_PARTIAL;
    }
}

static void start(struct tmodel *m, struct fmt_event *ev, int vm)
{
    struct tmodel_blk b = {0};

    ev->serial = m->next_serial++;
    b.serial = ev->serial;
    b.addr = b.orig_addr = ev->addr;
    b.size = b.orig_size = ev->size;
    b.end = ev->addr + ev->size;
    b.ts = ev->ts_ns;
    b.stack = ev->stack;
    b.thread = ev->thread;
    b.image = ev->image;
    b.vm = (uint32_t)vm;
    b.pool = vm ? 0 : pool_of(ev);
    /* A heap block at an address still live replaces it (its free was
     * missed), as the writer's live map does. */
    ptrdiff_t old = vm ? -1 : heap_find(m, b.image, b.pool, b.addr);
    if (old >= 0)
        model_del(m, (size_t)old);
    if (!vm || ev->size)
        model_add(m, &b);
}

void tmodel_apply(struct tmodel *m, struct fmt_event *ev)
{
    int failed = (ev->flags & FMT_EVF_FAILED) != 0;

    switch (ev->kind) {
    case FMT_EV_MALLOC:
    case FMT_EV_CALLOC:
    case FMT_EV_MEMALIGN ... FMT_EV_PVALLOC:
        if (ev->addr && !failed)
            start(m, ev, 0);
        break;
    case FMT_EV_FREE:
        heap_end(m, ev, ev->addr);
        break;
    case FMT_EV_REALLOC:
    case FMT_EV_REALLOCARRAY:
        if (!failed && ev->old_addr)
            heap_end(m, ev, ev->old_addr);
        if (ev->addr && !failed)
            start(m, ev, 0);
        break;
    case FMT_EV_MMAP:
        if (!failed && ev->addr && ev->addr != UINT64_MAX) {
            vm_end(m, ev, ev->addr, ev->size);
            start(m, ev, 1);
        }
        break;
    case FMT_EV_MUNMAP:
        if (!failed && ev->addr != UINT64_MAX)
            vm_end(m, ev, ev->addr, ev->size);
        break;
    case FMT_EV_MREMAP:
        if (!failed && ev->addr && ev->addr != UINT64_MAX) {
            vm_end(m, ev, ev->old_addr, ev->old_size);
            /* The new range replaces what was there, unreported. */
            struct fmt_event scratch = *ev;
            vm_end(m, &scratch, ev->addr, ev->size);
            start(m, ev, 1);
        }
        break;
    }
}

void tfmt_read_expect(struct fmt_reader *r, struct fmt_event *want, size_t n)
{
    struct fmt_event got;
    struct tmodel m;

    tmodel_init(&m);
    for (size_t i = 0; i < n; i++) {
        tmodel_apply(&m, &want[i]);
        assert_int_equal(fmt_reader_next(r, &got), 1);
        tfmt_assert_event(&want[i], &got, i);
    }
    assert_int_equal(fmt_reader_next(r, &got), 0);
    tmodel_free(&m);
}

static void assert_str(const char *want, uint32_t wlen, const char *got, uint32_t glen,
                       const char *what, uint64_t index)
{
    if (!want || !wlen) {
        if (got && glen)
            fail_msg("event %llu: %s: want none, got %u bytes", (unsigned long long)index, what,
                     glen);
        return;
    }
    if (glen != wlen || !got || memcmp(want, got, wlen))
        fail_msg("event %llu: %s differs", (unsigned long long)index, what);
}

#define FIELD(f)                                                                                   \
    do {                                                                                           \
        if ((uint64_t)want->f != (uint64_t)got->f)                                                 \
            fail_msg("event %llu (%s): " #f ": want %llu (0x%llx), got %llu (0x%llx)",             \
                     (unsigned long long)index, fmt_kind_name(want->kind),                         \
                     (unsigned long long)want->f, (unsigned long long)want->f,                     \
                     (unsigned long long)got->f, (unsigned long long)got->f);                      \
    } while (0)

void tfmt_assert_event(const struct fmt_event *want, const struct fmt_event *got, uint64_t index)
{
    FIELD(kind);
    FIELD(ts_ns);
    FIELD(flags);
    FIELD(origin);
    FIELD(image);
    FIELD(thread);
    FIELD(pid);
    FIELD(tid);
    FIELD(stack);
    FIELD(addr);
    FIELD(size);
    FIELD(old_addr);
    FIELD(old_size);
    FIELD(arg[0]);
    FIELD(arg[1]);
    FIELD(arg[2]);
    FIELD(arg[3]);
    FIELD(serial);
    FIELD(ref);
    FIELD(ref_size);
    FIELD(ref_ts_ns);
    FIELD(ref_stack);
    FIELD(ref_thread);
    FIELD(nr_refs);
    assert_str(want->str, want->str_len, got->str, got->str_len, "str", index);
    assert_str(want->str2, want->str2_len, got->str2, got->str2_len, "str2", index);
    if (want->kind == FMT_EV_MODULE_LOAD) {
        assert_non_null(got->module);
        assert_int_equal(got->module->base, want->module->base);
        assert_str(want->module->path, want->module->path_len, got->module->path,
                   got->module->path_len, "module path", index);
        assert_int_equal(got->module->nr_segments, want->module->nr_segments);
        assert_int_equal(got->module->build_id_len, want->module->build_id_len);
        assert_memory_equal(got->module->build_id, want->module->build_id,
                            want->module->build_id_len);
        for (uint32_t i = 0; i < want->module->nr_segments; i++) {
            assert_int_equal(got->module->segments[i].vaddr, want->module->segments[i].vaddr);
            assert_int_equal(got->module->segments[i].memsz, want->module->segments[i].memsz);
            assert_int_equal(got->module->segments[i].offset, want->module->segments[i].offset);
            assert_int_equal(got->module->segments[i].flags, want->module->segments[i].flags);
        }
    }
}

/* The shared events. */
const struct fmt_module tfmt_test_module = {
    .base = 0x7f0000000000ull,
    .path = "/usr/lib/x86_64-linux-gnu/libtest.so.1",
    .path_len = 38,
    .build_id_len = 20,
    .build_id = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20},
    .nr_segments = 2,
    .segments = {{0, 0x1000, 0, 4}, {0x1000, 0x5000, 0x1000, 5}},
};

struct fmt_event tfmt_mk(uint16_t kind, uint64_t ts, uint32_t thread)
{
    struct fmt_event ev = {0};

    ev.kind = kind;
    ev.ts_ns = ts;
    ev.thread = thread;
    ev.image = thread >= 2 ? 1 : 0;
    ev.pid = thread >= 2 ? 200 : 100;
    ev.tid = 100 + thread * 7;
    return ev;
}

struct fmt_event tfmt_heap(uint16_t kind, uint64_t ts, uint32_t thread, uint64_t addr,
                           uint64_t size, uint32_t stack)
{
    struct fmt_event ev = tfmt_mk(kind, ts, thread);

    ev.addr = addr;
    ev.size = size;
    ev.stack = stack;
    return ev;
}

size_t tfmt_every_kind(struct fmt_event *ev, size_t max)
{
    size_t n = 0;
    uint64_t ts = 1000;

    ev[n] = tfmt_mk(FMT_EV_PROCESS_START, ts, 0);
    ev[n].arg[0] = 99;
    ev[n].arg[1] = FMT_START_INITIAL;
    ev[n].str = "/usr/bin/prog";
    ev[n].str_len = 13;
    ev[n].str2 = "prog\0-x\0file";
    ev[n++].str2_len = 12;
    ev[n] = tfmt_mk(FMT_EV_THREAD_START, ts += 5, 0);
    ev[n].str = "main";
    ev[n++].str_len = 4;
    ev[n] = tfmt_mk(FMT_EV_MODULE_LOAD, ts += 5, 0);
    ev[n++].module = &tfmt_test_module;
    ev[n++] = tfmt_heap(FMT_EV_MALLOC, ts += 10, 0, 0x5555000010, 24, 1);
    ev[n] = tfmt_heap(FMT_EV_CALLOC, ts += 10, 0, 0x5555000100, 40, 2);
    ev[n].arg[0] = 10;
    ev[n++].arg[1] = 4;
    ev[n] = tfmt_heap(FMT_EV_REALLOC, ts += 10, 0, 0x5555000010, 32, 3);
    ev[n].old_addr = 0x5555000010;
    ev[n++].flags = FMT_EVF_IN_PLACE;
    ev[n++] = tfmt_heap(FMT_EV_REALLOC, ts += 10, 0, 0x5555000200, 7, 3); /* from NULL */
    ev[n] = tfmt_heap(FMT_EV_REALLOCARRAY, ts += 10, 0, 0x5555000400, 60, 3);
    ev[n].old_addr = 0x5555000200;
    ev[n].arg[0] = 3;
    ev[n++].arg[1] = 20;
    ev[n] = tfmt_heap(FMT_EV_REALLOC, ts += 10, 0, 0, 0, 3); /* to 0: frees, starts nothing */
    ev[n++].old_addr = 0x5555000400;
    ev[n] = tfmt_heap(FMT_EV_MEMALIGN, ts += 10, 0, 0x5555001000, 100, 0);
    ev[n++].arg[0] = 64;
    ev[n] = tfmt_heap(FMT_EV_POSIX_MEMALIGN, ts += 10, 0, 0x5555002000, 100, 0);
    ev[n].arg[0] = 4096;
    ev[n++].arg[1] = 0;
    ev[n] = tfmt_heap(FMT_EV_POSIX_MEMALIGN, ts += 10, 0, 0, 100, 0); /* failed: EINVAL */
    ev[n].arg[0] = 3;
    ev[n].arg[1] = 22;
    ev[n++].flags = FMT_EVF_FAILED;
    ev[n] = tfmt_heap(FMT_EV_ALIGNED_ALLOC, ts += 10, 1, 0x5555003000, 256, 0);
    ev[n++].arg[0] = 256;
    ev[n++] = tfmt_heap(FMT_EV_VALLOC, ts += 10, 1, 0x5555004000, 10, 0);
    ev[n++] = tfmt_heap(FMT_EV_PVALLOC, ts += 10, 1, 0x5555005000, 4096, 0);
    ev[n] = tfmt_heap(FMT_EV_MALLOC, ts += 10, 1, 0, 1ull << 50, 0); /* failed */
    ev[n++].flags = FMT_EVF_FAILED;
    /* glibc's own mmap */
    ev[n] = tfmt_heap(FMT_EV_MALLOC, ts += 10, 1, 0x7f1234560010, 64 << 20, 0);
    ev[n++].flags = FMT_EVF_LIBC_MMAP;
    ev[n++] = tfmt_heap(FMT_EV_FREE, ts += 10, 1, 0x7f1234560010, 0, 4);
    ev[n++] = tfmt_heap(FMT_EV_FREE, ts += 10, 1, 0, 0, 0);           /* free(NULL) */
    ev[n++] = tfmt_heap(FMT_EV_FREE, ts += 10, 1, 0xdeadbeef0, 0, 0); /* unknown address */
    ev[n++] = tfmt_heap(FMT_EV_FREE, ts += 10, 0, 0x5555000100, 0, 0);
    ev[n] = tfmt_heap(FMT_EV_MMAP, ts += 10, 0, 0x7f0000100000, 0x10000, 5);
    ev[n].arg[0] = 3;
    ev[n].arg[1] = 0x22;
    ev[n].arg[2] = (uint64_t)-1;
    ev[n].arg[3] = 0;
    ev[n++].origin = FMT_ORIGIN_CALL;
    /* a file mapping, from libc */
    ev[n] = tfmt_heap(FMT_EV_MMAP, ts += 10, 0, 0x7f0000200000, 0x3000, 0);
    ev[n].arg[0] = 1;
    ev[n].arg[1] = 0x2;
    ev[n].arg[2] = 7;
    ev[n].arg[3] = 0x2000;
    ev[n++].origin = FMT_ORIGIN_LIBC;
    ev[n] = tfmt_heap(FMT_EV_MPROTECT, ts += 10, 0, 0x7f0000100000, 0x1000, 0);
    ev[n++].arg[0] = 0;
    /* a hole in the middle */
    ev[n++] = tfmt_heap(FMT_EV_MUNMAP, ts += 10, 0, 0x7f0000104000, 0x1000, 0);
    /* across both pieces and beyond */
    ev[n++] = tfmt_heap(FMT_EV_MUNMAP, ts += 10, 0, 0x7f0000100000, 0x200000, 0);
    /* the rest of the file mapping */
    ev[n++] = tfmt_heap(FMT_EV_MUNMAP, ts += 10, 0, 0x7f0000200000, 0x3000, 0);
    ev[n++] = tfmt_heap(FMT_EV_MUNMAP, ts += 10, 0, 0x7f0000200000, 0x3000, 0); /* nothing there */
    ev[n] = tfmt_heap(FMT_EV_MMAP, ts += 10, 0, 0x7f0000300000, 0x4000, 0);
    ev[n].arg[0] = 3;
    ev[n++].arg[1] = 0x22;
    ev[n] = tfmt_heap(FMT_EV_MREMAP, ts += 10, 0, 0x7f0000400000, 0x8000, 0);
    ev[n].old_addr = 0x7f0000300000;
    ev[n].old_size = 0x4000;
    ev[n++].arg[1] = 1;
    /* MAP_FIXED over part of it */
    ev[n] = tfmt_heap(FMT_EV_MMAP, ts += 10, 0, 0x7f0000402000, 0x1000, 0);
    ev[n].arg[0] = 3;
    ev[n++].arg[1] = 0x32;
    ev[n] = tfmt_heap(FMT_EV_MMAP, ts += 10, 0, UINT64_MAX, 0x1000, 0); /* failed */
    ev[n++].flags = FMT_EVF_FAILED;
    ev[n] = tfmt_heap(FMT_EV_BRK, ts += 10, 0, 0x555600000000, 0, 0);
    ev[n++].arg[0] = 0x555600000000;
    ev[n] = tfmt_heap(FMT_EV_SBRK, ts += 10, 0, 0x555600000000, 0, 0);
    ev[n++].arg[0] = (uint64_t)-4096;
    ev[n] = tfmt_mk(FMT_EV_THREAD_START, ts += 10, 2);
    ev[n++].str = NULL;
    ev[n] = tfmt_mk(FMT_EV_PROCESS_START, ts, 2);
    ev[n].arg[0] = 100;
    ev[n].arg[1] = FMT_START_FORK;
    ev[n].str = "/usr/bin/prog";
    ev[n++].str_len = 13;
    /* same address, other image */
    ev[n++] = tfmt_heap(FMT_EV_MALLOC, ts += 10, 2, 0x5555000010, 24, 0);
    ev[n++] = tfmt_heap(FMT_EV_FREE, ts += 10, 2, 0x5555000010, 0, 0);
    ev[n] = tfmt_mk(FMT_EV_THREAD_NAME, ts += 10, 1);
    ev[n].str = "worker\x01";
    ev[n++].str_len = 7;
    ev[n] = tfmt_mk(FMT_EV_RSS, ts += 10, 0);
    ev[n++].size = 123456789;
    ev[n] = tfmt_mk(FMT_EV_DROPPED, ts += 10, 0);
    ev[n++].arg[0] = 17;
    ev[n] = tfmt_mk(FMT_EV_MODULE_UNLOAD, ts += 10, 0);
    ev[n++].addr = tfmt_test_module.base;
    ev[n] = tfmt_mk(FMT_EV_THREAD_EXIT, ts += 10, 1);
    ev[n++].tid = 107;
    ev[n] = tfmt_mk(FMT_EV_PROCESS_EXIT, ts += 10, 2);
    ev[n].arg[0] = 0x100;
    ev[n++].arg[1] = 1;
    /* the realloc'd block, same ts */
    ev[n] = tfmt_heap(FMT_EV_FREE, ts += 10, 0, 0x5555000010, 0, 0);
    ev[n++].ts_ns = ts;
    assert_true(n <= max);
    return n;
}

size_t tfmt_two_stacks(struct tfmt *t, const uint64_t *frames, uint32_t nr, struct fmt_event *ev,
                       size_t n)
{
    uint32_t ids[3] = {0};

    for (uint32_t s = 1; s <= 2; s++) {
        uint64_t f[8];

        assert_true(nr >= 1 && nr <= 8);
        for (uint32_t k = 0; k < nr; k++)
            f[k] = frames[k] + (k + 1 < nr ? s : 0);
        assert_int_equal(fmt_writer_stack(t->w, 0, f, nr, &ids[s]), 0);
    }
    for (size_t i = 0; i < n; i++)
        ev[i].stack = ids[ev[i].stack];
    return n;
}
