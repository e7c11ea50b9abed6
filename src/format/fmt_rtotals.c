/* SPDX-License-Identifier: MIT */
/* Format 1.10's chunk totals (docs/format-blocks.md, "TOTALS"): chunk k's TOTALS
 * record, found in the DEFS block that holds its summary, checked and
 * handed out image by image, then stack by stack. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/fmt_reader_internal.h"

bool fmt_reader_has_totals(const struct fmt_reader *r)
{
    return r->totals_on;
}

/* A time given as the difference to *base, which must stay within the
 * chunk's span. */
static bool get_time(struct fmt_cur *b, uint64_t base, uint64_t last, uint64_t *out)
{
    uint64_t d = fmt_cur_varint(b);

    *out = base + d;
    return !b->bad && d <= last - base;
}

static int get_calls(struct fmt_cur *b, struct fmt_image_totals *t)
{
    uint64_t n = fmt_cur_varint(b);
    int64_t prev = -1;

    if (b->bad || n > FMT_TOTALS_KEYS)
        return -1;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t key = fmt_cur_varint(b), calls = fmt_cur_varint(b), failed = fmt_cur_varint(b);
        if (b->bad || key >= FMT_TOTALS_KEYS || (int64_t)key <= prev || !calls || failed > calls)
            return -1;
        t->calls[key] = calls;
        t->failed[key] = failed;
        prev = (int64_t)key;
    }
    return 0;
}

/* One image's part (put_image in fmt_wtotals.c); 0 or -1 if corrupt. */
static int get_image(struct fmt_reader *r, struct fmt_cur *b, const struct fmt_chunk_info *ci,
                     struct fmt_image_totals *t)
{
    uint64_t image = fmt_cur_varint(b), pid = fmt_cur_varint(b), flags = fmt_cur_varint(b);

    memset(t, 0, sizeof(*t));
    if (b->bad || image >= r->nr_images || pid > UINT32_MAX || flags > 7)
        return -1;
    t->image = (uint32_t)image;
    t->pid = (uint32_t)pid;
    t->has_peak = flags & 1;
    t->has_rss = flags & 2;
    t->ended = flags & 4;
    uint64_t last = ci->last_ts_ns;
    if (!get_time(b, ci->first_ts_ns, last, &t->first_ns) ||
        !get_time(b, t->first_ns, last, &t->last_ns) || get_calls(b, t))
        return -1;
    uint64_t *counts[] = {&t->start_maps, &t->carried, &t->carried_bytes, &t->arena_maps,
                          &t->unmatched,  &t->dropped, &t->allocs,        &t->alloc_bytes};
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
        *counts[i] = fmt_cur_varint(b);
    t->heap = fmt_unzigzag(fmt_cur_varint(b));
    t->blocks = fmt_unzigzag(fmt_cur_varint(b));
    if (t->has_peak) {
        t->peak = fmt_unzigzag(fmt_cur_varint(b));
        if (!get_time(b, t->first_ns, t->last_ns, &t->peak_ns))
            return -1;
        t->peak_blocks = fmt_unzigzag(fmt_cur_varint(b));
    }
    if (t->has_rss) {
        t->rss_max = fmt_cur_varint(b);
        if (!get_time(b, t->first_ns, t->last_ns, &t->rss_max_ns))
            return -1;
        t->rss_last = fmt_cur_varint(b);
        if (!get_time(b, t->first_ns, t->last_ns, &t->rss_last_ns) || t->rss_last > t->rss_max)
            return -1;
    }
    if (t->ended && !get_time(b, t->first_ns, t->last_ns, &t->end_ns))
        return -1;
    /* heap moves only when a block starts or ends: the last such event's
     * heap is the chunk's change, and the peak is at least that */
    if (t->has_peak ? t->peak < t->heap : t->heap || t->blocks)
        return -1;
    return b->bad ? -1 : 0;
}

/* The all-processes part (put_all in fmt_wtotals.c); 0 or -1 if corrupt.
 * The running heap moves at a block's start or end, where the peak is
 * checked, and falls at an exit: without a peak it cannot have risen. */
static int get_all(struct fmt_cur *b, const struct fmt_chunk_info *ci, struct fmt_all_totals *a)
{
    uint64_t flags = fmt_cur_varint(b);

    memset(a, 0, sizeof(*a));
    a->has_peak = flags & 1;
    a->heap = fmt_unzigzag(fmt_cur_varint(b));
    a->blocks = fmt_unzigzag(fmt_cur_varint(b));
    if (a->has_peak) {
        a->peak = fmt_unzigzag(fmt_cur_varint(b));
        if (!get_time(b, ci->first_ts_ns, ci->last_ts_ns, &a->peak_ns))
            return -1;
        a->peak_blocks = fmt_unzigzag(fmt_cur_varint(b));
    }
    a->has_rss = flags & 2;
    if (a->has_rss) {
        a->rss_max = fmt_cur_varint(b);
        if (!get_time(b, ci->first_ts_ns, ci->last_ts_ns, &a->rss_max_ns))
            return -1;
    }
    if (b->bad || flags > 3 || (a->has_peak ? a->peak < a->heap : a->heap > 0 || a->blocks > 0))
        return -1;
    return 0;
}

/* The programs' parts (fmt_wtgrp_put): each a first image, in increasing
 * order, a part read as the all-processes part, and the RSS sum at the
 * chunk's end. */
static int get_progs(struct fmt_reader *r, struct fmt_cur *b, uint64_t off, uint32_t k,
                     fmt_prog_totals_fn *fn, void *arg)
{
    const struct fmt_chunk_info *ci = &r->chunks[k].c;
    uint64_t n = fmt_cur_varint(b);
    int64_t prev = -1;
    int rc;

    if (b->bad || n > r->nr_images)
        return fmt_rerr(r, -EPROTO, off, "bad programs' totals of chunk %u", k);
    for (uint64_t i = 0; i < n; i++) {
        struct fmt_prog_totals t;
        uint64_t image = fmt_cur_varint(b);
        if (b->bad || image >= r->nr_images || (int64_t)image <= prev || get_all(b, ci, &t.part) ||
            ((t.rss = fmt_cur_varint(b)), b->bad))
            return fmt_rerr(r, -EPROTO, off, "bad programs' totals of chunk %u (program %llu)", k,
                            (unsigned long long)i);
        t.first_image = (uint32_t)image;
        prev = (int64_t)image;
        if ((rc = fn(arg, &t)))
            return rc;
    }
    return 0;
}

/* The TOTALS record of chunk k in the DEFS payload at off (r->raw); with
 * all, its all-processes part too, and with progs then its programs'. */
static int walk(struct fmt_reader *r, struct fmt_cur *b, uint64_t off, uint32_t k,
                fmt_image_totals_fn *img, fmt_stack_totals_fn *stk, void *arg,
                struct fmt_all_totals *all, fmt_prog_totals_fn *progs)
{
    const struct fmt_chunk_info *ci = &r->chunks[k].c;
    uint64_t n = fmt_cur_varint(b);
    int64_t prev = -1;
    int rc;

    if (b->bad || n > r->nr_images)
        return fmt_rerr(r, -EPROTO, off, "bad totals of chunk %u", k);
    struct fmt_image_totals *t = malloc(sizeof(*t));
    if (!t)
        return fmt_rerr(r, -ENOMEM, off, "out of memory");
    for (uint64_t i = 0; i < n; i++) {
        if (get_image(r, b, ci, t) || (int64_t)t->image <= prev) {
            free(t);
            return fmt_rerr(r, -EPROTO, off, "bad totals of chunk %u (image %llu)", k,
                            (unsigned long long)i);
        }
        prev = t->image;
        if (img && (rc = img(arg, t))) {
            free(t);
            return rc;
        }
    }
    free(t);
    n = fmt_cur_varint(b);
    uint64_t stack = 0;
    for (uint64_t i = 0; !b->bad && i < n; i++) {
        uint64_t d = fmt_cur_varint(b), v = fmt_cur_varint(b);
        struct fmt_stack_totals s = {.allocs = v >> 2};
        if (s.allocs)
            s.alloc_bytes = fmt_cur_varint(b);
        if ((v & 3) == 1) {
            s.temps = s.allocs;
            s.temp_bytes = s.alloc_bytes;
        } else if ((v & 3) == 2) {
            s.temps = fmt_cur_varint(b);
            s.temp_bytes = fmt_cur_varint(b);
        }
        stack += d;
        if (b->bad || (i && !d) || stack > r->nr_nodes || s.temps > ci->nr_events || (v & 3) == 3 ||
            ((v & 3) == 2 && !s.temps) || (!s.allocs && !s.temps))
            return fmt_rerr(r, -EPROTO, off, "bad stack totals %llu of chunk %u",
                            (unsigned long long)i, k);
        s.stack = (uint32_t)stack;
        if (stk && (rc = stk(arg, &s)))
            return rc;
    }
    if (!b->bad && all && get_all(b, ci, all))
        return fmt_rerr(r, -EPROTO, off, "bad all-processes totals of chunk %u", k);
    if (!b->bad && progs)
        return get_progs(r, b, off, k, progs, arg);
    return b->bad ? fmt_rerr(r, -EPROTO, off, "bad totals of chunk %u", k) : 0;
}

/* Chunk k's TOTALS record found and walked (walk); -EINVAL if the trace
 * has no such chunk or no such part (on: the feature bit asked). */
static int chunk_record(struct fmt_reader *r, uint32_t k, int on, fmt_image_totals_fn *img,
                        fmt_stack_totals_fn *stk, void *arg, struct fmt_all_totals *all,
                        fmt_prog_totals_fn *progs)
{
    struct fmt_cur b;
    uint64_t off;
    int rc;

    if (k >= r->nr_chunks || !on)
        return -EINVAL;
    if ((rc = fmt_rdefs_chunk_record(r, k, FMT_DEF_TOTALS, "totals", &b, &off)))
        return rc;
    (void)fmt_cur_varint(&b); /* the chunk's number, k */
    return walk(r, &b, off, k, img, stk, arg, all, progs);
}

int fmt_reader_chunk_totals(struct fmt_reader *r, uint32_t k, fmt_image_totals_fn *img,
                            fmt_stack_totals_fn *stk, void *arg)
{
    return chunk_record(r, k, r->totals_on, img, stk, arg, NULL, NULL);
}

bool fmt_reader_has_all_totals(const struct fmt_reader *r)
{
    return r->totals_all;
}

int fmt_reader_chunk_all_totals(struct fmt_reader *r, uint32_t k, struct fmt_all_totals *out)
{
    return chunk_record(r, k, r->totals_all, NULL, NULL, NULL, out, NULL);
}

bool fmt_reader_has_prog_totals(const struct fmt_reader *r)
{
    return r->totals_progs;
}

int fmt_reader_chunk_prog_totals(struct fmt_reader *r, uint32_t k, fmt_prog_totals_fn *fn,
                                 void *arg)
{
    struct fmt_all_totals all;

    return chunk_record(r, k, r->totals_progs, NULL, NULL, arg, &all, fn);
}
