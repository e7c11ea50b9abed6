/* SPDX-License-Identifier: MIT */
/* Decoding events from the columns of one chunk: the hot loop of every
 * analysis. Each chunk stands alone (blocks ended that were started before
 * it carry their facts), so the only state kept is the chunk's own started
 * blocks, in an array indexed by serial. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/fmt_reader_internal.h"
#include "format/fmt_zc_internal.h"

static int load_columns(struct fmt_reader *r, struct fmt_cur *c, uint64_t off, uint32_t nr_ev)
{
    uint64_t nr_cols = fmt_cur_varint(c);
    struct {
        uint64_t id, enc, raw, stored;
    } dir[64];
    uint64_t total = 0;

    if (c->bad || nr_cols > 64)
        return fmt_rerr(r, -EPROTO, off, "bad chunk header");
    for (uint64_t i = 0; i < nr_cols; i++) {
        dir[i].id = fmt_cur_varint(c);
        dir[i].enc = fmt_cur_varint(c);
        dir[i].raw = fmt_cur_varint(c);
        dir[i].stored = fmt_cur_varint(c);
        /* What an event can put in a column: one varint (ADDR: two), one
         * op byte, an extra record and references in MISC, strings. Tight
         * bounds keep a small crafted file from making the reader inflate
         * columns of zeros to hundreds of megabytes. */
        uint64_t bound = dir[i].id == FMT_COL_OP     ? nr_ev
                         : dir[i].id == FMT_COL_ADDR ? (uint64_t)nr_ev * 2 * FMT_VARINT_MAX
                         : dir[i].id == FMT_COL_MISC ? (uint64_t)nr_ev * 256
                         : dir[i].id == FMT_COL_STRS || dir[i].id >= FMT_NR_COLUMNS
                             ? FMT_BLOCK_MAX_PAYLOAD
                             : (uint64_t)nr_ev * FMT_VARINT_MAX;
        if (c->bad || dir[i].raw > FMT_BLOCK_MAX_PAYLOAD || dir[i].raw > bound ||
            dir[i].stored > fmt_cur_left(c) || dir[i].enc > FMT_COL_ENC_ZLIB ||
            (dir[i].enc == FMT_COL_ENC_RAW && dir[i].raw != dir[i].stored))
            return fmt_rerr(r, -EPROTO, off, "bad column %llu in chunk header",
                            (unsigned long long)i);
        total += dir[i].stored;
    }
    if (total != fmt_cur_left(c))
        return fmt_rerr(r, -EPROTO, off, "column sizes do not add up to the chunk size");
    for (int k = 0; k < FMT_NR_COLUMNS; k++) {
        r->col[k].len = 0;
        fmt_cur_init(&r->cur[k], NULL, 0);
    }
    uint32_t seen = 0;
    for (uint64_t i = 0; i < nr_cols; i++) {
        const uint8_t *src = fmt_cur_bytes(c, dir[i].stored);
        if (dir[i].id == 0 || dir[i].id >= FMT_NR_COLUMNS)
            continue; /* a column of a later version */
        if (seen & (1u << dir[i].id))
            return fmt_rerr(r, -EPROTO, off, "column %llu appears twice",
                            (unsigned long long)dir[i].id);
        seen |= 1u << dir[i].id;
        struct fmt_buf *b = &r->col[dir[i].id];
        if (fmt_buf_reserve(b, dir[i].raw + 1))
            return fmt_rerr(r, -ENOMEM, off, "out of memory");
        if (dir[i].enc == FMT_COL_ENC_RAW) {
            memcpy(b->data, src, dir[i].raw);
        } else if (dir[i].enc == FMT_COL_ENC_ZLIB) { /* 1.2: the Windows launcher's coding */
            if (fmt_zc_inflate(b->data, dir[i].raw, src, dir[i].stored))
                return fmt_rerr(r, -EPROTO, off, "column %llu: bad compressed data (zlib)",
                                (unsigned long long)dir[i].id);
        } else {
            size_t z = ZSTD_decompressDCtx(r->dctx, b->data, dir[i].raw, src, dir[i].stored);
            if (ZSTD_isError(z) || z != dir[i].raw)
                return fmt_rerr(r, -EPROTO, off, "column %llu: bad compressed data (%s)",
                                (unsigned long long)dir[i].id,
                                ZSTD_isError(z) ? ZSTD_getErrorName(z) : "wrong size");
        }
        b->len = dir[i].raw;
        fmt_cur_init(&r->cur[dir[i].id], b->data, b->len);
    }
    if (r->col[FMT_COL_OP].len != nr_ev)
        return fmt_rerr(r, -EPROTO, off, "op column holds %zu events, chunk says %u",
                        r->col[FMT_COL_OP].len, nr_ev);
    return 0;
}

/* Free the contexts' lists of started blocks (and, 1.5, the bits of
 * their ended ones): a chunk's loading makes them again. */
static void drop_slot_lists(struct fmt_reader *r)
{
    for (uint32_t i = 0; i < r->cap_slots; i++) {
        free(r->slots[i].started.v);
        r->slots[i].started = (struct fmt_rlist){NULL, 0, 0};
        fmt_rank_free(&r->slots[i].pred.rank);
    }
}

static int load_chunk(struct fmt_reader *r, uint32_t k)
{
    const struct fmt_rchunk *ch = &r->chunks[k];
    uint64_t off = ch->c.offset;
    struct fmt_block_hdr h;
    int rc;

    r->loaded = 0;
    if ((rc = fmt_rblock_load(r, off, &h)))
        return rc;
    if (h.type != FMT_BLOCK_CHUNK)
        return fmt_rerr(r, -EPROTO, off, "not a chunk block");
    struct fmt_cur c;
    fmt_cur_init(&c, r->raw.data, r->raw.len);
    uint64_t no = fmt_cur_varint(&c);
    uint64_t nev = fmt_cur_varint(&c);
    uint64_t first_serial = fmt_cur_varint(&c);
    uint64_t base_ts = fmt_cur_varint(&c);
    if (c.bad || no != k || nev != ch->c.nr_events || first_serial != ch->c.first_serial)
        return fmt_rerr(r, -EPROTO, off, "chunk header does not match its summary");
    if ((rc = load_columns(r, &c, off, (uint32_t)nev)))
        return rc;
    if (ch->c.nr_serials > r->cap_blks) {
        free(r->blks);
        r->cap_blks = ch->c.nr_serials;
        r->blks = malloc(r->cap_blks * sizeof(*r->blks));
        if (!r->blks) {
            r->cap_blks = 0;
            return fmt_rerr(r, -ENOMEM, off, "out of memory");
        }
    }
    if (!r->ctx_slot && !(r->ctx_slot = calloc((size_t)r->nr_ctxs + 1, sizeof(*r->ctx_slot))))
        return fmt_rerr(r, -ENOMEM, off, "out of memory");
    /* The lists of started blocks keep their arrays from chunk to chunk;
     * drop them when they hold far more than this chunk can need. */
    uint64_t held = 0;
    for (uint32_t i = 0; i < r->cap_slots; i++)
        held += r->slots[i].started.cap + r->slots[i].pred.rank.cap / 16;
    if (held > 4 * ch->c.nr_serials + 65536)
        drop_slot_lists(r);
    r->gen++;
    r->nr_slots = 0;
    r->cur_chunk = k;
    r->ev_left = (uint32_t)nev;
    r->ev_index = 0;
    r->chunk_first_serial = first_serial;
    r->next_serial = first_serial;
    r->end_serial = first_serial + ch->c.nr_serials;
    r->prev_ts = base_ts;
    r->chunk_first_ts = ch->c.first_ts_ns;
    r->chunk_last_ts = ch->c.last_ts_ns;
    r->tq[0] = r->tq[1] = (struct fmt_tpack){0, 0};
    fmt_recent_reset(&r->recent);
    r->prev_fact_addr = 0;
    r->prev_fact_ts = base_ts;
    r->prev_fact_serial = first_serial;
    r->prev_stack[0] = r->prev_stack[1] = 0;
    r->ctx = 0;
    fmt_wdelta_clear(&r->vdeltas);
    r->vgen++;
    r->loaded = 1;
    return 0;
}

struct unsum {
    struct fmt_reader *r;
    int rc;
};

/* A summary's delta taken from what the chunk's events added. */
static void unsummed(void *arg, uint32_t stack, int64_t bytes, int64_t blocks)
{
    struct unsum *u = arg;

    if (!u->rc)
        u->rc = fmt_wdelta_add(&u->r->vdeltas, u->r->vgen, stack, -bytes, -blocks);
}

/* verify: the chunk's events changed each stack's live heap as its
 * summary says (the index fmt_reader_live_at_chunk sums). */
static int summary_matches(struct fmt_reader *r, uint64_t off)
{
    const struct fmt_wdeltas *d = &r->vdeltas;
    struct unsum u = {r, 0};
    int rc = fmt_rdefs_chunk_delta(r, r->cur_chunk, unsummed, &u);

    if (rc)
        return rc;
    if (u.rc)
        return fmt_rerr(r, -ENOMEM, off, "out of memory");
    for (uint32_t i = 0; i < d->nr; i++)
        if (d->touched[i].bytes || d->touched[i].blocks)
            return fmt_rerr(r, -EPROTO, off,
                            "chunk %u's summary does not match its events: stack %u's live heap "
                            "is off by %lld bytes in %lld blocks",
                            r->cur_chunk, d->touched[i].stack, (long long)d->touched[i].bytes,
                            (long long)d->touched[i].blocks);
    return 0;
}

/* The event was the chunk's last: everything must be used up exactly. */
static int finish_chunk(struct fmt_reader *r)
{
    uint64_t off = r->chunks[r->cur_chunk].c.offset;
    int rc;

    for (int k = 1; k < FMT_NR_COLUMNS; k++)
        if (fmt_cur_left(&r->cur[k]))
            return fmt_rerr(r, -EPROTO, off, "column %d of chunk %u has %zu bytes left over", k,
                            r->cur_chunk, fmt_cur_left(&r->cur[k]));
    if (r->tq[0].nr || r->tq[1].nr)
        return fmt_rerr(r, -EPROTO, off, "a group of packed times of chunk %u has %u left over",
                        r->cur_chunk, r->tq[0].nr + r->tq[1].nr);
    if (r->next_serial != r->end_serial)
        return fmt_rerr(r, -EPROTO, off, "chunk %u started %llu blocks, its summary says %llu",
                        r->cur_chunk, (unsigned long long)(r->next_serial - r->chunk_first_serial),
                        (unsigned long long)(r->end_serial - r->chunk_first_serial));
    if (r->verify && (rc = summary_matches(r, off)))
        return rc;
    r->loaded = 0;
    return 0;
}

/* The features fmt_reader_next's decoders are made for: constants in those
 * of FMT_RLAYOUT_1_1 and FMT_RLAYOUT_1_5 (not asked per event), the
 * reader's flags in FMT_RLAYOUT_ANY's. */
#define ALWAYS_INLINE inline __attribute__((always_inline))

static ALWAYS_INLINE int has_cands(const struct fmt_reader *r, int lay)
{
    return lay == FMT_RLAYOUT_ANY ? r->addr_cands : 1;
}

static ALWAYS_INLINE int has_v13(const struct fmt_reader *r, int lay)
{
    return lay == FMT_RLAYOUT_ANY ? r->v13 : lay == FMT_RLAYOUT_1_5;
}

static ALWAYS_INLINE int has_tpack(const struct fmt_reader *r, int lay)
{
    return lay == FMT_RLAYOUT_ANY ? r->tpack : lay == FMT_RLAYOUT_1_5;
}

static ALWAYS_INLINE int has_v15(const struct fmt_reader *r, int lay)
{
    return lay == FMT_RLAYOUT_ANY ? r->v15 : lay == FMT_RLAYOUT_1_5;
}

/* A heap address's code v of format 1.1 (put_addr_code in fmt_wevent.c,
 * docs/format-encoding.md "Address prediction") but the hit, guess the prediction.
 * Returns 0, or -1 for a freed-block rank its class's ring does not have
 * or an unused code. */
static ALWAYS_INLINE int get_addr_code(struct fmt_reader *r, struct fmt_pred *pred, uint64_t size,
                                       uint64_t v, int realloc, uint64_t *addr, int lay)
{
    struct fmt_cur *c = &r->cur[FMT_COL_ADDR];

    if (v < FMT_PRED_ADDR_ESCAPE)
        return fmt_pred_shadow_get(pred, size, (unsigned)(v - 1), addr) ? 0 : -1;
    else if (v == FMT_PRED_ADDR_ESCAPE)
        *addr = fmt_cur_varint(c);
    else if (v > FMT_PRED_ADDR_DIFF)
        *addr = (realloc ? fmt_pred_guess_realloc(pred, size) : fmt_pred_guess(pred, size)) +
                (uint64_t)fmt_unzigzag(v - FMT_PRED_ADDR_DIFF);
    else if (v == FMT_PRED_ADDR_RECENT && has_v15(r, lay)) /* 1.5: a recently ended block's */
        return fmt_recent_get(
                   &r->recent,
                   fmt_cur_split(&r->cur[FMT_COL_ADDR_REC], &r->cur[FMT_COL_ADDR_REC_HI]), addr)
                   ? 0
                   : -1;
    else if (v == FMT_PRED_ADDR_CTOP && r->v17 && fmt_pred_csize(size) >> 4 < FMT_PRED_CLASSES)
        *addr = pred->ctop[fmt_pred_csize(size) >> 4]; /* 1.7: the class's top */
    else
        return -1;
    return 0;
}

/* A malloc-family address: code 0 the prediction. */
static ALWAYS_INLINE int get_heap_addr(struct fmt_reader *r, struct fmt_pred *pred, uint64_t size,
                                       uint64_t *addr, int lay)
{
    uint64_t v = fmt_cur_varint(&r->cur[FMT_COL_ADDR]);

    if (v == 0) {
        *addr = fmt_pred_guess(pred, size);
        return 0;
    }
    return get_addr_code(r, pred, size, v, 0, addr, lay);
}

/* A realloc of format 1.7 once its reference is read (ended: it named
 * the old block): its old address unless ended, size and new address
 * (encode_realloc17 in fmt_wevent.c), and the address model's steps, all
 * but the new block's start (decode_blocks). Returns 0 or -1: a bad code. */
static __attribute__((noinline)) int get_realloc17(struct fmt_reader *r, struct fmt_event *ev,
                                                   int ended, int failed)
{
    struct fmt_cur *cur = r->cur;
    struct fmt_pred *pred = &r->sl->pred;
    uint64_t old, size, addr, v;

    if (!ended)
        ev->old_addr = fmt_cur_varint(&cur[FMT_COL_ADDR]);
    old = ev->old_addr;
    size = fmt_cur_split(&cur[FMT_COL_SIZE], &cur[FMT_COL_SIZE_HI]);
    if (!old) {
        if (get_heap_addr(r, pred, size, &addr, FMT_RLAYOUT_ANY))
            return -1;
    } else {
        v = fmt_cur_varint(&cur[FMT_COL_ADDR]);
        addr = !v ? old : v == FMT_PRED_ADDR_GUESS ? fmt_pred_guess_realloc(pred, size) : 0;
        if (v && v != FMT_PRED_ADDR_GUESS &&
            get_addr_code(r, pred, size, v, 1, &addr, FMT_RLAYOUT_ANY))
            return -1;
    }
    int starts = !failed && addr, in_place = old && addr == old;
    if (!old && starts)
        fmt_pred_start(pred, addr, size);
    else if (starts && ended && in_place)
        fmt_pred_in_place(pred, addr, ev->ref_size, size);
    else if (starts)
        fmt_pred_start_realloc(pred, addr, size);
    if (ended && !(starts && in_place)) {
        fmt_pred_end(pred, old, ev->ref_size);
        fmt_recent_push(&r->recent, old);
    }
    ev->addr = addr;
    ev->size = size;
    return 0;
}

__attribute__((cold, noinline)) static int bad_event(struct fmt_reader *r, const char *what)
{
    return fmt_rerr(r, -EPROTO, r->chunks[r->cur_chunk].c.offset, "chunk %u, event %u: %s",
                    r->cur_chunk, r->ev_index, what);
}

/* Format 1.8's kinds (docs/aggregate.md), where the trace says they may
 * be: only with the feature bit; batches and transient moments in its
 * aggregated stretch (from the AGGREGATE record's time, or the start with
 * the META's period); the AGGREGATE event where its record says. Cold: an
 * aggregated trace has few of them. Returns 0 or a reader error. */
static __attribute__((cold, noinline)) int check_agg(struct fmt_reader *r,
                                                     const struct fmt_event *ev)
{
    const struct fmt_trace_info *i = &r->info;

    if (!r->agg)
        return bad_event(r, "unknown event kind");
    switch (ev->kind) {
    case FMT_EV_AGGREGATE:
        if (!r->agg_defs || ev->ts_ns != i->aggregate_from_ns || ev->arg[0] != i->aggregate_ns ||
            ev->arg[1] > 1 || ev->flags)
            return bad_event(r, "aggregate event unlike its record");
        return 0;
    case FMT_EV_HEAP_BATCH:
        if (ev->arg[3] > FMT_AGG_MAX_CLASS || ev->flags)
            return bad_event(r, "bad heap batch");
        break;
    default: /* FMT_EV_HEAP_TRANSIENT */
        if (ev->arg[1] > 1 || (ev->flags & ~FMT_EVF_TRANSIENT_END))
            return bad_event(r, "bad transient moment");
        break;
    }
    if (!i->aggregate_ns || ev->ts_ns < i->aggregate_from_ns)
        return bad_event(r, "aggregated event in an exact stretch");
    return 0;
}

/* Make ctx the current context: find or give it a slot in this chunk.
 * Returns 0, or -1 if the chunk has more active contexts than allowed. */
static int use_slot(struct fmt_reader *r, uint32_t ctx)
{
    uint64_t v = r->ctx_slot[ctx];

    if (v >> FMT_SLOT_BITS == r->gen) {
        r->slot = (uint32_t)(v & (FMT_MAX_ACTIVE_CTX - 1));
        r->sl = &r->slots[r->slot];
        return 0;
    }
    if (r->nr_slots == FMT_MAX_ACTIVE_CTX)
        return -1;
    if (r->nr_slots == r->cap_slots) {
        uint32_t cap = r->cap_slots ? r->cap_slots * 2 : 8;
        struct fmt_rslot *s = realloc(r->slots, (size_t)cap * sizeof(*s));
        if (!s)
            return -1;
        memset(s + r->cap_slots, 0, (size_t)(cap - r->cap_slots) * sizeof(*s));
        r->slots = s;
        r->cap_slots = cap;
    }
    r->slot = r->nr_slots++;
    r->ctx_slot[ctx] = r->gen << FMT_SLOT_BITS | r->slot;
    r->sl = &r->slots[r->slot];
    fmt_pred_reset(&r->sl->pred);
    r->sl->started.len = 0;
    return 0;
}

static inline int set_ctx(struct fmt_reader *r, struct fmt_event *ev, uint32_t ctx)
{
    if (!ctx || ctx > r->nr_ctxs)
        return -1;
    const struct fmt_thread_info *t = &r->ctxs[ctx - 1].t;
    ev->image = t->image;
    ev->thread = t->thread;
    ev->pid = t->pid;
    ev->tid = t->tid;
    return 0;
}

/* EXTRA record: flags, origin, field mask, the fields' length, fields
 * (strings in STRS). Mask bits this reader does not know belong to fields
 * after the known ones, and are skipped by the length. */
static int get_extra(struct fmt_reader *r, struct fmt_event *ev)
{
    struct fmt_cur *m = &r->cur[FMT_COL_MISC];
    uint64_t flags = fmt_cur_varint(m);
    uint64_t origin = fmt_cur_varint(m);
    uint64_t mask = fmt_cur_varint(m);
    uint64_t len = fmt_cur_varint(m);
    const uint8_t *body = fmt_cur_bytes(m, len);

    if (m->bad || flags > UINT16_MAX || origin > UINT8_MAX)
        return bad_event(r, "bad extra fields");
    struct fmt_cur f;
    fmt_cur_init(&f, body, len);
    ev->flags = (uint16_t)flags;
    ev->origin = (uint8_t)origin;
    for (int i = 0; i < 4; i++)
        if (mask & (FMT_FIELD_ARG0 << i))
            ev->arg[i] = (uint64_t)fmt_unzigzag(fmt_cur_varint(&f));
    if (mask & FMT_FIELD_OLD_ADDR)
        ev->old_addr = fmt_cur_varint(&f);
    if (mask & FMT_FIELD_OLD_SIZE)
        ev->old_size = fmt_cur_varint(&f);
    if (mask & FMT_FIELD_STR) {
        uint64_t n = fmt_cur_varint(&f);
        ev->str = (const char *)fmt_cur_bytes(&r->cur[FMT_COL_STRS], n);
        ev->str_len = (uint32_t)n;
    }
    if (mask & FMT_FIELD_STR2) {
        uint64_t n = fmt_cur_varint(&f);
        ev->str2 = (const char *)fmt_cur_bytes(&r->cur[FMT_COL_STRS], n);
        ev->str2_len = (uint32_t)n;
    }
    if (f.bad || r->cur[FMT_COL_STRS].bad ||
        (!(mask & ~(uint64_t)FMT_FIELD_KNOWN) && fmt_cur_left(&f)))
        return bad_event(r, "bad extra fields");
    return 0;
}

/* A REF value: a split varint in format 1.3, a varint before. */
static ALWAYS_INLINE uint64_t get_ref_value(struct fmt_reader *r, int lay)
{
    if (has_v13(r, lay))
        return fmt_cur_split(&r->cur[FMT_COL_REF], &r->cur[FMT_COL_REF_HI]);
    return fmt_cur_varint(&r->cur[FMT_COL_REF]);
}

/* Resolve a back-reference (docs/format-events.md, "References"): REF is 0 for
 * none, 2d for the block the event's context started d blocks ago in this
 * chunk, 2d+1 for the block d serials back. want is RBLK_HEAP or RBLK_VM.
 * Returns 1 with ev->ref* set, 0 for none, or -EPROTO. */
static ALWAYS_INLINE int get_ref(struct fmt_reader *r, struct fmt_event *ev, int want, int lay)
{
    uint64_t v = get_ref_value(r, lay);

    if (!v)
        return 0;
    ev->nr_refs = 1;
    if (want == RBLK_VM) {
        uint64_t n = fmt_cur_varint(&r->cur[FMT_COL_MISC]);
        if (n >= UINT32_MAX)
            return bad_event(r, "bad mapping count");
        ev->nr_refs = (uint32_t)(n >> 1) + 1;
        if (n & 1)
            ev->flags |= FMT_EVF_PARTIAL;
    }
    uint64_t d = v >> 1;
    if (!(v & 1) && has_v15(r, lay)) {
        /* 1.5: d blocks back, or past FMT_RANK_NEAR the live block of rank
         * d - FMT_RANK_NEAR - 1 among those started before the last
         * FMT_RANK_NEAR (fmt_rank_internal.h) */
        struct fmt_rslot *sl = r->sl;
        uint32_t len = sl->started.len;
        int64_t o = -1;
        if (d <= FMT_RANK_NEAR)
            o = d <= len ? (int64_t)(len - d) : -1;
        else if (len > FMT_RANK_NEAR && d - FMT_RANK_NEAR - 1 < len)
            o = fmt_rank_select(&sl->pred.rank, (uint32_t)(d - FMT_RANK_NEAR - 1),
                                len - FMT_RANK_NEAR);
        if (o < 0)
            return bad_event(r, "reference past the thread's live blocks in the chunk");
        struct fmt_rblk *b = &r->blks[sl->started.v[o]];
        if (want == RBLK_HEAP && b->state == RBLK_HEAP)
            fmt_rank_end(&sl->pred.rank, (uint32_t)o);
        d = r->next_serial - (r->chunk_first_serial + sl->started.v[o]);
    } else if (!(v & 1)) {
        const struct fmt_rlist *l = &r->sl->started;
        if (d > l->len)
            return bad_event(r, "reference past the thread's first block in the chunk");
        d = r->next_serial - (r->chunk_first_serial + l->v[l->len - d]);
    } else if (has_v15(r, lay)) { /* 1.5: this chunk's block d back, or an earlier chunk's */
        d = v >> 2;
        if (v & 2) {
            uint64_t s = r->prev_fact_serial + (uint64_t)fmt_unzigzag(d);
            if (s >= r->chunk_first_serial || !s)
                return bad_event(r, "reference to an earlier chunk's block out of range");
            r->prev_fact_serial = s;
            d = r->next_serial - s;
        } else if (d > r->next_serial - r->chunk_first_serial) {
            return bad_event(r, "reference before the chunk's first block");
        }
    }
    if (d >= r->next_serial || !d)
        return bad_event(r, "reference before the first block");
    uint64_t serial = r->next_serial - d;
    ev->ref = serial;
    if (serial >= r->chunk_first_serial) {
        struct fmt_rblk *b = &r->blks[serial - r->chunk_first_serial];
        if (b->state != (uint32_t)want && !(want == RBLK_HEAP && b->state == RBLK_HEAP_ENDED))
            return bad_event(r, "reference to a block of another kind");
        if (b->state == RBLK_HEAP_ENDED)
            return bad_event(r, "reference to a block already ended");
        if (want == RBLK_HEAP)
            b->state = RBLK_HEAP_ENDED;
        ev->ref_size = b->size;
        ev->ref_stack = b->stack;
        ev->ref_ts_ns = b->ts_ns;
        ev->ref_thread = b->thread;
        ev->old_addr = b->addr; /* the caller moves it where the kind wants it */
        return 1;
    }
    /* Its facts: in MISC (1.1), or each in its own column (1.3). */
    struct fmt_cur *cur = r->cur, *m = &cur[FMT_COL_MISC];
    int v13 = has_v13(r, lay);
    ev->ref_size = fmt_cur_varint(v13 ? &cur[FMT_COL_FACT_SIZE] : m);
    uint64_t stack = fmt_cur_varint(v13 ? &cur[FMT_COL_FACT_STACK] : m);
    if (v13) {
        r->prev_fact_addr += (uint64_t)fmt_unzigzag(fmt_cur_varint(&cur[FMT_COL_FACT_ADDR]));
        ev->old_addr = r->prev_fact_addr;
    } else {
        ev->old_addr = fmt_cur_varint(m);
    }
    if (v13) {
        r->prev_fact_ts +=
            (uint64_t)fmt_unzigzag(fmt_cur_varint(&cur[FMT_COL_FACT_TIME])) * r->info.time_unit_ns;
        ev->ref_ts_ns = r->prev_fact_ts;
    } else {
        ev->ref_ts_ns =
            ev->ts_ns - (uint64_t)fmt_unzigzag(fmt_cur_varint(m)) * r->info.time_unit_ns;
    }
    uint64_t ctx = fmt_cur_varint(v13 ? &cur[FMT_COL_FACT_CTX] : m);
    if (m->bad || cur[FMT_COL_FACT_SIZE].bad || cur[FMT_COL_FACT_STACK].bad ||
        cur[FMT_COL_FACT_ADDR].bad || cur[FMT_COL_FACT_TIME].bad || cur[FMT_COL_FACT_CTX].bad ||
        stack > r->nr_nodes || !ctx || ctx > r->nr_ctxs)
        return bad_event(r, "bad reference to an earlier chunk");
    ev->ref_stack = (uint32_t)stack;
    ev->ref_thread = r->ctxs[ctx - 1].t.thread;
    return 1;
}

/* addr and size come in registers: reading them back from *ev just after
 * they were stored there made one 16-byte load of two 8-byte stores, which
 * the CPU cannot forward (a stall on every allocation). */
static ALWAYS_INLINE int start_block(struct fmt_reader *r, struct fmt_event *ev, uint32_t state,
                                     uint64_t addr, uint64_t size, int lay)
{
    uint32_t idx = (uint32_t)(r->next_serial - r->chunk_first_serial);
    struct fmt_rblk *b = &r->blks[idx];
    struct fmt_rlist *l = &r->sl->started;

    if (l->len == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 256;
        uint32_t *v = realloc(l->v, (size_t)cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    if (has_v15(r, lay) && fmt_rank_start(&r->sl->pred.rank, l->len))
        return -ENOMEM;
    l->v[l->len++] = idx;

    ev->serial = r->next_serial++;
    b->addr = addr;
    b->size = size;
    b->ts_ns = ev->ts_ns;
    b->stack = ev->stack;
    b->thread = ev->thread; /* set_ctx() set it from r->ctx */
    b->state = state;
    return 0;
}

/* Skip an event of a kind from a later version (op kind 63). */
static int skip_escape(struct fmt_reader *r)
{
    struct fmt_cur *m = &r->cur[FMT_COL_MISC];

    (void)fmt_cur_varint(m); /* its kind */
    uint64_t len = fmt_cur_varint(m);
    fmt_cur_bytes(m, len);
    if (m->bad)
        return bad_event(r, "bad escaped event");
    r->nr_skipped++;
    return 0;
}

/* Field by field: a memset of the whole struct compiles to "rep stos",
 * which measured as a quarter of the decoding time. */
static inline void clear_event(struct fmt_event *ev)
{
    ev->flags = 0;
    ev->origin = 0;
    /* addr and size: decode() sets them for every event it returns */
    ev->old_addr = 0;
    ev->old_size = 0;
    ev->arg[0] = ev->arg[1] = ev->arg[2] = ev->arg[3] = 0;
    ev->serial = 0;
    ev->ref = 0;
    ev->ref_size = 0;
    ev->ref_ts_ns = 0;
    ev->ref_stack = 0;
    ev->ref_thread = 0;
    ev->nr_refs = 0;
    ev->str = NULL;
    ev->str_len = 0;
    ev->str2 = NULL;
    ev->str2_len = 0;
    ev->module = NULL;
}

/* A heap block starts (decode_blocks): 0 or a reader error. */
static ALWAYS_INLINE int start_heap_block(struct fmt_reader *r, struct fmt_event *ev, uint64_t addr,
                                          uint64_t size, int lay)
{
    if (r->next_serial >= r->end_serial)
        return bad_event(r, "more blocks than the chunk summary says");
    if (start_block(r, ev, RBLK_HEAP, addr, size, lay))
        return fmt_rerr(r, -ENOMEM, 0, "out of memory");
    return 0;
}

/* What an event of kind starts or ends once its fields are read: the
 * block it starts (heap or mapping, the address predictor told), the
 * mapping it ends, the module it names. Inline in decode(): one function
 * for the reader's hot loop, two for a reader of the code. Returns 0 or a
 * reader error. */
static ALWAYS_INLINE int decode_blocks(struct fmt_reader *r, struct fmt_event *ev, unsigned kind,
                                       int failed, uint64_t addr, uint64_t size, int lay)
{
    struct fmt_cur *cur = r->cur;
    struct fmt_pred *pred = &r->sl->pred;
    int ok = !failed && addr, rc;

    switch (kind) {
    case FMT_EV_REALLOC:
    case FMT_EV_REALLOCARRAY:
        if (r->v17) { /* 1.7: get_realloc17 stepped the model */
            if (ok && (rc = start_heap_block(r, ev, addr, size, lay)))
                return rc;
            break;
        }
        /* fall through */
    case FMT_EV_MALLOC:
    case FMT_EV_CALLOC:
    case FMT_EV_MEMALIGN ... FMT_EV_PVALLOC:
        if (ok) {
            if ((rc = start_heap_block(r, ev, addr, size, lay)))
                return rc;
            fmt_pred_start(pred, addr, size);
        }
        break;
    case FMT_EV_MMAP:
    case FMT_EV_MREMAP: {
        /* The writer keeps the old address of an mremap in the extra
         * fields; a ref must not overwrite it. */
        uint64_t keep = ev->old_addr;
        ok = ok && addr != UINT64_MAX;
        if (ok && (rc = get_ref(r, ev, RBLK_VM, lay)) < 0)
            return rc;
        ev->old_addr = keep;
        if (!ok)
            (void)get_ref_value(r, lay);
        if (ok) {
            if (r->next_serial >= r->end_serial)
                return bad_event(r, "more blocks than the chunk summary says");
            if (start_block(r, ev, RBLK_VM, addr, size, lay))
                return fmt_rerr(r, -ENOMEM, 0, "out of memory");
        }
        break;
    }
    case FMT_EV_MUNMAP: {
        uint64_t keep = ev->old_addr;
        if ((rc = get_ref(r, ev, RBLK_VM, lay)) < 0)
            return rc;
        ev->old_addr = keep;
        break;
    }
    case FMT_EV_MODULE_LOAD:
    case FMT_EV_MODULE_UNLOAD: {
        uint64_t id = fmt_cur_varint(&cur[FMT_COL_MISC]);
        if (id > r->nr_mods || (kind == FMT_EV_MODULE_LOAD && !id))
            return bad_event(r, "reference to an unknown module");
        ev->module = id ? &r->mods[id - 1].mi.m : NULL;
        break;
    }
    }
    return 0;
}

static ALWAYS_INLINE int decode(struct fmt_reader *r, struct fmt_event *ev, int lay)
{
    struct fmt_cur *cur = r->cur;
    uint8_t op = *cur[FMT_COL_OP].p++;
    unsigned kind = op & FMT_OP_KIND_MASK;
    int rc;

    clear_event(ev);
    int fcol = kind == FMT_EV_FREE;
    /* Deltas count time units (format 1.3; 1 ns before): wrapping
     * arithmetic, as for ns, and a corrupt product is caught below. */
    struct fmt_cur *tcol = &cur[fcol ? FMT_COL_FREE_TIME : FMT_COL_TIME];
    int64_t dt;
    if (!has_tpack(r, lay))
        dt = fmt_unzigzag(fmt_cur_split(tcol, &cur[FMT_COL_TIME_HI]));
    else if (fmt_tpack_get(&r->tq[fcol], tcol, &cur[FMT_COL_TIME_HI], &dt))
        return bad_event(r, "bad packed time token");
    r->prev_ts += (uint64_t)dt * r->info.time_unit_ns;
    ev->ts_ns = r->prev_ts;
    /* A scan that stops at a time trusts the summaries' times: a corrupt
     * event time must not end it "successfully" (docs/format.md). A time
     * cut short is reported below as a field past its column. */
    if ((ev->ts_ns < r->chunk_first_ts || ev->ts_ns > r->chunk_last_ts) && !tcol->bad &&
        !cur[FMT_COL_TIME_HI].bad)
        return bad_event(r, "time outside its chunk's summary");
    if (op & FMT_OP_CTX)
        r->ctx = fmt_cur_u32(&cur[FMT_COL_CTX]);
    if (set_ctx(r, ev, r->ctx))
        return bad_event(r, "unknown thread context");
    if ((op & FMT_OP_CTX) && use_slot(r, r->ctx))
        return bad_event(r, "more threads in one chunk than a writer puts there");
    if (kind == FMT_OP_KIND_ESCAPE) {
        ev->kind = FMT_EV_NONE; /* not an event to return */
        if (op & FMT_OP_EXTRA)
            return bad_event(r, "escaped event with extra fields");
        return skip_escape(r) ?: 1;
    }
    ev->kind = (uint16_t)kind;
    if ((op & FMT_OP_EXTRA) && (rc = get_extra(r, ev)))
        return rc;
    uint64_t stack =
        r->prev_stack[fcol] +
        (uint64_t)fmt_unzigzag(fmt_cur_varint(&cur[fcol ? FMT_COL_FREE_STACK : FMT_COL_STACK]));
    if (stack > r->nr_nodes)
        return bad_event(r, "reference to an unknown stack");
    ev->stack = (uint32_t)stack;
    r->prev_stack[fcol] = (uint32_t)stack;

    struct fmt_pred *pred = &r->sl->pred;
    int failed = (ev->flags & FMT_EVF_FAILED) != 0;
    uint64_t guess, addr = 0, size = 0;

    switch (kind) {
    case FMT_EV_MALLOC:
    case FMT_EV_CALLOC:
    case FMT_EV_MEMALIGN ... FMT_EV_PVALLOC:
        size = fmt_cur_split(&cur[FMT_COL_SIZE], &cur[FMT_COL_SIZE_HI]);
        if (has_cands(r, lay)) {
            if (get_heap_addr(r, pred, size, &addr, lay))
                return bad_event(r, "bad address code (or a freed block that is not there)");
            break;
        }
        addr =
            fmt_pred_guess(pred, size) + (uint64_t)fmt_unzigzag(fmt_cur_varint(&cur[FMT_COL_ADDR]));
        break;
    case FMT_EV_FREE:
        if ((rc = get_ref(r, ev, RBLK_HEAP, lay)) < 0)
            return rc;
        if (rc) {
            addr = ev->old_addr;
            ev->old_addr = 0;
            fmt_pred_end(pred, addr, ev->ref_size);
            if (has_v15(r, lay))
                fmt_recent_push(&r->recent, addr);
        } else {
            addr = fmt_cur_varint(&cur[FMT_COL_ADDR]);
        }
        break;
    case FMT_EV_REALLOC:
    case FMT_EV_REALLOCARRAY:
        if ((rc = get_ref(r, ev, RBLK_HEAP, lay)) < 0)
            return rc;
        if (r->v17) {
            if (get_realloc17(r, ev, rc, failed))
                return bad_event(r, "bad address code (or a freed block that is not there)");
            addr = ev->addr; /* in ev, so that decode's locals stay in registers */
            size = ev->size;
            break;
        }
        if (rc) {
            fmt_pred_end(pred, ev->old_addr, ev->ref_size);
            if (has_v15(r, lay))
                fmt_recent_push(&r->recent, ev->old_addr);
        } else
            ev->old_addr = fmt_cur_varint(&cur[FMT_COL_ADDR]);
        size = fmt_cur_split(&cur[FMT_COL_SIZE], &cur[FMT_COL_SIZE_HI]);
        guess = ev->old_addr ? ev->old_addr : fmt_pred_guess(pred, size);
        addr = guess + (uint64_t)fmt_unzigzag(fmt_cur_varint(&cur[FMT_COL_ADDR]));
        break;
    case FMT_EV_MMAP ... FMT_EV_SBRK:
    case FMT_EV_PROCESS_START ... FMT_EV_MODULE_UNLOAD:
    case FMT_EV_RSS:
    case FMT_EV_DROPPED:
    plain:
        size = fmt_cur_split(&cur[FMT_COL_SIZE], &cur[FMT_COL_SIZE_HI]);
        addr = fmt_cur_varint(&cur[FMT_COL_ADDR]);
        break;
    case FMT_EV_HEAP_CREATE ... FMT_EV_HEAP_DESTROY:
    case FMT_EV_VM_RESERVE ... FMT_EV_SECTION_UNMAP:
        if (r->pe) /* format 1.2: Windows kinds, stored as is */
            goto plain;
        if (kind <= FMT_EV_HEAP_DESTROY && r->pools && (ev->flags & FMT_EVF_POOL))
            goto plain;                            /* format 1.4: a pool created or destroyed */
        return bad_event(r, "unknown event kind"); /* not without the PE feature bit */
    case FMT_EV_HEAP_BATCH ... FMT_EV_AGGREGATE:
        if ((rc = check_agg(r, ev)))
            return rc;
        goto plain; /* format 1.8: stored as is */
    case FMT_EV_COUNTER:
        if (!r->counters)
            return bad_event(r, "unknown event kind"); /* not without the COUNTERS feature bit */
        if (ev->arg[0] >= FMT_CTR_ALL || ev->flags || ev->stack)
            return bad_event(r, "a counter event names no counter");
        goto plain; /* format 1.13: stored as is */
    default:
        return bad_event(r, "unknown event kind");
    }

    ev->addr = addr;
    ev->size = size;
    ev->raw_size = size; /* here, from a register: copied in next_event(), the
                          * compiler read it with ref_size in one 16-byte load
                          * of two 8-byte stores, which stalled every event */
    if ((rc = decode_blocks(r, ev, kind, failed, addr, size, lay)))
        return rc;
    /* Without a branch per column: this runs for every event. Every column
     * was sound before the event, so only those it may have read past can
     * be bad now: not OP (one byte an event, counted), STRS (get_extra
     * checks it) or the FACT_* columns (get_ref checks them). */
    _Static_assert(FMT_NR_COLUMNS == 22, "check every column the events read");
    if (cur[FMT_COL_TIME].bad | cur[FMT_COL_CTX].bad | cur[FMT_COL_SIZE].bad |
        cur[FMT_COL_ADDR].bad | cur[FMT_COL_STACK].bad | cur[FMT_COL_REF].bad |
        cur[FMT_COL_MISC].bad | cur[FMT_COL_FREE_TIME].bad | cur[FMT_COL_FREE_STACK].bad |
        cur[FMT_COL_SIZE_HI].bad | cur[FMT_COL_TIME_HI].bad | cur[FMT_COL_REF_HI].bad |
        cur[FMT_COL_ADDR_REC].bad | cur[FMT_COL_ADDR_REC_HI].bad)
        return bad_event(r, "field runs past the end of its column");
    return 1;
}

/* Bytes a recorded block of size bytes stands for in a sampled trace. */
static uint64_t estimate_bytes(uint64_t rate, uint64_t size)
{
    double p = fmt_sample_prob(rate, size);

    return p >= 1.0 ? size : (uint64_t)llround((double)size / p);
}

/* Blocks a recorded block of size bytes stands for: its weight w = 1/p,
 * rounded up with probability w - floor(w), else down, so that its
 * expected value is w. The draw is a hash of key (the block's serial):
 * its allocation and its end get the same count, in every reading. */
static uint64_t estimate_count(uint64_t rate, uint64_t size, uint64_t key)
{
    double w = 1.0 / fmt_sample_prob(rate, size);
    uint64_t n = (uint64_t)w;

    key += 0x9e3779b97f4a7c15ull; /* splitmix64's finaliser */
    key = (key ^ (key >> 30)) * 0xbf58476d1ce4e5b9ull;
    key = (key ^ (key >> 27)) * 0x94d049bb133111ebull;
    key ^= key >> 31;
    return n + ((double)(key >> 11) * 0x1p-53 < w - (double)n);
}

/* Sampled trace: heap allocations and the heap blocks ended carry the
 * estimated bytes and blocks (docs/format.md, Sampled traces). Mappings
 * are not sampled. */
static void fmt_reader_estimate(const struct fmt_reader *r, struct fmt_event *ev)
{
    uint64_t rate = r->info.sample_bytes;

    if (fmt_kind_is_heap_alloc(ev->kind)) {
        ev->size = estimate_bytes(rate, ev->raw_size);
        /* a failed call starts no block: its time is its key */
        ev->count = estimate_count(rate, ev->raw_size, ev->serial ? ev->serial : ev->ts_ns);
    }
    if (ev->ref && ev->kind >= FMT_EV_REALLOC && ev->kind <= FMT_EV_FREE) {
        ev->ref_size = estimate_bytes(rate, ev->raw_ref_size);
        ev->ref_count = estimate_count(rate, ev->raw_ref_size, ev->ref);
    }
}

/* Until a seek: the rest of the chunk is not trusted. */
static int next_failed(struct fmt_reader *r, struct fmt_event *ev)
{
    (void)ev;
    return r->failed;
}

/* Reading failed with rc: every later call returns it until a seek. */
static __attribute__((cold, noinline)) int stop_reading(struct fmt_reader *r, int rc)
{
    r->loaded = 0;
    r->failed = rc;
    r->next = next_failed;
    return rc;
}

/* fmt_reader_next for one layout (FMT_RLAYOUT_*): decode() inlined, its
 * feature checks folded where the layout fixes them. */
static ALWAYS_INLINE int next_event(struct fmt_reader *r, struct fmt_event *ev, int lay)
{
    int rc;

    for (;;) {
        if (!r->loaded || !r->ev_left) {
            if (r->loaded && (rc = finish_chunk(r)))
                break;
            if (r->next_chunk >= r->nr_chunks || (r->end_chunk && r->next_chunk >= r->end_chunk))
                return 0;
            if ((rc = load_chunk(r, r->next_chunk)))
                break;
            r->next_chunk++;
        }
        r->ev_left--;
        rc = decode(r, ev, lay);
        r->ev_index++;
        if (rc < 0)
            break;
        if (ev->kind) {
            ev->raw_ref_size = ev->ref_size;
            ev->count = 1;
            ev->ref_count = 1;
            if (r->estimates)
                fmt_reader_estimate(r, ev);
            return 1;
        }
        /* an escaped event was skipped */
    }
    return stop_reading(r, rc);
}

__attribute__((noinline)) static int next_1_1(struct fmt_reader *r, struct fmt_event *ev)
{
    return next_event(r, ev, FMT_RLAYOUT_1_1);
}

__attribute__((noinline)) static int next_1_5(struct fmt_reader *r, struct fmt_event *ev)
{
    return next_event(r, ev, FMT_RLAYOUT_1_5);
}

__attribute__((noinline)) static int next_any(struct fmt_reader *r, struct fmt_event *ev)
{
    return next_event(r, ev, FMT_RLAYOUT_ANY);
}

static int (*layout_next(const struct fmt_reader *r))(struct fmt_reader *, struct fmt_event *)
{
    return r->layout == FMT_RLAYOUT_1_5   ? next_1_5
           : r->layout == FMT_RLAYOUT_1_1 ? next_1_1
                                          : next_any;
}

/* verify: add what the event does to a stack's live heap, as the writer
 * counts it for the summary (fmt_wevent.c: a heap block started or ended
 * by a reference), in recorded sizes. */
static int verify_event(struct fmt_reader *r, const struct fmt_event *ev)
{
    int rc = 0;

    switch (ev->kind) {
    case FMT_EV_FREE:
    case FMT_EV_REALLOC:
    case FMT_EV_REALLOCARRAY:
        if (ev->ref)
            rc =
                fmt_wdelta_add(&r->vdeltas, r->vgen, ev->ref_stack, -(int64_t)ev->raw_ref_size, -1);
        if (ev->kind == FMT_EV_FREE)
            break;
        /* fall through */
    case FMT_EV_MALLOC:
    case FMT_EV_CALLOC:
    case FMT_EV_MEMALIGN ... FMT_EV_PVALLOC:
        if (ev->serial && !rc)
            rc = fmt_wdelta_add(&r->vdeltas, r->vgen, ev->stack, (int64_t)ev->raw_size, 1);
        break;
    }
    return rc ? stop_reading(r, fmt_rerr(r, -ENOMEM, 0, "out of memory")) : 1;
}

/* The layout's decoder, then the event's share of its chunk's summary. */
static int next_verify(struct fmt_reader *r, struct fmt_event *ev)
{
    int rc = layout_next(r)(r, ev);

    return rc == 1 ? verify_event(r, ev) : rc;
}

void fmt_reader_drop_chunk_buffers(struct fmt_reader *r)
{
    if (r->loaded)
        return; /* its columns are being read */
    fmt_buf_free(&r->payload);
    fmt_buf_free(&r->raw);
    for (int k = 0; k < FMT_NR_COLUMNS; k++) {
        fmt_buf_free(&r->col[k]);
        fmt_cur_init(&r->cur[k], NULL, 0);
    }
    drop_slot_lists(r);
    free(r->blks);
    r->blks = NULL;
    r->cap_blks = 0;
}

void fmt_rchunk_reset(struct fmt_reader *r)
{
    r->loaded = 0;
    r->ev_left = 0;
    r->failed = 0;
    r->next = r->verify ? next_verify : layout_next(r);
}

/* One indirect jump per event, to the decoder chosen once (a failed one
 * stays failed until a seek). */
int fmt_reader_next(struct fmt_reader *r, struct fmt_event *ev)
{
    return r->next(r, ev);
}
