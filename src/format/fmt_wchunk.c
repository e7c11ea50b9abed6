/* SPDX-License-Identifier: MIT */
/* Closing a chunk: compress each column on its own (columns differ so much
 * in statistics that one frame for all compresses worse; the last chunk's
 * on two threads), write the CHUNK block, then the DEFS block with new
 * definitions and the chunk's summary. A chunk counts only once its DEFS
 * block is on disk (docs/format.md). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "format/fmt_writer_internal.h"

/* Append the summary record of the chunk just written to w->defs. */
static int put_summary(struct fmt_writer *w)
{
    struct fmt_buf b = {0};
    int rc = fmt_buf_reserve(&b, (10 + 3 * (size_t)w->deltas.nr) * FMT_VARINT_MAX);

    if (rc)
        return rc;
    fmt_wdelta_sort(&w->deltas);
    uint32_t nr = 0;
    for (uint32_t i = 0; i < w->deltas.nr; i++)
        if (w->deltas.touched[i].bytes || w->deltas.touched[i].blocks)
            nr++;
    fmt_buf_put_varint(&b, w->nr_chunks);
    fmt_buf_put_varint(&b, w->chunk_min_ts);
    fmt_buf_put_varint(&b, w->chunk_max_ts - w->chunk_min_ts);
    fmt_buf_put_varint(&b, w->chunk_first_serial);
    fmt_buf_put_varint(&b, w->nr_chunk_events);
    fmt_buf_put_varint(&b, w->next_serial - w->chunk_first_serial);
    fmt_buf_put_varint(&b, w->chunk_heap_allocs);
    fmt_buf_put_varint(&b, w->chunk_dropped);
    fmt_buf_put_varint(&b, nr);
    uint32_t prev = 0;
    for (uint32_t i = 0; i < w->deltas.nr; i++) {
        const struct fmt_wdelta *d = &w->deltas.touched[i];
        if (!d->bytes && !d->blocks)
            continue;
        fmt_buf_put_varint(&b, d->stack - prev);
        fmt_buf_put_varint(&b, fmt_zigzag(d->bytes));
        fmt_buf_put_varint(&b, fmt_zigzag(d->blocks));
        prev = d->stack;
    }
    rc = fmt_buf_add_varint(&w->defs, FMT_DEF_SUMMARY);
    rc = rc ?: fmt_buf_add_string(&w->defs, b.data, b.len);
    fmt_buf_free(&b);
    /* 1.10: the chunk's totals, its stacks' counts from the same deltas */
    rc = rc ?: fmt_wtot_put(&w->tot, &w->defs, w->nr_chunks, w->chunk_min_ts, &w->deltas);
    fmt_wdelta_clear(&w->deltas);
    return rc;
}

int fmt_wchunk_flush_defs(struct fmt_writer *w)
{
    struct fmt_buf p = {0};
    struct fmt_wstack *s = &w->stacks;
    int rc = 0;

    if (s->nr_pending && (rc = fmt_wstack_encode(s)))
        return rc;
    if (s->nr_pending) {
        /* STACK_CODES: first id, count, the streams' lengths, the streams. */
        uint8_t hdr[(2 + FMT_STK_NR_STREAMS) * FMT_VARINT_MAX];
        struct fmt_buf h = {hdr, 0, sizeof(hdr)};
        size_t len = 0;
        fmt_buf_put_varint(&h, s->first_pending);
        fmt_buf_put_varint(&h, s->nr_pending);
        for (int k = 0; k < FMT_STK_NR_STREAMS; k++) {
            fmt_buf_put_varint(&h, s->pending[k].len);
            len += s->pending[k].len;
        }
        rc = rc ?: fmt_buf_add_varint(&p, FMT_DEF_STACK_CODES);
        rc = rc ?: fmt_buf_add_varint(&p, h.len + len);
        rc = rc ?: fmt_buf_add_bytes(&p, hdr, h.len);
        for (int k = 0; k < FMT_STK_NR_STREAMS; k++)
            rc = rc ?: fmt_buf_add_bytes(&p, s->pending[k].data, s->pending[k].len);
    }
    rc = rc ?: fmt_buf_add_bytes(&p, w->defs.data, w->defs.len);
    size_t bound = fmt_zc_bound(&w->zc, p.len);
    rc = rc ?: fmt_buf_reserve(&w->scratch, bound);
    if (!rc) {
        w->scratch.len = 0;
        size_t z = fmt_zc_compress(&w->zc, w->scratch.data, bound, p.data, p.len);
        if (!z) {
            rc = -EIO;
        } else {
            struct iovec iov = {w->scratch.data, z};
            rc = fmt_wout_block(&w->out, FMT_BLOCK_DEFS, fmt_zc_block_flag(&w->zc), (uint32_t)p.len,
                                &iov, 1);
        }
    }
    fmt_buf_free(&p);
    if (rc)
        return rc;
    for (int k = 0; k < FMT_STK_NR_STREAMS; k++)
        s->pending[k].len = 0;
    s->first_pending = s->nr_nodes + 1;
    s->nr_pending = 0;
    s->nr_encoded = 0;
    s->head_off = 0;
    w->defs.len = 0;
    w->st.bytes_written = w->out.off;
    return 0;
}

/* What compresses a column: a zstd (or zlib) context and a buffer for the
 * other level compress_column tries. The writer's own, or a helper's. */
struct fmt_wcomp {
    struct fmt_zc *zc;
    struct fmt_buf *probe;
};

/* Column col at the writer's level, or at the deeper one (deep). */
static size_t compress_at(struct fmt_zc *zc, int deep, void *dst, size_t cap,
                          const struct fmt_buf *col)
{
    return deep ? fmt_zc_compress_deep(zc, dst, cap, col->data, col->len)
                : fmt_zc_compress(zc, dst, cap, col->data, col->len);
}

/* Whether this chunk tries both levels: every one of the first, smaller
 * chunks (FMT_FIRST_CHUNK_EVENTS), whose start of a program says little
 * of what follows, then the first of the full size and every
 * FMT_REPEAT_PROBE-th after it. Tried on the first chunk only, sqlite3's
 * trace grew by 6 %. */
static int probe_due(const struct fmt_writer *w)
{
    return w->chunk_limit < w->chunk_events || !(w->full_chunks % FMT_REPEAT_PROBE);
}

/* A column longer than this is tried on its first this many bytes only:
 * whole columns of chunks of 2^20 events (up to ~5 MB) compressed both
 * ways cost the pool storm, whose random columns never keep the deeper
 * search, ~15 % of the recorder's time. The deeper search's window is as
 * long (fmt_zc.c), so what it finds in the sample it finds in the rest. */
#define FMT_PROBE_BYTES (256u << 10)

/* Whether the deeper search pays: it compressed to a tenth less. */
static int deep_pays(size_t zbase, size_t zdeep)
{
    return zdeep && zbase && zdeep * 10 <= zbase * 9;
}

/* Column c into dst (cap bytes, its bound); its compressed size, 0 on
 * failure. A 1.5 writer at the default level compresses a column with
 * zstd's deeper search (fmt_zc_compress_deep) where that pays: real programs
 * repeat their sizes, addresses and stacks far apart, which zstd's level 1
 * mostly misses (sqlite3: 0.242 -> 0.190 bytes/event), while on random
 * sizes or columns of one repeated value the deeper search only costs time.
 * Which pays is tried on the chunks probe_due names: the column (or its
 * first FMT_PROBE_BYTES) is compressed both ways, and the deeper search
 * used until the next try if it saved a tenth; a whole column tried keeps
 * the smaller. Touches only column c's state (col_rep[c]) and k's: two
 * compressors may run it on two columns at once. */
static size_t compress_column(struct fmt_writer *w, const struct fmt_wcomp *k, int c, uint8_t *dst,
                              size_t cap)
{
    const struct fmt_buf *col = &w->col[c];
    int deep = w->col_rep[c];

    if (!w->rep_deep)
        return compress_at(k->zc, 0, dst, cap, col);
    if (w->finishing && probe_due(w))
        /* The last chunk, due a try: no chunk comes after to use what it
         * finds, and the deeper search is all but never the larger. */
        return compress_at(k->zc, 1, dst, cap, col);
    size_t z = compress_at(k->zc, deep, dst, cap, col);
    if (!z || !probe_due(w))
        return z;
    if (col->len > FMT_PROBE_BYTES) {
        struct fmt_buf head = {col->data, FMT_PROBE_BYTES, FMT_PROBE_BYTES};
        size_t hcap = fmt_zc_bound(k->zc, FMT_PROBE_BYTES);

        if (fmt_buf_reserve(k->probe, hcap))
            return z;
        size_t zbase = compress_at(k->zc, 0, k->probe->data, hcap, &head);
        size_t zdeep = compress_at(k->zc, 1, k->probe->data, hcap, &head);
        w->col_rep[c] = deep_pays(zbase, zdeep);
        return z;
    }
    if (fmt_buf_reserve(k->probe, cap))
        return z; /* no room to try: keep what is */
    size_t y = compress_at(k->zc, !deep, k->probe->data, cap, col);
    w->col_rep[c] = deep ? deep_pays(y, z) : deep_pays(z, y);
    if (y && y < z) {
        memcpy(dst, k->probe->data, y);
        return y;
    }
    return z;
}

/* A chunk's columns being compressed, each into its own place in scratch
 * (zoff: the sum of the bounds before it), by one or two compressors that
 * take them largest first. */
struct fmt_wcols {
    struct fmt_writer *w;
    int order[FMT_NR_COLUMNS], n;
    _Atomic int next;
    size_t zoff[FMT_NR_COLUMNS], z[FMT_NR_COLUMNS];
};

static void compress_columns(struct fmt_wcols *j, const struct fmt_wcomp *k)
{
    struct fmt_writer *w = j->w;

    for (int i; (i = atomic_fetch_add(&j->next, 1)) < j->n;) {
        int c = j->order[i];

        j->z[c] = compress_column(w, k, c, w->scratch.data + j->zoff[c],
                                  fmt_zc_bound(k->zc, w->col[c].len));
    }
}

/* The helper: a compressor of its own, the writer's coding. */
struct fmt_whelper {
    struct fmt_wcols *j;
    struct fmt_zc zc;
    struct fmt_buf probe;
};

static void *compress_helper(void *arg)
{
    struct fmt_whelper *h = arg;
    struct fmt_wcomp k = {&h->zc, &h->probe};

    compress_columns(h->j, &k);
    return NULL;
}

/* Below this many bytes in all, the last chunk's columns are compressed
 * on one thread: a second one's start and its context cost more. */
#define FMT_PAR_MIN_BYTES (256u << 10)

/* Compress every non-empty column of the chunk into w->scratch (reserved
 * for the sum of their bounds): into j->z[c] the size, 0 on failure.
 * The last chunk of a trace (w->finishing: the program has ended and the
 * recorder waits for nothing else) is compressed on two threads when it
 * is big enough: the columns are independent, and a short program's run
 * otherwise ends with the whole trace's compression (cc1 at -O2: 260,000
 * events, 13 ms of the 18 after its exit). Meanwhile this thread first
 * codes the stacks the DEFS block after the chunk will hold (4 ms of
 * those 18): they share nothing with the columns. Returns 0 or -ENOMEM. */
static int compress_chunk(struct fmt_writer *w, struct fmt_wcols *j)
{
    struct fmt_wcomp own = {&w->zc, &w->probe};
    struct fmt_whelper h = {.j = j};
    size_t off = 0, raw = 0;
    pthread_t tid;
    int helped = 0, rc = 0;

    for (int c = 1; c < FMT_NR_COLUMNS; c++) {
        if (!w->col[c].len)
            continue;
        int i = j->n++;
        /* largest first: the two threads end together */
        while (i > 0 && w->col[j->order[i - 1]].len < w->col[c].len) {
            j->order[i] = j->order[i - 1];
            i--;
        }
        j->order[i] = c;
        j->zoff[c] = off;
        off += fmt_zc_bound(&w->zc, w->col[c].len);
        raw += w->col[c].len;
    }
    if (w->finishing && j->n > 1 && raw >= FMT_PAR_MIN_BYTES &&
        !fmt_zc_init(&h.zc, w->zc.coding, w->zc.level)) {
        helped = !pthread_create(&tid, NULL, compress_helper, &h);
        if (!helped)
            fmt_zc_free(&h.zc);
    }
    if (helped)
        rc = fmt_wstack_encode(&w->stacks);
    compress_columns(j, &own);
    if (helped) {
        pthread_join(tid, NULL);
        fmt_zc_free(&h.zc);
        fmt_buf_free(&h.probe);
        /* A column the helper could not compress (its context is new: an
         * allocation inside zstd may fail) is done again here, so that the
         * second thread adds no way to fail. */
        for (int i = 0; i < j->n; i++) {
            int c = j->order[i];

            if (!j->z[c])
                j->z[c] = compress_column(w, &own, c, w->scratch.data + j->zoff[c],
                                          fmt_zc_bound(&w->zc, w->col[c].len));
        }
    }
    return rc;
}

int fmt_wchunk_flush(struct fmt_writer *w)
{
    size_t zlen[FMT_NR_COLUMNS];
    int enc[FMT_NR_COLUMNS];
    size_t total_bound = 0;
    int rc;

    if (w->out.err)
        return w->out.err;
    if (!w->nr_chunk_events)
        return 0;
    if (w->tpack) { /* the groups of deltas still held (docs/format.md, "Packed times") */
        if ((rc = fmt_buf_reserve(&w->col[FMT_COL_TIME], 1)) ||
            (rc = fmt_buf_reserve(&w->col[FMT_COL_FREE_TIME], 1)))
            return rc;
        fmt_tpack_flush(&w->tp[0], &w->col[FMT_COL_TIME]);
        fmt_tpack_flush(&w->tp[1], &w->col[FMT_COL_FREE_TIME]);
    }
    for (int c = 1; c < FMT_NR_COLUMNS; c++)
        total_bound += fmt_zc_bound(&w->zc, w->col[c].len);
    if ((rc = fmt_buf_reserve(&w->scratch, total_bound)))
        return rc;
    w->scratch.len = 0;

    struct fmt_wcols j = {.w = w};
    if ((rc = compress_chunk(w, &j)))
        return rc;
    uint8_t hdr[(5 + 4 * FMT_NR_COLUMNS) * FMT_VARINT_MAX];
    struct fmt_buf h = {hdr, 0, sizeof(hdr)};
    for (int c = 1; c < FMT_NR_COLUMNS; c++) {
        if (!w->col[c].len)
            continue;
        if (!j.z[c])
            return -EIO;
        /* Incompressible columns are stored as they are. */
        enc[c] = j.z[c] < w->col[c].len ? (int)fmt_zc_col_enc(&w->zc) : FMT_COL_ENC_RAW;
        zlen[c] = enc[c] != FMT_COL_ENC_RAW ? j.z[c] : w->col[c].len;
    }
    fmt_buf_put_varint(&h, w->nr_chunks);
    fmt_buf_put_varint(&h, w->nr_chunk_events);
    fmt_buf_put_varint(&h, w->chunk_first_serial);
    fmt_buf_put_varint(&h, w->chunk_base_ts);
    fmt_buf_put_varint(&h, (uint64_t)j.n);
    struct iovec iov[FMT_NR_COLUMNS + 1];
    int n = 1;
    size_t raw_total = 0;
    for (int c = 1; c < FMT_NR_COLUMNS; c++) {
        if (!w->col[c].len)
            continue;
        fmt_buf_put_varint(&h, (uint64_t)c);
        fmt_buf_put_varint(&h, (uint64_t)enc[c]);
        fmt_buf_put_varint(&h, w->col[c].len);
        fmt_buf_put_varint(&h, zlen[c]);
        iov[n].iov_base = enc[c] != FMT_COL_ENC_RAW ? w->scratch.data + j.zoff[c] : w->col[c].data;
        iov[n].iov_len = zlen[c];
        raw_total += zlen[c];
        n++;
    }
    iov[0] = (struct iovec){hdr, h.len};
    raw_total += h.len;
    rc = fmt_wout_block(&w->out, FMT_BLOCK_CHUNK, 0, (uint32_t)raw_total, iov, n);
    if (rc)
        return rc;
    rc = put_summary(w);
    if (rc)
        return rc;
    w->nr_chunks++;
    w->nr_chunk_events = 0;
    if (w->chunk_limit == w->chunk_events)
        w->full_chunks++;
    else
        w->chunk_limit =
            w->chunk_limit * 2 < w->chunk_events ? w->chunk_limit * 2 : w->chunk_events;
    w->chunk_heap_allocs = 0;
    w->chunk_dropped = 0;
    w->cur_ctx = 0;
    w->nr_slots = 0;
    for (int c = 1; c < FMT_NR_COLUMNS; c++)
        w->col[c].len = 0;
    return fmt_wchunk_flush_defs(w);
}
