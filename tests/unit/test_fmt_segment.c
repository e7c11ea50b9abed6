/* SPDX-License-Identifier: MIT */
/* record --keep-last's segments (format 1.9, feature bit SEGMENT: docs/
 * format-events.md "Segments"; docs/aggregate.md "Flight recorder"): a segment
 * written and read back field by field, with its META (number, start,
 * duration) and the blocks it carries in (origin SNAPSHOT); the whole
 * run's META KEEP_LAST alone; a segment's writer given the stacks of
 * another (fmt_writer_copy_stacks: same ids, same frames, window nodes
 * with their limits) and the mappings it holds live (fmt_writer_live_maps:
 * pieces, prot and flags); the bit without its record refused; and
 * tests/golden/v1_9_segment.mscr, which must read back as it always did.
 * MS_FMT_WRITE_GOLDEN_1_9=PATH writes it anew; do that only for a new
 * format version, into a new file. */
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

#include "format/fmt_crc_internal.h"
#include "format/fmt_layout_internal.h"
#include "test_fmt_util.h"

#ifndef MS_GOLDEN_DIR
#error "MS_GOLDEN_DIR must name tests/golden"
#endif

#define MS 1000000ull
#define HEAP 0x5555400000ull
#define MAP 0x7f0000000000ull

static const struct fmt_writer_options seg_opt = {
    .time_unit_ns = 1000, .time_pack = 1, .free_ranks = 1, .realloc_pred = 1, .chunk_events = 4};

static struct fmt_trace_info seg_info(uint32_t nr, uint64_t from)
{
    struct fmt_trace_info info = tfmt_info("svc\0--x", 7);

    info.keep_last_ns = 20 * MS;
    info.segment_nr = nr;
    info.segment_from_ns = from;
    return info;
}

static struct fmt_event mk_heap(uint16_t kind, uint64_t ts, uint64_t addr, uint64_t size,
                                uint32_t stack, uint8_t origin)
{
    struct fmt_event ev = tfmt_heap(kind, ts, 0, addr, size, stack);

    ev.origin = origin;
    return ev;
}

/* Segment 3 from 10 ms: what was live then, carried in at its own times
 * (the process, its thread, a module, a mapping, two blocks), then its own
 * events: a block made and freed, a carried block freed, a leak. */
static size_t segment_events(struct fmt_event *ev)
{
    size_t n = 0;

    ev[n] = tfmt_mk(FMT_EV_PROCESS_START, 0, 0);
    ev[n].arg[0] = 99;
    ev[n].str = "/usr/bin/svc";
    ev[n++].str_len = 12;
    ev[n] = tfmt_mk(FMT_EV_THREAD_START, 0, 0);
    ev[n].str = "svc";
    ev[n++].str_len = 3;
    ev[n] = tfmt_mk(FMT_EV_MODULE_LOAD, 1000, 0);
    ev[n++].module = &tfmt_test_module;
    ev[n] = tfmt_mk(FMT_EV_MMAP, 500000, 0);
    ev[n].origin = FMT_ORIGIN_SNAPSHOT;
    ev[n].addr = MAP;
    ev[n].size = 65536;
    ev[n].arg[0] = 3;  /* PROT_READ | PROT_WRITE */
    ev[n].arg[1] = 34; /* MAP_PRIVATE | MAP_ANONYMOUS */
    ev[n++].arg[2] = (uint64_t)-1;
    ev[n++] = mk_heap(FMT_EV_MALLOC, 1 * MS, HEAP + 0x100, 100, 1, FMT_ORIGIN_SNAPSHOT);
    ev[n] = mk_heap(FMT_EV_CALLOC, 2 * MS, HEAP + 0x200, 64, 2, FMT_ORIGIN_SNAPSHOT);
    ev[n].arg[0] = 4;
    ev[n++].arg[1] = 16;
    ev[n++] = mk_heap(FMT_EV_MALLOC, 10 * MS, HEAP + 0x300, 30, 1, 0);
    ev[n] = mk_heap(FMT_EV_FREE, 11 * MS, HEAP + 0x100, 0, 2, 0);
    ev[n].ref = 5; /* the carried block */
    ev[n].ref_size = 100;
    ev[n].ref_ts_ns = 1 * MS;
    ev[n].ref_stack = 1;
    ev[n].nr_refs = 1;
    ev[n++].ref_count = 1;
    ev[n] = mk_heap(FMT_EV_FREE, 12 * MS, HEAP + 0x300, 0, 2, 0);
    ev[n].ref = 7;
    ev[n].ref_size = 30;
    ev[n].ref_ts_ns = 10 * MS;
    ev[n].ref_stack = 1;
    ev[n].nr_refs = 1;
    ev[n++].ref_count = 1;
    ev[n++] = mk_heap(FMT_EV_MALLOC, 13 * MS, HEAP + 0x400, 48, 1, 0);
    return n;
}

static void write_segment(struct tfmt *t, const struct fmt_trace_info *info)
{
    struct fmt_event ev[16];
    size_t n = segment_events(ev);
    uint64_t frames[2][2] = {{0x401000, 0x402000}, {0x401100, 0x402000}};
    uint32_t id;

    tfmt_start_info(t, &seg_opt, info);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(fmt_writer_stack(t->w, 0, frames[i], 2, &id), 0);
        assert_int_equal(id, (uint32_t)(i == 0 ? 2 : 3)); /* a shared root: node 1 */
    }
    for (size_t i = 0; i < n; i++) {
        ev[i].stack = ev[i].stack ? ev[i].stack + 1 : 0; /* the leaves' ids */
        assert_int_equal(fmt_writer_event(t->w, &ev[i]), 0);
    }
}

static void check_segment(struct fmt_reader *r)
{
    const struct fmt_trace_info *info = fmt_reader_info(r);
    struct fmt_event want[16], got;
    size_t n = segment_events(want);

    assert_int_equal(info->version_minor, 9);
    assert_int_equal(info->keep_last_ns, 20 * MS);
    assert_int_equal(info->segment_nr, 3);
    assert_int_equal(info->segment_from_ns, 10 * MS);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(fmt_reader_next(r, &got), 1);
        assert_int_equal(got.kind, want[i].kind);
        assert_int_equal(got.ts_ns, want[i].ts_ns);
        assert_int_equal(got.origin, want[i].origin);
        assert_int_equal(got.addr, want[i].addr);
        if (fmt_kind_is_heap_alloc(got.kind) || got.kind == FMT_EV_MMAP)
            assert_int_equal(got.size, want[i].size);
        if (got.kind == FMT_EV_MMAP) {
            assert_int_equal(got.arg[0], want[i].arg[0]);
            assert_int_equal(got.arg[1], want[i].arg[1]);
        }
        if (got.kind == FMT_EV_FREE) {
            assert_int_equal(got.ref_size, want[i].ref_size);
            assert_int_equal(got.ref_ts_ns, want[i].ref_ts_ns);
        }
    }
    assert_int_equal(fmt_reader_next(r, &got), 0);
}

static void test_segment_roundtrip(void **state)
{
    struct fmt_trace_info info = seg_info(3, 10 * MS);
    struct tfmt t;

    (void)state;
    write_segment(&t, &info);
    tfmt_check_written(&t, "MS_FMT_WRITE_GOLDEN_1_9", check_segment);
}

static void test_segment_golden(void **state)
{
    (void)state;
    tfmt_check_path(MS_GOLDEN_DIR "/v1_9_segment.mscr", check_segment);
}

/* The whole run's trace says --keep-last's duration and is no segment:
 * no feature bit, its version what its other features make it. */
static void test_keep_last_meta(void **state)
{
    struct fmt_trace_info info = seg_info(0, 0);
    struct tfmt t;

    (void)state;
    tfmt_start_info(&t, &seg_opt, &info);
    struct fmt_event ev = mk_heap(FMT_EV_MALLOC, 1000, HEAP, 8, 0, 0);
    assert_int_equal(fmt_writer_event(t.w, &ev), 0);
    tfmt_finish(&t);
    struct fmt_reader *r = tfmt_open(&t);
    assert_int_equal(fmt_reader_info(r)->version_minor, 7);
    assert_int_equal(fmt_reader_info(r)->keep_last_ns, 20 * MS);
    assert_int_equal(fmt_reader_info(r)->segment_nr, 0);
    fmt_reader_close(r);
    tfmt_close(&t);
}

/* A segment's writer takes another's stacks with their ids, window nodes
 * (a stack cut at the depth limit, interned under an earlier one) with
 * their limits, and reads back the same frames. */
static void test_copy_stacks(void **state)
{
    struct tfmt src, dst;
    uint64_t deep[8];
    uint32_t ids[4], id;

    (void)state;
    tfmt_start_opt(&src, &seg_opt);
    tfmt_restart(&src, 0, 4, 8); /* depth limit 8: window interning */
    for (int k = 0; k < 4; k++) {
        /* recursion: each stack the last one shifted by a frame */
        for (int i = 0; i < 8; i++)
            deep[i] = 0x500000 + (uint64_t)((i + k) % 3) * 0x10 + (uint64_t)(i + k) * 0x1000;
        assert_int_equal(fmt_writer_stack(src.w, 0, deep, 8, &ids[k]), 0);
    }
    tfmt_start_opt(&dst, &seg_opt);
    tfmt_restart(&dst, 0, 4, 8);
    assert_int_equal(fmt_writer_copy_stacks(dst.w, src.w), 0);
    assert_int_equal(fmt_writer_nr_stacks(dst.w), fmt_writer_nr_stacks(src.w));
    /* Again: nothing new to copy. (A stack made in dst alone breaks the
     * lockstep: refused below.) */
    assert_int_equal(fmt_writer_copy_stacks(dst.w, src.w), 0);
    for (int k = 0; k < 4; k++) {
        struct fmt_event ev =
            mk_heap(FMT_EV_MALLOC, 1000 + (uint64_t)k, HEAP + 64 * (uint64_t)k, 8, ids[k], 0);
        assert_int_equal(fmt_writer_event(dst.w, &ev), 0);
        assert_int_equal(fmt_writer_event(src.w, &ev), 0);
    }
    tfmt_finish(&src);
    tfmt_finish(&dst);
    struct fmt_reader *rs = tfmt_open(&src), *rd = tfmt_open(&dst);
    for (int k = 0; k < 4; k++) {
        uint64_t fs[16], fd[16];
        uint32_t is, idd;
        int ns = fmt_reader_stack(rs, ids[k], &is, fs, 16);
        int nd = fmt_reader_stack(rd, ids[k], &idd, fd, 16);
        assert_int_equal(ns, 8);
        assert_int_equal(nd, ns);
        assert_memory_equal(fs, fd, (size_t)ns * sizeof(*fs));
    }
    fmt_reader_close(rs);
    fmt_reader_close(rd);
    tfmt_close(&src);
    struct fmt_writer *w = NULL;
    struct tfmt other;
    tfmt_start_opt(&other, &seg_opt);
    w = other.w;
    /* dst's own node X is src's second: copied, it gets id 1, not 2 */
    uint64_t a = 0x666000, x = 0x777000;
    assert_int_equal(fmt_writer_stack(w, 0, &x, 1, &id), 0);
    tfmt_start_opt(&src, &seg_opt);
    assert_int_equal(fmt_writer_stack(src.w, 0, &a, 1, &id), 0);
    assert_int_equal(fmt_writer_stack(src.w, 0, &x, 1, &id), 0);
    assert_int_equal(fmt_writer_copy_stacks(w, src.w), -EINVAL);
    tfmt_close(&src);
    tfmt_close(&other);
    tfmt_close(&dst);
}

struct maps_seen {
    struct fmt_writer_map m[8];
    int n;
};

static int see_map(void *arg, const struct fmt_writer_map *m)
{
    struct maps_seen *s = arg;

    if (s->n < 8)
        s->m[s->n] = *m;
    s->n++;
    return 0;
}

/* The mappings a writer holds live: a hole punched splits one in two, both
 * with its prot and flags; an mremap keeps them; an munmap ends one. */
static void test_live_maps(void **state)
{
    struct tfmt t;
    struct maps_seen s = {0};
    struct fmt_event ev[4];

    (void)state;
    tfmt_start_opt(&t, &seg_opt);
    ev[0] = tfmt_heap(FMT_EV_MMAP, 1000, 0, MAP, 0x10000, 0);
    ev[0].arg[0] = 1;
    ev[0].arg[1] = 34;
    ev[1] = tfmt_heap(FMT_EV_MUNMAP, 2000, 0, MAP + 0x4000, 0x1000, 0);
    ev[2] = tfmt_heap(FMT_EV_MMAP, 3000, 0, MAP + 0x100000, 0x2000, 0);
    ev[2].arg[0] = 3;
    ev[2].arg[1] = 2;
    ev[3] = tfmt_heap(FMT_EV_MREMAP, 4000, 0, MAP + 0x200000, 0x3000, 0);
    ev[3].old_addr = MAP + 0x100000;
    ev[3].old_size = 0x2000;
    for (int i = 0; i < 4; i++)
        assert_int_equal(fmt_writer_event(t.w, &ev[i]), 0);
    assert_int_equal(fmt_writer_live_maps(t.w, see_map, &s), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.m[0].addr, MAP);
    assert_int_equal(s.m[0].size, 0x4000);
    assert_int_equal(s.m[1].addr, MAP + 0x5000);
    assert_int_equal(s.m[1].size, 0xb000);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(s.m[i].prot, 1);
        assert_int_equal(s.m[i].flags, 34);
        assert_int_equal(s.m[i].ts_ns, 1000);
        assert_int_equal(s.m[i].who.pid, 100);
    }
    assert_int_equal(s.m[2].addr, MAP + 0x200000);
    assert_int_equal(s.m[2].size, 0x3000);
    assert_int_equal(s.m[2].prot, 3);
    assert_int_equal(s.m[2].flags, 2);
    assert_int_equal(s.m[2].ts_ns, 4000);
    tfmt_close(&t);
}

/* The bit without its META record: corrupt. */
static void test_segment_refused(void **state)
{
    struct tfmt t;
    struct fmt_trace_info info = seg_info(0, 0);
    size_t size;
    char err[600];
    struct fmt_reader *r;

    (void)state;
    tfmt_start_info(&t, &seg_opt, &info);
    tfmt_finish(&t);
    uint8_t *p = tfmt_bytes(t.fd, &size);
    fmt_put_le64(p + 16, fmt_get_le64(p + 16) | FMT_FEAT_SEGMENT);
    fmt_put_le16(p + 10, 9);
    fmt_put_le32(p + 60, fmt_crc32c(0, p, 60));
    int fd = tfmt_memfd(p, size);
    assert_int_equal(fmt_reader_open_fd(&r, fd, "seg.trace", err, sizeof(err)), -EPROTO);
    if (!strstr(err, "without its SEGMENT record"))
        fail_msg("%s", err);
    free(p);
    tfmt_close(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_segment_roundtrip), cmocka_unit_test(test_segment_golden),
        cmocka_unit_test(test_keep_last_meta),    cmocka_unit_test(test_copy_stacks),
        cmocka_unit_test(test_live_maps),         cmocka_unit_test(test_segment_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
