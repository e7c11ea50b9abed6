/* SPDX-License-Identifier: MIT */
/* The writer's context ids: interning (image, thread, pid, tid) in an
 * open-addressing table, and the prediction slots of a chunk's contexts. */
#include "format/fmt_wctx_internal.h"
#include "util/util_array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int fmt_wctx_init(struct fmt_writer *w)
{
    w->cap_ctxs = 16;
    w->ctxs = calloc(w->cap_ctxs, sizeof(*w->ctxs));
    w->ctx_slot = calloc(w->cap_ctxs, sizeof(*w->ctx_slot));
    w->ctx_mask = 63;
    w->ctx_hash = calloc(w->ctx_mask + 1, sizeof(*w->ctx_hash));
    return w->ctxs && w->ctx_slot && w->ctx_hash ? 0 : -ENOMEM;
}

void fmt_wctx_destroy(struct fmt_writer *w)
{
    free(w->ctxs);
    free(w->ctx_slot);
    for (uint32_t i = 0; i < w->cap_slots; i++)
        fmt_rank_free(&w->slots[i].rank);
    free(w->slots);
    free(w->ctx_hash);
}

static inline uint32_t ctx_hash(const struct fmt_writer_who *c)
{
    uint64_t h = ((uint64_t)c->thread << 32 | c->tid) ^ ((uint64_t)c->image << 20) ^ c->pid;

    h *= 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32);
}

static int ctx_rehash(struct fmt_writer *w)
{
    uint32_t mask = w->ctx_mask * 2 + 1;
    uint32_t *h = calloc((size_t)mask + 1, sizeof(*h));

    if (!h)
        return -ENOMEM;
    for (uint32_t id = 1; id <= w->nr_ctxs; id++) {
        uint32_t i = ctx_hash(&w->ctxs[id]) & mask;
        while (h[i])
            i = (i + 1) & mask;
        h[i] = id;
    }
    free(w->ctx_hash);
    w->ctx_hash = h;
    w->ctx_mask = mask;
    return 0;
}

/* Not inlined: it runs only when the context changes, and inlined its
 * vector copy of the event's fields was hoisted into the hot path. */
__attribute__((noinline)) int fmt_wctx_lookup(struct fmt_writer *w,
                                              const struct fmt_writer_who *who, uint64_t ts_ns,
                                              uint32_t *id)
{
    uint32_t i = ctx_hash(who) & w->ctx_mask;

    for (; w->ctx_hash[i]; i = (i + 1) & w->ctx_mask) {
        if (fmt_wctx_who_same(&w->ctxs[w->ctx_hash[i]], who)) {
            *id = w->ctx_hash[i];
            return 0;
        }
    }
    if (w->nr_ctxs + 1 >= w->cap_ctxs) {
        uint32_t cap = w->cap_ctxs * 2;
        struct fmt_writer_who *c = realloc(w->ctxs, (size_t)cap * sizeof(*c));
        if (!c)
            return -ENOMEM;
        w->ctxs = c;
        uint64_t *p = realloc(w->ctx_slot, (size_t)cap * sizeof(*p));
        if (!p)
            return -ENOMEM;
        memset(p + w->cap_ctxs, 0, (size_t)(cap - w->cap_ctxs) * sizeof(*p));
        w->ctx_slot = p;
        w->cap_ctxs = cap;
    }
    uint32_t nid = ++w->nr_ctxs;
    w->ctxs[nid] = *who;
    w->ctx_hash[i] = nid;
    uint8_t body[6 * FMT_VARINT_MAX];
    struct fmt_buf b = {body, 0, sizeof(body)};
    fmt_buf_put_varint(&b, nid);
    fmt_buf_put_varint(&b, who->image);
    fmt_buf_put_varint(&b, who->thread);
    fmt_buf_put_varint(&b, who->pid);
    fmt_buf_put_varint(&b, who->tid);
    fmt_buf_put_varint(&b, ts_ns);
    int rc = fmt_wdefs_add(w, FMT_DEF_CONTEXT, &b);
    if (rc)
        return rc;
    *id = nid;
    if ((uint64_t)w->nr_ctxs * 2 > w->ctx_mask)
        return ctx_rehash(w);
    return 0;
}

__attribute__((noinline)) struct fmt_pred *fmt_wctx_pred_new(struct fmt_writer *w, uint32_t ctx)
{
    /* zeroed: a slot's rank arrays (1.5) are kept from chunk to chunk */
    if (UTIL_ARRAY_RESERVE_ZERO(w->slots, w->cap_slots, (size_t)w->nr_slots + 1, 8))
        return NULL;
    uint32_t slot = w->nr_slots++;
    w->ctx_slot[ctx] = (w->nr_chunks + 1) << FMT_SLOT_BITS | slot;
    fmt_pred_reset(&w->slots[slot]);
    return &w->slots[slot];
}
