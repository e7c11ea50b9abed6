/* SPDX-License-Identifier: MIT */
/* The writer's contexts: (image, thread, pid, tid) tuples interned as ids
 * (a new one adds a CONTEXT definition), and the address prediction state
 * of each context active in the chunk being built, in slots. The checks
 * run once per event: inline here, the rare work out of line. */
#ifndef FMT_WCTX_INTERNAL_H
#define FMT_WCTX_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "format/fmt_writer_internal.h"

/* Allocate the tables of a new writer. Returns 0 or -ENOMEM. */
int fmt_wctx_init(struct fmt_writer *w);
void fmt_wctx_destroy(struct fmt_writer *w);

/* The id of context who, added (with its CONTEXT definition, first seen at
 * ts_ns) if new. Returns 0 or -ENOMEM. */
int fmt_wctx_lookup(struct fmt_writer *w, const struct fmt_writer_who *who, uint64_t ts_ns,
                    uint32_t *id);

/* A slot for ctx's prediction state, at its first event in the chunk;
 * NULL if out of memory. */
struct fmt_pred *fmt_wctx_pred_new(struct fmt_writer *w, uint32_t ctx);

/* Is c the context of ev? Field by field, one 4-byte load each: the caller
 * has just stored these fields one by one, and gcc's merged 16-byte load of
 * all four could not be forwarded from those stores (a stall of about a
 * quarter of this function's time on a malloc/free storm). The empty asm
 * keeps the loads apart. */
static inline int fmt_wctx_same(const struct fmt_writer_who *c, const struct fmt_event *ev)
{
    uint32_t tid = ev->tid, pid = ev->pid, thread = ev->thread, image = ev->image;

    __asm__("" : "+r"(tid), "+r"(pid), "+r"(thread), "+r"(image));
    return c->tid == tid && c->pid == pid && c->thread == thread && c->image == image;
}

/* Is c who? The four fields as two 8-byte words and one branch (the
 * recorder's who is not stored anew per event, so wide loads of it are
 * not stalled as fmt_wctx_same's would be): 15 -> 8 instructions. */
static inline int fmt_wctx_who_same(const struct fmt_writer_who *c,
                                    const struct fmt_writer_who *who)
{
    uint64_t a[2], b[2];

    _Static_assert(sizeof(*c) == sizeof(a), "fmt_writer_who is four 32-bit fields");
    memcpy(a, c, sizeof(a));
    memcpy(b, who, sizeof(b));
    return !((a[0] ^ b[0]) | (a[1] ^ b[1]));
}

/* Is ctx active (has it a slot) in the chunk being built? */
static inline int fmt_wctx_active(const struct fmt_writer *w, uint32_t ctx)
{
    return w->nr_chunk_events && w->ctx_slot[ctx] >> FMT_SLOT_BITS == w->nr_chunks + 1;
}

/* The prediction state of ctx in this chunk. */
static inline struct fmt_pred *fmt_wctx_pred(struct fmt_writer *w, uint32_t ctx)
{
    if (fmt_wctx_active(w, ctx))
        return &w->slots[w->ctx_slot[ctx] & (FMT_MAX_ACTIVE_CTX - 1)];
    return fmt_wctx_pred_new(w, ctx);
}

#endif
