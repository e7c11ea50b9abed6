/* SPDX-License-Identifier: MIT */
/* Trace writer: encodes events into the columns of the current chunk
 * (docs/format.md, "Events"), matching frees, reallocs and unmaps to the
 * blocks they end. Not thread-safe: the recorder calls it from one thread. */
#include "format/fmt_writer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/fmt_block_internal.h"
#include "format/fmt_writer_internal.h"

/* Worst case bytes one event adds to a column (the MISC column takes an
 * extra record and an external reference). */
#define COL_RESERVE (4 * FMT_VARINT_MAX)
#define MISC_RESERVE (24 * FMT_VARINT_MAX)

static int w_meta(struct fmt_writer *w, const struct fmt_trace_info *info)
{
    struct fmt_buf b = {0};
    int rc = 0;

    if (info->command && info->command_len) {
        rc = rc ?: fmt_buf_add_varint(&b, FMT_META_COMMAND);
        rc = rc ?: fmt_buf_add_string(&b, info->command, info->command_len);
    }
    if (info->hostname) {
        rc = rc ?: fmt_buf_add_varint(&b, FMT_META_HOSTNAME);
        rc = rc ?: fmt_buf_add_string(&b, info->hostname, strlen(info->hostname));
    }
    uint8_t tmp[FMT_VARINT_MAX];
    struct fmt_buf t = {tmp, 0, sizeof(tmp)};
    fmt_buf_put_varint(&t, info->stack_depth);
    rc = rc ?: fmt_buf_add_varint(&b, FMT_META_STACK_DEPTH);
    rc = rc ?: fmt_buf_add_string(&b, tmp, t.len);
    if (!rc) {
        struct iovec iov = {b.data, b.len};
        rc = fmt_wout_block(&w->out, FMT_BLOCK_META, 0, (uint32_t)b.len, &iov, 1);
    }
    fmt_buf_free(&b);
    return rc;
}

int fmt_writer_create(struct fmt_writer **out, int fd, const struct fmt_trace_info *info,
                      const struct fmt_writer_options *opt)
{
    struct fmt_writer *w = calloc(1, sizeof(*w));
    int rc = -ENOMEM;

    *out = NULL;
    /* Offsets in the file are absolute: the trace must start it. (A pipe
     * cannot seek and is accepted.) */
    if (lseek(fd, 0, SEEK_CUR) > 0) {
        free(w);
        return -EINVAL;
    }
    if (!w)
        return -ENOMEM;
    w->out.fd = fd;
    w->level = opt && opt->zstd_level ? opt->zstd_level : FMT_DEFAULT_ZSTD_LEVEL;
    w->chunk_events = opt && opt->chunk_events ? opt->chunk_events : FMT_DEFAULT_CHUNK_EVENTS;
    w->pe = opt && opt->pe_process;
    if (w->chunk_events > FMT_MAX_CHUNK_EVENTS)
        w->chunk_events = FMT_MAX_CHUNK_EVENTS;
    w->next_serial = 1;
    rc = fmt_zc_init(&w->zc, opt && opt->zlib ? FMT_ZC_ZLIB : FMT_ZC_ZSTD, w->level);
    w->cap_ctxs = 16;
    w->ctxs = calloc(w->cap_ctxs, sizeof(*w->ctxs));
    w->ctx_slot = calloc(w->cap_ctxs, sizeof(*w->ctx_slot));
    w->ctx_mask = 63;
    w->ctx_hash = calloc(w->ctx_mask + 1, sizeof(*w->ctx_hash));
    if (rc || !w->ctxs || !w->ctx_slot || !w->ctx_hash) {
        rc = rc ?: -ENOMEM;
        goto fail;
    }
    if ((rc = fmt_wlive_init(&w->live)) || (rc = fmt_wstack_init(&w->stacks, info->stack_depth)))
        goto fail;
    for (int i = 0; i < FMT_NR_COLUMNS; i++)
        if ((rc = fmt_buf_reserve(&w->col[i], 4096)))
            goto fail;

    uint8_t hdr[FMT_HEADER_SIZE];
    fmt_header_encode(hdr, info,
                      FMT_FEAT_ZSTD_COLUMNS | FMT_FEAT_STACK_CODES | FMT_FEAT_ADDR_CANDS |
                          (opt && opt->pe_process ? FMT_FEAT_PE_PROCESS : 0));
    if ((rc = fmt_wout_raw(&w->out, hdr, sizeof(hdr))) || (rc = w_meta(w, info)))
        goto fail;
    *out = w;
    return 0;
fail:
    fmt_writer_destroy(w);
    return rc;
}

/* Context ids: intern (image, thread, pid, tid). New ones get a CONTEXT
 * record in the pending definitions. */
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

/* Field by field, one 4-byte load each: the caller has just stored these
 * fields one by one, and gcc's merged 16-byte load of all four could not be
 * forwarded from those stores (a stall of about a quarter of this
 * function's time on a malloc/free storm). The empty asm keeps the loads
 * apart. */
static inline int ctx_same(const struct fmt_writer_who *c, const struct fmt_event *ev)
{
    uint32_t tid = ev->tid, pid = ev->pid, thread = ev->thread, image = ev->image;

    __asm__("" : "+r"(tid), "+r"(pid), "+r"(thread), "+r"(image));
    return c->tid == tid && c->pid == pid && c->thread == thread && c->image == image;
}

static inline int who_same(const struct fmt_writer_who *c, const struct fmt_writer_who *who)
{
    return c->tid == who->tid && c->pid == who->pid && c->thread == who->thread &&
           c->image == who->image;
}

/* Not inlined: it runs only when the context changes, and inlined its
 * vector copy of the event's fields was hoisted into the hot path. */
static __attribute__((noinline)) int
ctx_lookup(struct fmt_writer *w, const struct fmt_writer_who *who, uint64_t ts_ns, uint32_t *id)
{
    uint32_t i = ctx_hash(who) & w->ctx_mask;

    for (; w->ctx_hash[i]; i = (i + 1) & w->ctx_mask) {
        if (who_same(&w->ctxs[w->ctx_hash[i]], who)) {
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
    int rc = 0;
    rc = rc ?: fmt_buf_add_varint(&w->defs, FMT_DEF_CONTEXT);
    uint8_t body[6 * FMT_VARINT_MAX];
    struct fmt_buf b = {body, 0, sizeof(body)};
    fmt_buf_put_varint(&b, nid);
    fmt_buf_put_varint(&b, who->image);
    fmt_buf_put_varint(&b, who->thread);
    fmt_buf_put_varint(&b, who->pid);
    fmt_buf_put_varint(&b, who->tid);
    fmt_buf_put_varint(&b, ts_ns);
    rc = rc ?: fmt_buf_add_string(&w->defs, body, b.len);
    if (rc)
        return rc;
    *id = nid;
    if ((uint64_t)w->nr_ctxs * 2 > w->ctx_mask)
        return ctx_rehash(w);
    return 0;
}

/* Per-stack heap deltas for the summary: a list of the stacks touched in
 * this chunk and a map to it, so memory follows what one chunk touches,
 * not every stack of the trace. */
static inline uint32_t dmap_home(uint32_t stack, uint32_t mask)
{
    return (uint32_t)((stack * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

static int dmap_grow(struct fmt_writer *w)
{
    uint32_t cap = w->dmap ? (w->dmap_mask + 1) * 2 : 1024;
    struct fmt_wdslot *m = calloc(cap, sizeof(*m));
    uint64_t gen = w->nr_chunks + 1;

    if (!m)
        return -ENOMEM;
    for (uint32_t i = 0; i < w->nr_touched; i++) {
        uint32_t h = dmap_home(w->touched[i].stack, cap - 1);
        while (m[h].gen == gen)
            h = (h + 1) & (cap - 1);
        m[h] = (struct fmt_wdslot){gen, w->touched[i].stack, i};
    }
    free(w->dmap);
    w->dmap = m;
    w->dmap_mask = cap - 1;
    return 0;
}

static __attribute__((noinline)) int delta_add_slow(struct fmt_writer *w, uint32_t stack,
                                                    int64_t bytes, int64_t blocks)
{
    uint64_t gen = w->nr_chunks + 1;

    if ((!w->dmap || (w->nr_touched + 1) * 2 > w->dmap_mask + 1) && dmap_grow(w))
        return -ENOMEM;
    uint32_t h = dmap_home(stack, w->dmap_mask);
    for (; w->dmap[h].gen == gen; h = (h + 1) & w->dmap_mask) {
        if (w->dmap[h].stack == stack) {
            w->touched[w->dmap[h].idx].bytes += bytes;
            w->touched[w->dmap[h].idx].blocks += blocks;
            w->dlast_gen = gen;
            w->dlast_stack = stack;
            w->dlast_idx = w->dmap[h].idx;
            return 0;
        }
    }
    if (w->nr_touched == w->cap_touched) {
        uint32_t cap = w->cap_touched ? w->cap_touched * 2 : 256;
        struct fmt_wdelta *t = realloc(w->touched, (size_t)cap * sizeof(*t));
        if (!t)
            return -ENOMEM;
        w->touched = t;
        w->cap_touched = cap;
    }
    w->dmap[h] = (struct fmt_wdslot){gen, stack, w->nr_touched};
    w->dlast_gen = gen;
    w->dlast_stack = stack;
    w->dlast_idx = w->nr_touched;
    w->touched[w->nr_touched++] = (struct fmt_wdelta){stack, bytes, blocks};
    return 0;
}

/* Add to stack's live heap change in this chunk; the stack of the last
 * call, the common case, without a lookup. */
static inline int delta_add(struct fmt_writer *w, uint32_t stack, int64_t bytes, int64_t blocks)
{
    if (w->dlast_gen == w->nr_chunks + 1 && w->dlast_stack == stack) {
        w->touched[w->dlast_idx].bytes += bytes;
        w->touched[w->dlast_idx].blocks += blocks;
        return 0;
    }
    return delta_add_slow(w, stack, bytes, blocks);
}

/* The fields of an event the heap encoding needs, in registers: the
 * recorder's fast path (fmt_writer_heap) has no struct fmt_event. */
struct heap_ev {
    uint64_t ts_ns;
    uint64_t addr;
    uint64_t size;
    uint32_t stack;
    uint32_t image;
};

/* A block was started: give it the next serial and remember it. */
static inline __attribute__((always_inline)) int start_heap(struct fmt_writer *w,
                                                            const struct heap_ev *ev, uint32_t ctx)
{
    struct fmt_wblock b = {ev->addr,  w->next_serial++,     ev->size, ev->ts_ns, ev->stack, ctx,
                           ev->image, w->pred->nr_started++};

    fmt_pred_start(w->pred, ev->addr, ev->size);
    w->chunk_heap_allocs++;
    w->st.nr_allocs++;
    int rc = fmt_wlive_insert(&w->live, &b);
    return rc ?: delta_add(w, ev->stack, (int64_t)ev->size, 1);
}

/* Store the back-reference to block b, which the current event (of
 * context ctx) ends. A block the same context started in this chunk is
 * named by how many blocks that context started since (REF = 2d): in a
 * thread-interleaved stream that distance repeats where the trace-wide one
 * does not. Any other block by its serial distance (REF = 2d + 1); one from
 * an earlier chunk also gets its facts in MISC, so each chunk can be read
 * on its own. */
static void put_ref(struct fmt_writer *w, uint64_t ts_ns, const struct fmt_wblock *b, uint32_t ctx)
{
    struct fmt_buf *misc = &w->col[FMT_COL_MISC];

    if (b->serial >= w->chunk_first_serial && b->ctx == ctx) {
        fmt_buf_put_varint(&w->col[FMT_COL_REF], (uint64_t)(w->pred->nr_started - b->ord) << 1);
        return;
    }
    fmt_buf_put_varint(&w->col[FMT_COL_REF], (w->next_serial - b->serial) << 1 | 1);
    if (b->serial < w->chunk_first_serial) {
        fmt_buf_put_varint(misc, b->size);
        fmt_buf_put_varint(misc, b->stack);
        fmt_buf_put_varint(misc, b->addr);
        fmt_buf_put_varint(misc, fmt_zigzag((int64_t)(ts_ns - b->ts_ns)));
        fmt_buf_put_varint(misc, b->ctx);
    }
}

/* Free or realloc ending the heap block at addr; REF 0 and the address
 * itself when no live block is there. */
static inline __attribute__((always_inline)) int end_heap(struct fmt_writer *w, uint64_t ts_ns,
                                                          uint32_t image, uint32_t ctx,
                                                          uint64_t addr, int may_end)
{
    struct fmt_wblock b;

    if (may_end && addr && fmt_wlive_take(&w->live, image, addr, &b)) {
        put_ref(w, ts_ns, &b, ctx);
        fmt_pred_end(w->pred, b.addr, b.size);
        return delta_add(w, b.stack, -(int64_t)b.size, -1);
    }
    fmt_buf_put_varint(&w->col[FMT_COL_REF], 0);
    fmt_buf_put_varint(&w->col[FMT_COL_ADDR], addr);
    return 0;
}

/* munmap, mremap and MAP_FIXED mmap: remove the range and name what it
 * touched (REF, then in MISC the number touched and whether any survives
 * in part). */
static int end_vm(struct fmt_writer *w, const struct fmt_event *ev, uint32_t ctx, uint64_t addr,
                  uint64_t len, int may_end)
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
    fmt_buf_put_varint(&w->col[FMT_COL_MISC], (uint64_t)(hit.nr - 1) << 1 | (hit.partial != 0));
    put_ref(w, ev->ts_ns, &hit.first, ctx);
    return 0;
}

static int start_vm(struct fmt_writer *w, const struct fmt_event *ev, uint32_t ctx)
{
    struct fmt_wblock b = {ev->addr,  w->next_serial++,     ev->size, ev->ts_ns, ev->stack, ctx,
                           ev->image, w->pred->nr_started++};

    return ev->size ? fmt_wvm_insert(&w->vm, ev->image, &b) : 0;
}

static int kind_known(unsigned kind, int pe)
{
    switch (kind) {
    case FMT_EV_MALLOC ... FMT_EV_PVALLOC:
    case FMT_EV_MMAP ... FMT_EV_SBRK:
    case FMT_EV_PROCESS_START ... FMT_EV_MODULE_UNLOAD:
    case FMT_EV_RSS:
    case FMT_EV_DROPPED:
        return 1;
    case FMT_EV_HEAP_CREATE ... FMT_EV_HEAP_DESTROY:
    case FMT_EV_VM_RESERVE ... FMT_EV_SECTION_UNMAP:
        return pe; /* format 1.2, PE traces only */
    }
    return 0;
}

static inline int is_realloc(unsigned kind)
{
    return kind == FMT_EV_REALLOC || kind == FMT_EV_REALLOCARRAY;
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
    fmt_buf_put_varint(m, ev->flags);
    fmt_buf_put_varint(m, ev->origin);
    fmt_buf_put_varint(m, mask);
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

/* Append a DEFS record whose body is built in a small buffer. */
static int add_def(struct fmt_writer *w, unsigned type, const struct fmt_buf *body)
{
    int rc = fmt_buf_add_varint(&w->defs, type);

    return rc ?: fmt_buf_add_string(&w->defs, body->data, body->len);
}

static int def_module(struct fmt_writer *w, const struct fmt_event *ev, uint32_t ctx, uint32_t *id)
{
    const struct fmt_module *m = ev->module;
    struct fmt_buf b = {0};
    int rc;

    if (!m || m->nr_segments > FMT_MAX_SEGMENTS || m->build_id_len > FMT_MAX_BUILD_ID ||
        m->path_len > FMT_MAX_STRING)
        return -EINVAL;
    if (w->nr_mods == w->cap_mods) {
        uint32_t cap = w->cap_mods ? w->cap_mods * 2 : 64;
        struct fmt_wmod *v = realloc(w->mods, (size_t)cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        w->mods = v;
        w->cap_mods = cap;
    }
    w->mods[w->nr_mods] = (struct fmt_wmod){m->base, ev->image, 0};
    *id = ++w->nr_mods;
    rc = fmt_buf_reserve(&b, 8 * FMT_VARINT_MAX + m->path_len + m->build_id_len +
                                 m->nr_segments * 4 * FMT_VARINT_MAX);
    if (rc)
        return rc;
    fmt_buf_put_varint(&b, *id);
    fmt_buf_put_varint(&b, ev->image);
    fmt_buf_put_varint(&b, ctx);
    fmt_buf_put_varint(&b, ev->ts_ns);
    fmt_buf_put_varint(&b, m->base);
    fmt_buf_put_varint(&b, m->path ? m->path_len : 0);
    fmt_buf_put_bytes(&b, m->path, m->path ? m->path_len : 0);
    fmt_buf_put_varint(&b, m->build_id_len);
    fmt_buf_put_bytes(&b, m->build_id, m->build_id_len);
    fmt_buf_put_varint(&b, m->nr_segments);
    for (uint32_t i = 0; i < m->nr_segments; i++) {
        fmt_buf_put_varint(&b, m->segments[i].vaddr);
        fmt_buf_put_varint(&b, m->segments[i].memsz);
        fmt_buf_put_varint(&b, m->segments[i].offset);
        fmt_buf_put_varint(&b, m->segments[i].flags);
    }
    rc = add_def(w, FMT_DEF_MODULE, &b);
    fmt_buf_free(&b);
    return rc;
}

/* Definitions that life-cycle events add (images, thread names, modules),
 * and the module id their MISC carries. */
static int life_defs(struct fmt_writer *w, const struct fmt_event *ev, uint32_t ctx)
{
    uint8_t small[8 * FMT_VARINT_MAX];
    struct fmt_buf b = {small, 0, sizeof(small)};
    struct fmt_buf *misc = &w->col[FMT_COL_MISC];
    uint32_t id = 0;
    int rc;

    switch (ev->kind) {
    case FMT_EV_PROCESS_START: {
        struct fmt_buf big = {0};
        rc = fmt_buf_reserve(&big, 8 * FMT_VARINT_MAX + ev->str_len + ev->str2_len);
        if (rc)
            return rc;
        fmt_buf_put_varint(&big, ev->image);
        fmt_buf_put_varint(&big, ev->pid);
        fmt_buf_put_varint(&big, ev->arg[0]);
        fmt_buf_put_varint(&big, ev->arg[1]);
        fmt_buf_put_varint(&big, ev->ts_ns);
        fmt_buf_put_varint(&big, ev->str ? ev->str_len : 0);
        fmt_buf_put_bytes(&big, ev->str, ev->str ? ev->str_len : 0);
        fmt_buf_put_varint(&big, ev->str2 ? ev->str2_len : 0);
        fmt_buf_put_bytes(&big, ev->str2, ev->str2 ? ev->str2_len : 0);
        rc = add_def(w, FMT_DEF_IMAGE, &big);
        fmt_buf_free(&big);
        return rc;
    }
    case FMT_EV_PROCESS_EXIT:
        fmt_buf_put_varint(&b, ev->image);
        fmt_buf_put_varint(&b, ev->ts_ns);
        fmt_buf_put_varint(&b, ev->arg[0]);
        fmt_buf_put_varint(&b, ev->arg[1]);
        return add_def(w, FMT_DEF_IMAGE_END, &b);
    case FMT_EV_THREAD_START:
    case FMT_EV_THREAD_NAME: {
        if (!ev->str || !ev->str_len)
            return 0;
        struct fmt_buf big = {0};
        rc = fmt_buf_reserve(&big, 3 * FMT_VARINT_MAX + ev->str_len);
        if (rc)
            return rc;
        fmt_buf_put_varint(&big, ctx);
        fmt_buf_put_varint(&big, ev->ts_ns);
        fmt_buf_put_varint(&big, ev->str_len);
        fmt_buf_put_bytes(&big, ev->str, ev->str_len);
        rc = add_def(w, FMT_DEF_THREAD_NAME, &big);
        fmt_buf_free(&big);
        return rc;
    }
    case FMT_EV_THREAD_EXIT:
        fmt_buf_put_varint(&b, ctx);
        fmt_buf_put_varint(&b, ev->ts_ns);
        return add_def(w, FMT_DEF_THREAD_END, &b);
    case FMT_EV_MODULE_LOAD:
        rc = def_module(w, ev, ctx, &id);
        if (rc)
            return rc;
        fmt_buf_put_varint(misc, id);
        return 0;
    case FMT_EV_MODULE_UNLOAD:
        for (uint32_t i = w->nr_mods; i-- > 0;) {
            if (!w->mods[i].gone && w->mods[i].base == ev->addr && w->mods[i].image == ev->image) {
                w->mods[i].gone = 1;
                id = i + 1;
                break;
            }
        }
        fmt_buf_put_varint(misc, id);
        if (!id)
            return 0;
        fmt_buf_put_varint(&b, id);
        fmt_buf_put_varint(&b, ev->ts_ns);
        return add_def(w, FMT_DEF_MODULE_END, &b);
    }
    return 0;
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

/* Is ctx active (has it a slot) in the chunk being built? */
static inline int ctx_active(const struct fmt_writer *w, uint32_t ctx)
{
    return w->nr_chunk_events && w->ctx_slot[ctx] >> FMT_SLOT_BITS == w->nr_chunks + 1;
}

/* A slot for ctx's prediction state, at its first event in the chunk. */
static __attribute__((noinline)) struct fmt_pred *ctx_pred_new(struct fmt_writer *w, uint32_t ctx)
{
    if (w->nr_slots == w->cap_slots) {
        uint32_t cap = w->cap_slots ? w->cap_slots * 2 : 8;
        struct fmt_pred *v = realloc(w->slots, (size_t)cap * sizeof(*v));
        if (!v)
            return NULL;
        w->slots = v;
        w->cap_slots = cap;
    }
    uint32_t slot = w->nr_slots++;
    w->ctx_slot[ctx] = (w->nr_chunks + 1) << FMT_SLOT_BITS | slot;
    fmt_pred_reset(&w->slots[slot]);
    return &w->slots[slot];
}

/* A malloc-family address in ADDR (docs/format.md, "Address prediction"):
 * 0 when predicted, else its rank among the class's freed addresses, else
 * the difference to the prediction (or, for a difference that would not
 * fit beside the codes, the address itself). */
static inline void put_heap_addr(struct fmt_buf *b, struct fmt_pred *pred, uint64_t addr,
                                 uint64_t size)
{
    uint64_t guess = fmt_pred_guess(pred, size);

    if (addr == guess) {
        fmt_buf_put_u8(b, 0);
        return;
    }
    int i = fmt_pred_shadow_take(pred, addr, size);
    if (i >= 0) {
        fmt_buf_put_u8(b, (uint8_t)(1 + i));
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

/* The prediction state of ctx in this chunk. */
static inline struct fmt_pred *ctx_pred(struct fmt_writer *w, uint32_t ctx)
{
    if (ctx_active(w, ctx))
        return &w->slots[w->ctx_slot[ctx] & (FMT_MAX_ACTIVE_CTX - 1)];
    return ctx_pred_new(w, ctx);
}

/* Before encoding an event of context ctx at ts_ns: end the chunk if a new
 * thread would exceed its contexts, keep its time range. */
static inline __attribute__((always_inline)) int event_begin(struct fmt_writer *w, uint32_t ctx,
                                                             uint64_t ts_ns)
{
    int rc;

    /* A new thread when the chunk has as many as it may: the chunk ends. */
    if (!ctx_active(w, ctx) && w->nr_slots == FMT_MAX_ACTIVE_CTX && (rc = fmt_wchunk_flush(w)))
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
    if (w->nr_chunk_events >= w->chunk_events || w->col[FMT_COL_STRS].len >= FMT_CHUNK_MAX_STRS)
        return fmt_wchunk_flush(w);
    return 0;
}

/* OP, TIME and CTX of an event (docs/format.md, "Events"); returns its OP
 * byte, which EXTRA may still mark, or NULL if out of memory. */
static inline __attribute__((always_inline)) uint8_t *
encode_head(struct fmt_writer *w, uint32_t ctx, unsigned kind, uint64_t ts_ns)
{
    struct fmt_buf *col = w->col;

    if (w->nr_chunk_events == 0) {
        w->chunk_first_serial = w->next_serial;
        w->chunk_base_ts = w->chunk_min_ts = w->chunk_max_ts = ts_ns;
        w->prev_ts = ts_ns;
        w->prev_stack[0] = w->prev_stack[1] = 0;
    }
    struct fmt_pred *pred = ctx_pred(w, ctx);
    if (!pred)
        return NULL;
    w->pred = pred;

    uint8_t *op = &col[FMT_COL_OP].data[col[FMT_COL_OP].len++];
    *op = (uint8_t)kind;
    /* Frees get their own time and stack columns: their statistics differ
     * from the allocations' (time since the allocation, often no stack),
     * and mixing the two costs up to a bit per value. */
    int fcol = kind == FMT_EV_FREE;
    fmt_buf_put_split(&col[fcol ? FMT_COL_FREE_TIME : FMT_COL_TIME], &col[FMT_COL_TIME_HI],
                      fmt_zigzag((int64_t)(ts_ns - w->prev_ts)));
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
static inline __attribute__((always_inline)) int
encode_alloc(struct fmt_writer *w, const struct heap_ev *h, uint32_t ctx, int failed)
{
    fmt_buf_put_split(&w->col[FMT_COL_SIZE], &w->col[FMT_COL_SIZE_HI], h->size);
    put_heap_addr(&w->col[FMT_COL_ADDR], w->pred, h->addr, h->size);
    return h->addr && !failed ? start_heap(w, h, ctx) : 0;
}

static int encode(struct fmt_writer *w, const struct fmt_event *ev, uint32_t ctx)
{
    struct fmt_buf *col = w->col;
    unsigned kind = ev->kind;
    int failed = (ev->flags & FMT_EVF_FAILED) != 0;
    int rc;

    uint8_t *op = encode_head(w, ctx, kind, ev->ts_ns);
    if (!op)
        return -ENOMEM;
    if (put_extra(w, ev))
        *op |= FMT_OP_EXTRA;
    encode_stack(w, kind, ev->stack);

    switch (kind) {
    case FMT_EV_MALLOC:
    case FMT_EV_CALLOC:
    case FMT_EV_MEMALIGN ... FMT_EV_PVALLOC: {
        struct heap_ev h = {ev->ts_ns, ev->addr, ev->size, ev->stack, ev->image};

        return encode_alloc(w, &h, ctx, failed);
    }
    case FMT_EV_FREE:
        return end_heap(w, ev->ts_ns, ev->image, ctx, ev->addr, 1);
    case FMT_EV_REALLOC:
    case FMT_EV_REALLOCARRAY: {
        rc = end_heap(w, ev->ts_ns, ev->image, ctx, ev->old_addr, !failed);
        if (rc)
            return rc;
        uint64_t guess = ev->old_addr ? ev->old_addr : fmt_pred_guess(w->pred, ev->size);
        fmt_buf_put_split(&col[FMT_COL_SIZE], &col[FMT_COL_SIZE_HI], ev->size);
        fmt_buf_put_varint(&col[FMT_COL_ADDR], fmt_zigzag((int64_t)(ev->addr - guess)));
        struct heap_ev h = {ev->ts_ns, ev->addr, ev->size, ev->stack, ev->image};

        return ev->addr && !failed ? start_heap(w, &h, ctx) : 0;
    }
    default:
        break;
    }

    /* Everything else: address and size as they are. */
    fmt_buf_put_split(&col[FMT_COL_SIZE], &col[FMT_COL_SIZE_HI], ev->size);
    fmt_buf_put_varint(&col[FMT_COL_ADDR], ev->addr);
    int ok = !failed && ev->addr != UINT64_MAX;
    switch (kind) {
    case FMT_EV_MMAP:
        rc = end_vm(w, ev, ctx, ev->addr, ev->size, ok && ev->addr);
        return rc ?: (ok && ev->addr ? start_vm(w, ev, ctx) : 0);
    case FMT_EV_MUNMAP:
        return end_vm(w, ev, ctx, ev->addr, ev->size, ok);
    case FMT_EV_MREMAP:
        rc = end_vm(w, ev, ctx, ev->old_addr, ev->old_size, ok && ev->addr);
        return rc ?: (ok && ev->addr ? start_vm(w, ev, ctx) : 0);
    case FMT_EV_DROPPED:
        w->chunk_dropped += ev->arg[0];
        return 0;
    }
    return life_defs(w, ev, ctx);
}

int fmt_writer_event(struct fmt_writer *w, const struct fmt_event *ev)
{
    int rc;

    if (w->out.err)
        return w->out.err;
    if (!kind_known(ev->kind, w->pe) || ev->stack > w->stacks.nr_nodes ||
        (ev->str && ev->str_len > FMT_MAX_STRING) || (ev->str2 && ev->str2_len > FMT_MAX_STRING))
        return -EINVAL;
    if ((rc = ensure_room(w, ev)))
        return rc;
    uint32_t ctx = w->cur_ctx;
    if (!ctx || !ctx_same(&w->ctxs[ctx], ev)) {
        struct fmt_writer_who who = {ev->image, ev->thread, ev->pid, ev->tid};

        if ((rc = ctx_lookup(w, &who, ev->ts_ns, &ctx))) {
            w->out.err = rc;
            return rc;
        }
    }
    if ((rc = event_begin(w, ctx, ev->ts_ns)))
        return rc;
    return event_end(w, encode(w, ev, ctx));
}

int fmt_writer_heap(struct fmt_writer *w, const struct fmt_writer_who *who, unsigned kind,
                    uint64_t ts_ns, uint64_t addr, uint64_t size, uint32_t stack)
{
    struct heap_ev h = {ts_ns, addr, size, stack, who->image};
    int rc;

    if (w->out.err)
        return w->out.err;
    if ((kind != FMT_EV_MALLOC && kind != FMT_EV_FREE) || stack > w->stacks.nr_nodes)
        return -EINVAL;
    if ((rc = ensure_room(w, NULL)))
        return rc;
    uint32_t ctx = w->cur_ctx;
    if (!ctx || !who_same(&w->ctxs[ctx], who)) {
        if ((rc = ctx_lookup(w, who, ts_ns, &ctx))) {
            w->out.err = rc;
            return rc;
        }
    }
    if ((rc = event_begin(w, ctx, ts_ns)))
        return rc;
    if (!encode_head(w, ctx, kind, ts_ns))
        return event_end(w, -ENOMEM);
    encode_stack(w, kind, stack);
    if (kind == FMT_EV_FREE)
        return event_end(w, end_heap(w, ts_ns, who->image, ctx, addr, 1));
    return event_end(w, encode_alloc(w, &h, ctx, 0));
}

int fmt_writer_stack(struct fmt_writer *w, uint32_t image, const uint64_t *frames,
                     uint32_t nr_frames, uint32_t *id)
{
    if (w->out.err)
        return w->out.err;
    int rc = fmt_wstack_intern(&w->stacks, image, frames, nr_frames, id);
    w->st.nr_stacks = w->stacks.nr_nodes;
    return rc;
}

int fmt_writer_flush(struct fmt_writer *w)
{
    if (w->out.err)
        return w->out.err;
    return fmt_wchunk_flush(w);
}

int fmt_writer_finish(struct fmt_writer *w)
{
    int rc = fmt_wchunk_flush(w);

    if (!rc && (w->defs.len || w->stacks.nr_pending))
        rc = fmt_wchunk_flush_defs(w);
    if (rc)
        return rc;

    /* The index: the directory of every block written. */
    uint64_t index_off = w->out.off;
    uint64_t nr_blocks = w->out.seq;
    struct fmt_buf dir = w->out.dir;
    struct fmt_buf payload = {0};
    rc = fmt_buf_reserve(&payload, FMT_VARINT_MAX + dir.len);
    if (rc)
        return rc;
    fmt_buf_put_varint(&payload, nr_blocks);
    fmt_buf_put_bytes(&payload, dir.data, dir.len);
    size_t bound = fmt_zc_bound(&w->zc, payload.len);
    if (!(rc = fmt_buf_reserve(&w->scratch, bound))) {
        size_t z = fmt_zc_compress(&w->zc, w->scratch.data, bound, payload.data, payload.len);
        if (!z) {
            rc = -EIO;
        } else {
            struct iovec iov = {w->scratch.data, z};
            rc = fmt_wout_block(&w->out, FMT_BLOCK_INDEX, fmt_zc_block_flag(&w->zc),
                                (uint32_t)payload.len, &iov, 1);
        }
    }
    fmt_buf_free(&payload);
    if (rc)
        return rc;
    uint8_t trailer[FMT_TRAILER_SIZE];
    fmt_trailer_encode(trailer, index_off, nr_blocks);
    rc = fmt_wout_raw(&w->out, trailer, sizeof(trailer));
    w->st.bytes_written = w->out.off;
    return rc;
}

void fmt_writer_get_stats(const struct fmt_writer *w, struct fmt_writer_stats *st)
{
    *st = w->st;
    st->bytes_written = w->out.off;
    st->nr_stacks = w->stacks.nr_nodes;
}

void fmt_writer_destroy(struct fmt_writer *w)
{
    if (!w)
        return;
    fmt_zc_free(&w->zc);
    for (int i = 0; i < FMT_NR_COLUMNS; i++)
        fmt_buf_free(&w->col[i]);
    fmt_buf_free(&w->defs);
    fmt_buf_free(&w->scratch);
    fmt_buf_free(&w->out.dir);
    free(w->ctxs);
    free(w->ctx_slot);
    free(w->slots);
    free(w->ctx_hash);
    fmt_wlive_destroy(&w->live);
    fmt_wvm_destroy(&w->vm);
    fmt_wstack_destroy(&w->stacks);
    free(w->touched);
    free(w->dmap);
    free(w->mods);
    free(w);
}
