/* SPDX-License-Identifier: MIT */
/* The writer's hot path: encodes events into the columns of the current
 * chunk (docs/format-events.md, "Events"), matching frees, reallocs and unmaps to
 * the blocks they end. Not thread-safe: the recorder calls it from one
 * thread. */
#include <errno.h>
#include <stdlib.h>

#include "format/fmt_wctx_internal.h"
#include "format/fmt_writer_internal.h"

/* Worst case bytes one event adds to a column (the MISC column takes an
 * extra record and an external reference). */
#define COL_RESERVE (4 * FMT_VARINT_MAX)
#define MISC_RESERVE (24 * FMT_VARINT_MAX)

/* The fields of an event the heap encoding needs, in registers: the
 * recorder's fast path (fmt_writer_heap) has no struct fmt_event. */
struct heap_ev {
    uint64_t ts_ns;
    uint64_t addr;
    uint64_t size;
    uint32_t stack;
    uint32_t image;
    bool made; /* a call's block, not a snapshot's copy (a segment's carried blocks) */
    /* The chunk's totals are kept (w->tot.on): a constant on the fast
     * paths, each compiled twice (fmt_writer_heap), so that a writer
     * without them does what it did before they came. */
    bool tot;
};

/* A block was started: give it the next serial and remember it (the
 * address model told apart: start_heap). */
static inline __attribute__((always_inline)) int
start_block(struct fmt_writer *w, struct fmt_wlive *live, const struct heap_ev *ev, uint32_t ctx)
{
    struct fmt_wblock b = {ev->addr,  w->next_serial++,     ev->size, ev->ts_ns, ev->stack, ctx,
                           ev->image, w->pred->nr_started++};

    w->chunk_heap_allocs++;
    w->st.nr_allocs++;
    if (w->v15 && fmt_rank_start(&w->pred->rank, b.ord))
        return -ENOMEM;
    int rc = fmt_wlive_insert(live, &b);
    if (!ev->tot)
        return rc ?: fmt_wdelta_add(&w->deltas, w->nr_chunks + 1, ev->stack, (int64_t)ev->size, 1);
    fmt_wtot_start(&w->tot, ev->size, b.serial, ev->made, ev->ts_ns);
    return rc ?: fmt_wdelta_start(&w->deltas, w->nr_chunks + 1, ev->stack, ev->size, ev->made);
}

static inline __attribute__((always_inline)) int
start_heap(struct fmt_writer *w, struct fmt_wlive *live, const struct heap_ev *ev, uint32_t ctx)
{
    fmt_pred_start(w->pred, ev->addr, ev->size);
    return start_block(w, live, ev, ctx);
}

/* REF / 2 for the block its own context started in the chunk as the
 * ord-th: how many blocks the context started since, or in format 1.5
 * beyond FMT_RANK_NEAR of them FMT_RANK_NEAR + 1 + its rank among the live
 * blocks started before the last FMT_RANK_NEAR (no counting for the near
 * ones, where most frees are). */
static inline __attribute__((always_inline)) uint64_t ref_own(const struct fmt_writer *w,
                                                              uint32_t ord)
{
    uint32_t n = w->pred->nr_started, d = n - ord;

    if (!w->v15 || d <= FMT_RANK_NEAR)
        return d;
    const struct fmt_rank *k = &w->pred->rank;
    return FMT_RANK_NEAR + 1 + fmt_rank_count(k, ord + 1, n - FMT_RANK_NEAR);
}

/* Store the back-reference to block b, which the current event (of
 * context ctx) ends. A block the same context started in this chunk is
 * named by how many blocks that context started since (REF = 2d): in a
 * thread-interleaved stream that distance repeats where the trace-wide one
 * does not. Any other block by its serial distance (REF = 2d + 1); one from
 * an earlier chunk also gets its facts in MISC, so each chunk can be read
 * on its own. */
static inline __attribute__((always_inline)) void put_ref(struct fmt_writer *w, uint64_t ts_ns,
                                                          const struct fmt_wblock *b, uint32_t ctx)
{
    struct fmt_buf *misc = &w->col[FMT_COL_MISC];
    int here = b->serial >= w->chunk_first_serial;
    uint64_t v = here && b->ctx == ctx ? ref_own(w, b->ord) << 1
                 : !w->v15             ? (w->next_serial - b->serial) << 1 | 1
                 /* 1.5: a block of this chunk by its serial distance, one of
                  * an earlier chunk by the difference to the previous such
                  * serial (python3 frees old objects in the order it made
                  * them: 2-3 bytes a reference become 1) */
                 : here ? (w->next_serial - b->serial) << 2 | 1
                        : fmt_zigzag((int64_t)(b->serial - w->prev_fact_serial)) << 2 | 3;

    /* Format 1.3 splits REF as SIZE is split: on python3 the low byte plane
     * repeats where the mixed varints do not (0.68 -> 0.08 bytes/event). */
    if (w->v13)
        fmt_buf_put_split(&w->col[FMT_COL_REF], &w->col[FMT_COL_REF_HI], v);
    else
        fmt_buf_put_varint(&w->col[FMT_COL_REF], v);
    if (!(v & 1) || here)
        return;
    w->prev_fact_serial = b->serial;
    /* Its facts: in MISC (1.1), or each in its own column (1.3), where the
     * facts of one kind compress together (python3: 1.2 -> 0.x bytes/event). */
    if (!w->v13) {
        fmt_buf_put_varint(misc, b->size);
        fmt_buf_put_varint(misc, b->stack);
        fmt_buf_put_varint(misc, b->addr);
        fmt_buf_put_varint(misc, fmt_zigzag(fmt_wtime_units(w, (int64_t)(ts_ns - b->ts_ns))));
        fmt_buf_put_varint(misc, b->ctx);
        return;
    }
    fmt_buf_put_varint(&w->col[FMT_COL_FACT_SIZE], b->size);
    fmt_buf_put_varint(&w->col[FMT_COL_FACT_STACK], b->stack);
    fmt_buf_put_varint(&w->col[FMT_COL_FACT_ADDR],
                       fmt_zigzag((int64_t)(b->addr - w->prev_fact_addr)));
    w->prev_fact_addr = b->addr;
    /* Blocks freed together were mostly allocated together: the start time
     * and address as differences to the previous fact's. */
    fmt_buf_put_varint(&w->col[FMT_COL_FACT_TIME],
                       fmt_zigzag(fmt_wtime_units(w, (int64_t)(b->ts_ns - w->prev_fact_ts))));
    w->prev_fact_ts = b->ts_ns;
    fmt_buf_put_varint(&w->col[FMT_COL_FACT_CTX], b->ctx);
}

/* The heap block b, taken from the live blocks, ends: its reference
 * (put_ref), its rank and its stack's heap (end_model: the address model);
 * last: no block starts after in the same event (the chunk totals' peak
 * check, fmt_wtot_end). */
static inline __attribute__((always_inline)) int ref_block(struct fmt_writer *w, uint64_t ts_ns,
                                                           const struct fmt_wblock *b, uint32_t ctx,
                                                           bool last, bool tot)
{
    put_ref(w, ts_ns, b, ctx);
    if (w->v15 && b->ctx == ctx && b->serial >= w->chunk_first_serial)
        fmt_rank_end(&w->pred->rank, b->ord);
    if (!tot)
        return fmt_wdelta_add(&w->deltas, w->nr_chunks + 1, b->stack, -(int64_t)b->size, -1);
    bool temp = fmt_wtot_end(&w->tot, b->size, b->serial, last, ts_ns);
    return fmt_wdelta_end(&w->deltas, w->nr_chunks + 1, b->stack, b->size, temp);
}

static inline __attribute__((always_inline)) void end_model(struct fmt_writer *w,
                                                            const struct fmt_wblock *b)
{
    fmt_pred_end(w->pred, b->addr, b->size);
    if (w->v15)
        fmt_recent_put(&w->recent, w->recent_ix, b->addr);
}

/* Free or realloc ending the heap block at addr; REF 0 and the address
 * itself when no live block is there. live and key: malloc's blocks by
 * image, or a pool's by pool id (fmt_wpool_internal.h); last and tot as
 * ref_block's. */
static inline __attribute__((always_inline)) int end_heap(struct fmt_writer *w, uint64_t ts_ns,
                                                          struct fmt_wlive *live, uint32_t key,
                                                          uint32_t ctx, uint64_t addr, int may_end,
                                                          bool last, bool tot)
{
    struct fmt_wblock b;

    if (may_end && addr && fmt_wlive_take(live, key, addr, &b)) {
        int rc = ref_block(w, ts_ns, &b, ctx, last, tot);
        end_model(w, &b);
        return rc;
    }
    if (tot)
        fmt_wtot_unmatched(&w->tot, addr);
    fmt_buf_put_varint(&w->col[FMT_COL_REF], 0);
    fmt_buf_put_varint(&w->col[FMT_COL_ADDR], addr);
    return 0;
}

/* munmap, mremap and MAP_FIXED mmap: remove the range and name what it
 * touched (REF, then in MISC the number touched and whether any survives
 * in part). */
static int end_vm(struct fmt_writer *w, const struct fmt_event *ev, uint32_t ctx, uint64_t addr,
                  uint64_t len, int may_end, uint64_t *how)
{
    struct fmt_wvm_hit hit = {0};

    if (may_end) {
        int rc = fmt_wvm_remove(&w->vm, ev->image, addr, len, &hit);
        if (rc)
            return rc;
    }
    if (!hit.nr) {
        fmt_buf_put_varint(&w->col[FMT_COL_REF], 0);
        return 0;
    }
    *how = hit.first_how;
    fmt_buf_put_varint(&w->col[FMT_COL_MISC], (uint64_t)(hit.nr - 1) << 1 | (hit.partial != 0));
    put_ref(w, ev->ts_ns, &hit.first, ctx);
    return 0;
}

/* A mapping starts: an mmap with its prot and flags, an mremap with those
 * of the mapping it moved (how). */
static int start_vm(struct fmt_writer *w, const struct fmt_event *ev, uint32_t ctx, uint64_t how)
{
    struct fmt_wblock b = {ev->addr,  w->next_serial++,     ev->size, ev->ts_ns, ev->stack, ctx,
                           ev->image, w->pred->nr_started++};

    if (w->v15 && fmt_rank_start(&w->pred->rank, b.ord))
        return -ENOMEM;
    return ev->size ? fmt_wvm_insert(&w->vm, ev->image, &b, how) : 0;
}

/* Format 1.8's kinds (docs/aggregate.md): a batch's size class is one of
 * a 64-bit size's, a transient moment is all images' or one's, and the
 * one AGGREGATE event of a trace aggregated from its start is at time 0
 * with the META's period. */
static int agg_known(const struct fmt_writer *w, const struct fmt_event *ev)
{
    if (!w->agg)
        return 0;
    switch (ev->kind) {
    case FMT_EV_HEAP_BATCH:
        return ev->arg[3] <= FMT_AGG_MAX_CLASS && !ev->flags;
    case FMT_EV_HEAP_TRANSIENT:
        return ev->arg[1] <= 1 && !(ev->flags & ~(unsigned)FMT_EVF_TRANSIENT_END);
    default: /* FMT_EV_AGGREGATE */
        return !w->agg_seen && ev->arg[0] && ev->arg[1] <= 1 && !ev->flags &&
               (!w->agg_ns || (ev->arg[0] == w->agg_ns && !ev->ts_ns && !ev->arg[1]));
    }
}

static int kind_known(const struct fmt_writer *w, const struct fmt_event *ev)
{
    unsigned kind = ev->kind;

    /* A pool event needs the feature bit that says what arg[1] is. */
    if ((ev->flags & FMT_EVF_POOL) && !w->pools)
        return 0;
    switch (kind) {
    case FMT_EV_MALLOC ... FMT_EV_PVALLOC:
    case FMT_EV_MMAP ... FMT_EV_SBRK:
    case FMT_EV_PROCESS_START ... FMT_EV_MODULE_UNLOAD:
    case FMT_EV_RSS:
    case FMT_EV_DROPPED:
        return 1;
    case FMT_EV_HEAP_CREATE ... FMT_EV_HEAP_DESTROY:
        /* Windows heaps (format 1.2), or the program's pools (1.4) */
        return w->pe || (w->pools && (ev->flags & FMT_EVF_POOL));
    case FMT_EV_VM_RESERVE ... FMT_EV_SECTION_UNMAP:
        return w->pe; /* format 1.2, PE traces only */
    case FMT_EV_HEAP_BATCH ... FMT_EV_AGGREGATE:
        return agg_known(w, ev);
    case FMT_EV_COUNTER: /* format 1.13 */
        return w->counters && ev->arg[0] < FMT_CTR_ALL && !ev->flags && !ev->stack;
    }
    return 0;
}

static inline int is_realloc(unsigned kind)
{
    return kind == FMT_EV_REALLOC || kind == FMT_EV_REALLOCARRAY;
}

static inline void put_extra_head(struct fmt_buf *m, unsigned flags, unsigned origin, unsigned mask)
{
    fmt_buf_put_varint(m, flags);
    fmt_buf_put_varint(m, origin);
    fmt_buf_put_varint(m, mask);
}

/* The EXTRA record: flags, origin, a mask of the optional fields, then
 * those fields; string bytes go to STRS. Returns 1 if one was written. */
static int put_extra(struct fmt_writer *w, const struct fmt_event *ev)
{
    unsigned mask = 0;

    for (int i = 0; i < 4; i++)
        if (ev->arg[i])
            mask |= FMT_FIELD_ARG0 << i;
    if (!is_realloc(ev->kind) && ev->old_addr)
        mask |= FMT_FIELD_OLD_ADDR;
    if (ev->old_size)
        mask |= FMT_FIELD_OLD_SIZE;
    if (ev->str && ev->str_len)
        mask |= FMT_FIELD_STR;
    if (ev->str2 && ev->str2_len)
        mask |= FMT_FIELD_STR2;
    if (!mask && !ev->flags && !ev->origin)
        return 0;

    struct fmt_buf *m = &w->col[FMT_COL_MISC];
    put_extra_head(m, ev->flags, ev->origin, mask);
    /* The fields go after their length (one byte: at most 8 varints), so
     * a reader can skip fields of later versions it does not know. */
    size_t len_at = m->len++;
    for (int i = 0; i < 4; i++)
        if (mask & (FMT_FIELD_ARG0 << i))
            fmt_buf_put_varint(m, fmt_zigzag((int64_t)ev->arg[i]));
    if (mask & FMT_FIELD_OLD_ADDR)
        fmt_buf_put_varint(m, ev->old_addr);
    if (mask & FMT_FIELD_OLD_SIZE)
        fmt_buf_put_varint(m, ev->old_size);
    if (mask & FMT_FIELD_STR) {
        fmt_buf_put_varint(m, ev->str_len);
        fmt_buf_put_bytes(&w->col[FMT_COL_STRS], ev->str, ev->str_len);
    }
    if (mask & FMT_FIELD_STR2) {
        fmt_buf_put_varint(m, ev->str2_len);
        fmt_buf_put_bytes(&w->col[FMT_COL_STRS], ev->str2, ev->str2_len);
    }
    m->data[len_at] = (uint8_t)(m->len - len_at - 1); /* <= 80: a one-byte varint */
    return 1;
}

/* Column space: reserved for a batch of events at a time, so the hot path
 * checks one counter instead of every column. */
#define ROOM_BATCH 1024

static int ensure_room_slow(struct fmt_writer *w, size_t str_bytes)
{
    int rc = 0;

    for (int i = 1; i < FMT_NR_COLUMNS && !rc; i++)
        rc = fmt_buf_reserve(&w->col[i],
                             ROOM_BATCH * (i == FMT_COL_MISC ? MISC_RESERVE : COL_RESERVE));
    rc = rc ?: fmt_buf_reserve(&w->col[FMT_COL_STRS], str_bytes);
    w->room = rc ? 0 : ROOM_BATCH;
    return rc;
}

/* Column space for one more event (NULL: a plain heap event, no strings). */
static inline int ensure_room(struct fmt_writer *w, const struct fmt_event *ev)
{
    if (__builtin_expect(w->room > 0 && (!ev || (!ev->str && !ev->str2)), 1)) {
        w->room--;
        return 0;
    }
    return ensure_room_slow(w,
                            ev ? (ev->str ? ev->str_len : 0) + (ev->str2 ? ev->str2_len : 0) : 0);
}

/* A heap address in ADDR (docs/format-encoding.md, "Address prediction"): code
 * hit (0 for the malloc family) when it is guess, else in format 1.7 its
 * class's top, else its rank among the class's freed addresses, else
 * the difference to guess (or, for a difference that would not fit beside
 * the codes, the address itself). */
static inline __attribute__((always_inline)) void
put_addr_code(struct fmt_writer *w, uint64_t addr, uint64_t size, uint64_t guess, uint8_t hit)
{
    struct fmt_buf *b = &w->col[FMT_COL_ADDR];
    struct fmt_pred *pred = w->pred;
    uint64_t cls = fmt_pred_csize(size) >> 4;

    if (addr == guess) {
        fmt_buf_put_u8(b, hit);
        return;
    }
    if (w->v17 && cls < FMT_PRED_CLASSES && addr == pred->ctop[cls]) {
        fmt_buf_put_u8(b, FMT_PRED_ADDR_CTOP);
        return;
    }
    int i = fmt_pred_shadow_take(pred, addr, size);
    if (i >= 0) {
        fmt_buf_put_u8(b, (uint8_t)(1 + i));
        return;
    }
    int64_t k = w->v15 ? fmt_recent_rank(&w->recent, w->recent_ix, addr) : -1;
    if (k >= 0) {
        fmt_buf_put_u8(b, FMT_PRED_ADDR_RECENT);
        fmt_buf_put_split(&w->col[FMT_COL_ADDR_REC], &w->col[FMT_COL_ADDR_REC_HI], (uint64_t)k);
        return;
    }
    uint64_t d = fmt_zigzag((int64_t)(addr - guess));
    if (d <= UINT64_MAX - FMT_PRED_ADDR_DIFF) {
        fmt_buf_put_varint(b, FMT_PRED_ADDR_DIFF + d);
    } else {
        fmt_buf_put_u8(b, FMT_PRED_ADDR_ESCAPE);
        fmt_buf_put_varint(b, addr);
    }
}

/* A malloc-family address: code 0 for the prediction. */
static inline __attribute__((always_inline)) void put_heap_addr(struct fmt_writer *w, uint64_t addr,
                                                                uint64_t size)
{
    put_addr_code(w, addr, size, fmt_pred_guess(w->pred, size), 0);
}

/* ctx is the context of the chunk's last event: active in the chunk, and
 * w->pred is its prediction state (encode_head() sets both, a chunk's end
 * clears cur_ctx). The usual case, without the table lookups. */
static inline int ctx_is_last(const struct fmt_writer *w, uint32_t ctx)
{
    return ctx == w->cur_ctx && w->nr_chunk_events;
}

/* Before encoding an event of context ctx at ts_ns: end the chunk if a new
 * thread would exceed its contexts, keep its time range. */
static inline __attribute__((always_inline)) int event_begin(struct fmt_writer *w, uint32_t ctx,
                                                             uint64_t ts_ns)
{
    int rc;

    /* A new thread when the chunk has as many as it may: the chunk ends. */
    if (!ctx_is_last(w, ctx) && !fmt_wctx_active(w, ctx) && w->nr_slots == FMT_MAX_ACTIVE_CTX &&
        (rc = fmt_wchunk_flush(w)))
        return rc;
    if (w->nr_chunk_events) {
        if (ts_ns < w->chunk_min_ts)
            w->chunk_min_ts = ts_ns;
        if (ts_ns > w->chunk_max_ts)
            w->chunk_max_ts = ts_ns;
    }
    return 0;
}

/* After encoding (rc its result): count the event, end a full chunk. */
static inline __attribute__((always_inline)) int event_end(struct fmt_writer *w, int rc)
{
    /* An event half-encoded into the columns cannot be taken back; the
     * only failures here are allocation failures, after which the writer
     * refuses to go on. */
    if (rc) {
        w->out.err = rc;
        return rc;
    }
    w->nr_chunk_events++;
    w->st.nr_events++;
    if (w->nr_chunk_events >= w->chunk_limit || w->col[FMT_COL_STRS].len >= FMT_CHUNK_MAX_STRS)
        return fmt_wchunk_flush(w);
    return 0;
}

/* OP, TIME and CTX of an event (docs/format-events.md, "Events"); returns its OP
 * byte, which EXTRA may still mark, or NULL if out of memory. */
static inline __attribute__((always_inline)) uint8_t *
encode_head(struct fmt_writer *w, uint32_t ctx, unsigned kind, uint64_t ts_ns)
{
    struct fmt_buf *col = w->col;

    if (w->nr_chunk_events == 0) {
        w->chunk_first_serial = w->next_serial;
        w->chunk_base_ts = w->chunk_min_ts = w->chunk_max_ts = ts_ns;
        w->prev_ts = ts_ns;
        w->prev_fact_addr = 0;
        w->prev_fact_ts = ts_ns;
        w->prev_fact_serial = w->next_serial;
        w->prev_stack[0] = w->prev_stack[1] = 0;
        fmt_recent_reset(&w->recent);
    }
    if (!ctx_is_last(w, ctx)) {
        struct fmt_pred *pred = fmt_wctx_pred(w, ctx);
        if (!pred)
            return NULL;
        w->pred = pred;
    }

    uint8_t *op = &col[FMT_COL_OP].data[col[FMT_COL_OP].len++];
    *op = (uint8_t)kind;
    /* Frees get their own time and stack columns: their statistics differ
     * from the allocations' (time since the allocation, often no stack),
     * and mixing the two costs up to a bit per value. */
    int fcol = kind == FMT_EV_FREE;
    int64_t dt = fmt_wtime_units(w, (int64_t)(ts_ns - w->prev_ts));
    if (w->tpack)
        fmt_tpack_put(&w->tp[fcol], &col[fcol ? FMT_COL_FREE_TIME : FMT_COL_TIME],
                      &col[FMT_COL_TIME_HI], dt);
    else
        fmt_buf_put_split(&col[fcol ? FMT_COL_FREE_TIME : FMT_COL_TIME], &col[FMT_COL_TIME_HI],
                          fmt_zigzag(dt));
    w->prev_ts = ts_ns;
    if (ctx != w->cur_ctx || w->nr_chunk_events == 0) {
        *op |= FMT_OP_CTX;
        fmt_buf_put_varint(&col[FMT_COL_CTX], ctx);
        w->cur_ctx = ctx;
    }
    return op;
}

/* Stack ids as differences to the previous one of the column: a new
 * stack is usually the newest id, and a loop's sites repeat. */
static inline __attribute__((always_inline)) void encode_stack(struct fmt_writer *w, unsigned kind,
                                                               uint32_t stack)
{
    int fcol = kind == FMT_EV_FREE;
    uint32_t *prev_stack = &w->prev_stack[fcol];

    fmt_buf_put_varint(&w->col[fcol ? FMT_COL_FREE_STACK : FMT_COL_STACK],
                       fmt_zigzag((int64_t)stack - (int64_t)*prev_stack));
    *prev_stack = stack;
}

/* The rest of a malloc-family allocation: SIZE, ADDR, the new block. */
static inline __attribute__((always_inline)) int encode_alloc(struct fmt_writer *w,
                                                              struct fmt_wlive *live,
                                                              const struct heap_ev *h, uint32_t ctx,
                                                              int failed)
{
    fmt_buf_put_split(&w->col[FMT_COL_SIZE], &w->col[FMT_COL_SIZE_HI], h->size);
    put_heap_addr(w, h->addr, h->size);
    return h->addr && !failed ? start_heap(w, live, h, ctx) : 0;
}

/* A realloc in format 1.7 (docs/format-encoding.md, "Reallocs"): the old block's
 * reference, SIZE, then the new address coded as glibc finds it: 0 in
 * place, else through the model (without the tcache, which realloc does
 * not use; a realloc of NULL is a malloc). The model then takes the new
 * block before the old one ends, as glibc's realloc does. */
static __attribute__((noinline)) int encode_realloc17(struct fmt_writer *w, struct fmt_wlive *live,
                                                      const struct heap_ev *h, uint32_t ctx,
                                                      uint64_t old_addr, int failed)
{
    struct fmt_pred *pred = w->pred;
    struct fmt_wblock b;
    int ended = !failed && old_addr && fmt_wlive_take(live, h->image, old_addr, &b);
    int starts = h->addr && !failed, rc = 0;

    if (ended) {
        rc = ref_block(w, h->ts_ns, &b, ctx, !starts, h->tot);
    } else {
        if (h->tot)
            fmt_wtot_unmatched(&w->tot, old_addr);
        fmt_buf_put_varint(&w->col[FMT_COL_REF], 0);
        fmt_buf_put_varint(&w->col[FMT_COL_ADDR], old_addr);
    }
    fmt_buf_put_split(&w->col[FMT_COL_SIZE], &w->col[FMT_COL_SIZE_HI], h->size);
    int in_place = old_addr && h->addr == old_addr;
    if (!old_addr) {
        put_heap_addr(w, h->addr, h->size);
        if (starts)
            fmt_pred_start(pred, h->addr, h->size);
    } else {
        if (in_place)
            fmt_buf_put_u8(&w->col[FMT_COL_ADDR], 0);
        else
            put_addr_code(w, h->addr, h->size, fmt_pred_guess_realloc(pred, h->size),
                          FMT_PRED_ADDR_GUESS);
        if (starts && ended && in_place)
            fmt_pred_in_place(pred, h->addr, b.size, h->size);
        else if (starts)
            fmt_pred_start_realloc(pred, h->addr, h->size);
    }
    if (ended && !(starts && in_place))
        end_model(w, &b);
    return rc ?: starts ? start_block(w, live, h, ctx) : 0;
}

/* The rest of a realloc: the block at old_addr ends, SIZE, ADDR as the
 * difference to the old address (or the prediction), the new block. */
static inline __attribute__((always_inline)) int
encode_realloc(struct fmt_writer *w, struct fmt_wlive *live, const struct heap_ev *h, uint32_t ctx,
               uint64_t old_addr, int failed)
{
    if (w->v17)
        return encode_realloc17(w, live, h, ctx, old_addr, failed);
    int rc =
        end_heap(w, h->ts_ns, live, h->image, ctx, old_addr, !failed, !h->addr || failed, h->tot);

    if (rc)
        return rc;
    uint64_t guess = old_addr ? old_addr : fmt_pred_guess(w->pred, h->size);
    fmt_buf_put_split(&w->col[FMT_COL_SIZE], &w->col[FMT_COL_SIZE_HI], h->size);
    fmt_buf_put_varint(&w->col[FMT_COL_ADDR], fmt_zigzag((int64_t)(h->addr - guess)));
    return h->addr && !failed ? start_heap(w, live, h, ctx) : 0;
}

static int encode(struct fmt_writer *w, const struct fmt_event *ev, uint32_t ctx)
{
    struct fmt_buf *col = w->col;
    unsigned kind = ev->kind;
    int failed = (ev->flags & FMT_EVF_FAILED) != 0;
    struct fmt_wlive *live = &w->live;
    uint32_t key = ev->image;
    int rc;

    /* A pool's blocks are apart from malloc's (fmt_wpool_internal.h). A
     * pool used without a HEAP_CREATE is defined, nameless, at its first
     * event. */
    if (ev->flags & FMT_EVF_POOL) {
        int created;

        if ((rc = fmt_wpool_id(&w->pool, ev->image, ev->arg[1], &key, &created)) ||
            (created && kind != FMT_EV_HEAP_CREATE &&
             (rc = fmt_wdefs_pool(w, ev->image, ev->arg[1], ev->ts_ns, NULL, 0))))
            return rc;
        live = &w->pool.blocks;
    }
    uint8_t *op = encode_head(w, ctx, kind, ev->ts_ns);
    if (!op)
        return -ENOMEM;
    if (w->tot.on && (rc = fmt_wtot_other(&w->tot, ev)))
        return rc;
    if (put_extra(w, ev))
        *op |= FMT_OP_EXTRA;
    encode_stack(w, kind, ev->stack);

    /* a heap kind's fields (a snapshot's copy makes no allocation) */
    struct heap_ev h = {.ts_ns = ev->ts_ns,
                        .addr = ev->addr,
                        .size = ev->size,
                        .stack = ev->stack,
                        .image = key,
                        .made = ev->origin != FMT_ORIGIN_SNAPSHOT,
                        .tot = w->tot.on};
    switch (kind) {
    case FMT_EV_MALLOC:
    case FMT_EV_CALLOC:
    case FMT_EV_MEMALIGN ... FMT_EV_PVALLOC:
        return encode_alloc(w, live, &h, ctx, failed);
    case FMT_EV_FREE:
        return end_heap(w, ev->ts_ns, live, key, ctx, ev->addr, 1, true, h.tot);
    case FMT_EV_REALLOC:
    case FMT_EV_REALLOCARRAY:
        return encode_realloc(w, live, &h, ctx, ev->old_addr, failed);
    default:
        break;
    }

    /* Everything else: address and size as they are. */
    fmt_buf_put_split(&col[FMT_COL_SIZE], &col[FMT_COL_SIZE_HI], ev->size);
    fmt_buf_put_varint(&col[FMT_COL_ADDR], ev->addr);
    int ok = !failed && ev->addr != UINT64_MAX;
    uint64_t how = 0;
    switch (kind) {
    case FMT_EV_MMAP:
        rc = end_vm(w, ev, ctx, ev->addr, ev->size, ok && ev->addr, &how);
        how = (ev->arg[0] & 0xffffffffu) | ev->arg[1] << 32;
        return rc ?: (ok && ev->addr ? start_vm(w, ev, ctx, how) : 0);
    case FMT_EV_MUNMAP:
        return end_vm(w, ev, ctx, ev->addr, ev->size, ok, &how);
    case FMT_EV_MREMAP:
        rc = end_vm(w, ev, ctx, ev->old_addr, ev->old_size, ok && ev->addr, &how);
        return rc ?: (ok && ev->addr ? start_vm(w, ev, ctx, how) : 0);
    case FMT_EV_DROPPED:
        w->chunk_dropped += ev->arg[0];
        return 0;
    case FMT_EV_AGGREGATE: /* its record goes with its chunk's DEFS block */
        w->agg_seen = 1;
        return fmt_wdefs_aggregate(w, ev);
    }
    return fmt_wdefs_life(w, ev, ctx);
}

/* A pool destroyed (format 1.4): its blocks still live end just before
 * the HEAP_DESTROY, by frees flagged HEAP_DESTROYED with its time, thread
 * and stack, oldest block first (docs/format-events.md, "Pools"). */
static int end_pool(struct fmt_writer *w, const struct fmt_event *ev)
{
    struct fmt_wblock *v;
    uint64_t nr;
    uint32_t id;
    int created;
    int rc = fmt_wpool_id(&w->pool, ev->image, ev->arg[1], &id, &created);

    if (rc || (rc = fmt_wpool_blocks(&w->pool, id, &v, &nr)))
        return rc;
    for (uint64_t i = 0; i < nr && !rc; i++) {
        struct fmt_event f = {.ts_ns = ev->ts_ns,
                              .kind = FMT_EV_FREE,
                              .flags = FMT_EVF_POOL | FMT_EVF_HEAP_DESTROYED,
                              .image = ev->image,
                              .thread = ev->thread,
                              .pid = ev->pid,
                              .tid = ev->tid,
                              .stack = ev->stack,
                              .addr = v[i].addr,
                              .arg = {0, ev->arg[1]}};

        rc = fmt_writer_event(w, &f);
    }
    free(v);
    return rc;
}

int fmt_writer_event(struct fmt_writer *w, const struct fmt_event *ev)
{
    struct fmt_event rounded;
    int rc;

    if (w->out.err)
        return w->out.err;
    if (w->tu > 1) {
        rounded = *ev;
        rounded.ts_ns = fmt_wtime_round(w, ev->ts_ns);
        ev = &rounded;
    }
    if (!kind_known(w, ev) || ev->stack > w->stacks.nr_nodes ||
        (ev->str && ev->str_len > FMT_MAX_STRING) || (ev->str2 && ev->str2_len > FMT_MAX_STRING))
        return -EINVAL;
    if (ev->kind == FMT_EV_HEAP_DESTROY && (ev->flags & FMT_EVF_POOL) && (rc = end_pool(w, ev)))
        return rc;
    if ((rc = ensure_room(w, ev)))
        return rc;
    uint32_t ctx = w->cur_ctx;
    if (!ctx || !fmt_wctx_same(&w->ctxs[ctx], ev)) {
        struct fmt_writer_who who = {ev->image, ev->thread, ev->pid, ev->tid};

        if ((rc = fmt_wctx_lookup(w, &who, ev->ts_ns, &ctx))) {
            w->out.err = rc;
            return rc;
        }
    }
    if ((rc = event_begin(w, ctx, ev->ts_ns)))
        return rc;
    /* after event_begin, which may end the chunk */
    rc = w->tot.on ? fmt_wtot_event(&w->tot, w->nr_chunks + 1, ctx, &w->ctxs[ctx], ev->ts_ns) : 0;
    return event_end(w, rc ?: encode(w, ev, ctx));
}

/* The start of a heap event on the recorder's fast paths: the checks
 * fmt_writer_event() makes (bad: the call's own arguments are wrong), the
 * context, event_begin(). Its context in *ctx; 0 or the error. */
static inline __attribute__((always_inline)) int heap_begin(struct fmt_writer *w,
                                                            const struct fmt_writer_who *who,
                                                            uint64_t ts_ns, uint32_t stack, int bad,
                                                            uint32_t *ctx, bool tot)
{
    int rc;

    if (w->out.err)
        return w->out.err;
    if (bad || stack > w->stacks.nr_nodes)
        return -EINVAL;
    if ((rc = ensure_room(w, NULL)))
        return rc;
    *ctx = w->cur_ctx;
    if (!*ctx || !fmt_wctx_who_same(&w->ctxs[*ctx], who)) {
        if ((rc = fmt_wctx_lookup(w, who, ts_ns, ctx))) {
            w->out.err = rc;
            return rc;
        }
    }
    if ((rc = event_begin(w, *ctx, ts_ns)))
        return rc;
    /* the chunk totals' entry after event_begin, which may end the chunk */
    return tot ? fmt_wtot_event(&w->tot, w->nr_chunks + 1, *ctx, who, ts_ns) : 0;
}

/* fmt_writer_heap(), with or without the chunk totals (tot: a constant). */
static inline __attribute__((always_inline)) int
writer_heap(struct fmt_writer *w, const struct fmt_writer_who *who, unsigned kind, uint64_t ts_ns,
            uint64_t addr, uint64_t size, uint32_t stack, bool tot)
{
    ts_ns = fmt_wtime_round(w, ts_ns);
    struct heap_ev h = {ts_ns, addr, size, stack, who->image, true, tot};
    uint32_t ctx;
    int rc =
        heap_begin(w, who, ts_ns, stack, kind != FMT_EV_MALLOC && kind != FMT_EV_FREE, &ctx, tot);

    if (rc)
        return rc;
    if (!encode_head(w, ctx, kind, ts_ns))
        return event_end(w, -ENOMEM);
    if (tot)
        fmt_wtot_call(&w->tot, kind, 0);
    encode_stack(w, kind, stack);
    if (kind == FMT_EV_FREE)
        return event_end(w, end_heap(w, ts_ns, &w->live, who->image, ctx, addr, 1, true, tot));
    return event_end(w, encode_alloc(w, &w->live, &h, ctx, 0));
}

int fmt_writer_heap(struct fmt_writer *w, const struct fmt_writer_who *who, unsigned kind,
                    uint64_t ts_ns, uint64_t addr, uint64_t size, uint32_t stack)
{
    if (w->tot.on)
        return writer_heap(w, who, kind, ts_ns, addr, size, stack, true);
    return writer_heap(w, who, kind, ts_ns, addr, size, stack, false);
}

int fmt_writer_realloc(struct fmt_writer *w, const struct fmt_writer_who *who, unsigned flags,
                       uint64_t ts_ns, uint64_t old_addr, uint64_t addr, uint64_t size,
                       uint32_t stack)
{
    ts_ns = fmt_wtime_round(w, ts_ns);
    bool tot = w->tot.on;
    struct heap_ev h = {ts_ns, addr, size, stack, who->image, true, tot};
    uint32_t ctx;
    int rc = heap_begin(w, who, ts_ns, stack, (flags & ~FMT_EVF_IN_PLACE) != 0, &ctx, tot);

    if (rc)
        return rc;
    uint8_t *op = encode_head(w, ctx, FMT_EV_REALLOC, ts_ns);
    if (!op)
        return event_end(w, -ENOMEM);
    if (flags) { /* an EXTRA record of the flags alone (put_extra) */
        struct fmt_buf *m = &w->col[FMT_COL_MISC];

        put_extra_head(m, flags, 0, 0);
        fmt_buf_put_u8(m, 0); /* the fields' length */
        *op |= FMT_OP_EXTRA;
    }
    if (tot)
        fmt_wtot_call(&w->tot, FMT_EV_REALLOC, flags);
    encode_stack(w, FMT_EV_REALLOC, stack);
    return event_end(w, encode_realloc(w, &w->live, &h, ctx, old_addr, 0));
}
