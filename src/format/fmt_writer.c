/* SPDX-License-Identifier: MIT */
/* Trace writer: the file's header and META block, the index and trailer
 * that close it, and the writer's life. Events are encoded in
 * fmt_wevent.c, chunks closed in fmt_wchunk.c. */
#include "format/fmt_writer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/fmt_block_internal.h"
#include "format/fmt_wctx_internal.h"
#include "format/fmt_writer_internal.h"

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
    if (info->only) {
        rc = rc ?: fmt_buf_add_varint(&b, FMT_META_ONLY);
        rc = rc ?: fmt_buf_add_string(&b, info->only, strlen(info->only));
    }
    uint8_t tmp[FMT_VARINT_MAX];
    struct fmt_buf t = {tmp, 0, sizeof(tmp)};
    fmt_buf_put_varint(&t, info->stack_depth);
    rc = rc ?: fmt_buf_add_varint(&b, FMT_META_STACK_DEPTH);
    rc = rc ?: fmt_buf_add_string(&b, tmp, t.len);
    if (info->sample_bytes) {
        t.len = 0;
        fmt_buf_put_varint(&t, info->sample_bytes);
        rc = rc ?: fmt_buf_add_varint(&b, FMT_META_SAMPLE_BYTES);
        rc = rc ?: fmt_buf_add_string(&b, tmp, t.len);
    }
    if (info->attached_pid) {
        t.len = 0;
        fmt_buf_put_varint(&t, info->attached_pid);
        rc = rc ?: fmt_buf_add_varint(&b, FMT_META_ATTACHED);
        rc = rc ?: fmt_buf_add_string(&b, tmp, t.len);
    }
    if (w->agg_ns) { /* 1.8: aggregated from the start */
        t.len = 0;
        fmt_buf_put_varint(&t, w->agg_ns);
        rc = rc ?: fmt_buf_add_varint(&b, FMT_META_AGGREGATE);
        rc = rc ?: fmt_buf_add_string(&b, tmp, t.len);
    }
    if (info->keep_last_ns) { /* 1.9 */
        t.len = 0;
        fmt_buf_put_varint(&t, info->keep_last_ns);
        rc = rc ?: fmt_buf_add_varint(&b, FMT_META_KEEP_LAST);
        rc = rc ?: fmt_buf_add_string(&b, tmp, t.len);
    }
    if (info->segment_nr) { /* 1.9, with the feature bit SEGMENT */
        t.len = 0;
        fmt_buf_put_varint(&t, info->segment_from_ns);
        fmt_buf_put_varint(&t, info->segment_nr);
        rc = rc ?: fmt_buf_add_varint(&b, FMT_META_SEGMENT);
        rc = rc ?: fmt_buf_add_string(&b, tmp, t.len);
    }
    if (info->wine_prefix) {
        rc = rc ?: fmt_buf_add_varint(&b, FMT_META_WINE_PREFIX);
        rc = rc ?: fmt_buf_add_string(&b, info->wine_prefix, strlen(info->wine_prefix));
    }
    /* one record per folder, in the order they are searched */
    for (const char *d = info->wine_dll_dirs, *end = d + info->wine_dll_dirs_len; d && d < end;
         d += strlen(d) + 1) {
        rc = rc ?: fmt_buf_add_varint(&b, FMT_META_WINE_DLL_DIR);
        rc = rc ?: fmt_buf_add_string(&b, d, strlen(d));
    }
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
    w->tu = opt && opt->time_unit_ns ? opt->time_unit_ns : 1;
    w->v13 = opt && opt->time_unit_ns;
    w->pools = opt && opt->pools;
    w->reach = opt && opt->reach;
    w->agg = opt && opt->aggregate;
    w->counters = opt && opt->counters;
    /* A trace aggregated from a later time (a reader's info of one, given
     * to write it again) says so by its AGGREGATE event's record alone. */
    w->agg_ns = info->aggregate_from_ns ? 0 : info->aggregate_ns;
    w->tpack = w->v13 && opt->time_pack;
    w->v15 = w->tpack && opt->free_ranks;
    w->v17 = w->v15 && opt->realloc_pred;
    /* An aggregated trace's batches count what its events do not: no
     * totals there (docs/aggregate.md). */
    w->tot.on = w->v17 && opt->totals && !w->agg;
    w->rep_deep = w->v15 && !opt->zstd_level && !opt->zlib;
    /* A period needs the bit that says what it is. */
    if (w->tu > FMT_WRITER_MAX_TIME_UNIT_NS || (w->agg_ns && !w->agg) || info->aggregate_from_ns) {
        free(w);
        return -EINVAL;
    }
    if (w->chunk_events > FMT_MAX_CHUNK_EVENTS)
        w->chunk_events = FMT_MAX_CHUNK_EVENTS;
    w->chunk_limit =
        w->chunk_events < FMT_FIRST_CHUNK_EVENTS ? w->chunk_events : FMT_FIRST_CHUNK_EVENTS;
    w->next_serial = 1;
    if ((rc = fmt_zc_init(&w->zc, opt && opt->zlib ? FMT_ZC_ZLIB : FMT_ZC_ZSTD, w->level)) ||
        (rc = fmt_wctx_init(w)))
        goto fail;
    if ((rc = fmt_wlive_init(&w->live, w->tu)) ||
        (rc = fmt_wstack_init(&w->stacks, info->stack_depth)))
        goto fail;
    if (w->v15 && !(w->recent_ix = calloc(1, sizeof(*w->recent_ix)))) {
        rc = -ENOMEM;
        goto fail;
    }
    if (w->pools && (rc = fmt_wpool_init(&w->pool, w->tu))) {
        w->pools = 0;
        goto fail;
    }
    for (int i = 0; i < FMT_NR_COLUMNS; i++)
        if ((rc = fmt_buf_reserve(&w->col[i], 4096)))
            goto fail;

    uint8_t hdr[FMT_HEADER_SIZE];
    struct fmt_trace_info hinfo = *info;
    hinfo.time_unit_ns = w->tu;
    fmt_header_encode(
        hdr, &hinfo,
        FMT_FEAT_ZSTD_COLUMNS | FMT_FEAT_STACK_CODES | FMT_FEAT_ADDR_CANDS |
            (opt && opt->pe_process ? FMT_FEAT_PE_PROCESS : 0) | (w->v13 ? FMT_FEAT_TIME_UNIT : 0) |
            (w->tpack ? FMT_FEAT_TIME_PACK : 0) | (info->sample_bytes ? FMT_FEAT_SAMPLED : 0) |
            (w->pools ? FMT_FEAT_POOLS : 0) | (w->v15 ? FMT_FEAT_FREE_RANKS : 0) |
            (w->reach ? FMT_FEAT_REACH : 0) | (w->v17 ? FMT_FEAT_REALLOC_PRED : 0) |
            (w->agg ? FMT_FEAT_AGGREGATE : 0) | (info->segment_nr ? FMT_FEAT_SEGMENT : 0) |
            (w->counters ? FMT_FEAT_COUNTERS : 0) |
            (w->tot.on ? FMT_FEAT_TOTALS | FMT_FEAT_TOTALS_ALL | FMT_FEAT_TOTALS_PROGS : 0));
    if ((rc = fmt_wout_raw(&w->out, hdr, sizeof(hdr))) || (rc = w_meta(w, info)))
        goto fail;
    *out = w;
    return 0;
fail:
    fmt_writer_destroy(w);
    return rc;
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
    int rc;

    w->finishing = 1;
    rc = fmt_wchunk_flush(w);

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

uint32_t fmt_writer_time_unit(const struct fmt_writer *w)
{
    return w->tu;
}

void fmt_writer_get_stats(const struct fmt_writer *w, struct fmt_writer_stats *st)
{
    *st = w->st;
    st->bytes_written = w->out.off;
    st->nr_stacks = w->stacks.nr_nodes;
    st->pending = w->nr_chunk_events;
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
    fmt_buf_free(&w->probe);
    fmt_buf_free(&w->out.dir);
    fmt_wctx_destroy(w);
    fmt_wlive_destroy(&w->live);
    if (w->pools)
        fmt_wpool_destroy(&w->pool);
    fmt_wvm_destroy(&w->vm);
    fmt_wstack_destroy(&w->stacks);
    fmt_wdelta_destroy(&w->deltas);
    fmt_wtot_destroy(&w->tot);
    free(w->mods);
    free(w->recent_ix);
    free(w);
}
