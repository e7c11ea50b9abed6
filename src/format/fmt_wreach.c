/* SPDX-License-Identifier: MIT */
/* The writer's side of the reachability classes at exit (docs/leaks.md):
 * the live heap blocks of an image, for the recorder's scan, and the
 * REACH record (docs/format.md) that says what the scan found. */
#include <errno.h>
#include <string.h>

#include "format/fmt_writer_internal.h"
#include "memscribe/trace.h"

int fmt_writer_live_blocks(const struct fmt_writer *w, uint32_t image, fmt_writer_block_fn *fn,
                           void *arg)
{
    const struct fmt_wlive *l = &w->live;
    struct fmt_wblock b;
    int rc;

    for (uint64_t i = 0; i < l->end; i++) {
        if (!l->slots[i].serial || (uint32_t)(l->slots[i].key >> FMT_WSLOT_ADDR_BITS) != image)
            continue;
        fmt_wlive_unpack(l, &l->slots[i], &b);
        if ((rc = fn(arg, &(struct fmt_writer_block){b.addr, b.size, b.serial})))
            return rc;
    }
    for (uint64_t i = 0; l->wide.mask && i <= l->wide.mask; i++) {
        const struct fmt_wblock *wb = &l->wide.slots[i];

        if (!wb->serial || wb->image != image)
            continue;
        if ((rc = fn(arg, &(struct fmt_writer_block){wb->addr, wb->size, wb->serial})))
            return rc;
    }
    return 0;
}

int fmt_writer_reach(struct fmt_writer *w, const struct fmt_writer_reach *rr)
{
    const char *reason = rr->reason ? rr->reason : "";
    size_t reason_len = strnlen(reason, FMT_MAX_STRING);
    struct fmt_buf b = {0};
    uint64_t prev = 0;
    int rc;

    if (!w->reach || rr->status > FMT_REACH_UNAVAILABLE ||
        (rr->status != FMT_REACH_SCANNED && rr->nr_blocks))
        return -EINVAL;
    if ((rc =
             fmt_buf_reserve(&b, 8 * FMT_VARINT_MAX + reason_len + rr->nr_blocks * FMT_VARINT_MAX)))
        return rc;
    fmt_buf_put_varint(&b, rr->image);
    fmt_buf_put_varint(&b, w->tu > 1 ? rr->ts_ns - rr->ts_ns % w->tu : rr->ts_ns);
    fmt_buf_put_varint(&b, rr->status);
    fmt_buf_put_varint(&b, reason_len);
    fmt_buf_put_bytes(&b, reason, reason_len);
    fmt_buf_put_varint(&b, rr->nr_threads);
    fmt_buf_put_varint(&b, rr->root_bytes);
    fmt_buf_put_varint(&b, rr->skipped_bytes);
    fmt_buf_put_varint(&b, rr->nr_blocks);
    for (uint64_t i = 0; i < rr->nr_blocks; i++) {
        uint64_t d = rr->serials[i] - prev;

        if (rr->serials[i] <= prev || d >> 61 || rr->classes[i] == FMT_REACH_UNKNOWN ||
            rr->classes[i] >= FMT_NR_REACH) {
            fmt_buf_free(&b);
            return -EINVAL;
        }
        fmt_buf_put_varint(&b, d << 3 | rr->classes[i]);
        prev = rr->serials[i];
    }
    rc = fmt_wdefs_add(w, FMT_DEF_REACH, &b);
    fmt_buf_free(&b);
    return rc;
}
