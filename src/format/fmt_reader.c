/* SPDX-License-Identifier: MIT */
/* Opening a trace: header, then either the index named by the trailer or,
 * without a trailer (a truncated trace), a scan of the blocks from the
 * header on. DEFS blocks are loaded at once (they are the tables); chunks
 * are only located here and decoded on demand by fmt_rchunk.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/fmt_reader_internal.h"
#include "format/fmt_zc_internal.h"

int fmt_rerr(struct fmt_reader *r, int rc, uint64_t off, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(r->err, sizeof(r->err), "%s: offset %llu: ", r->name, (unsigned long long)off);

    if (n < 0 || (size_t)n >= sizeof(r->err))
        return rc;
    va_start(ap, fmt);
    vsnprintf(r->err + n, sizeof(r->err) - (size_t)n, fmt, ap);
    va_end(ap);
    return rc;
}

/* Read exactly len bytes at off. Returns 0, -ENODATA if the file ends
 * first, or -errno. */
static int r_pread(struct fmt_reader *r, uint64_t off, void *buf, size_t len)
{
    size_t done = 0;

    while (done < len) {
        ssize_t k = pread(r->fd, (char *)buf + done, len - done, (off_t)(off + done));
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (k == 0)
            return -ENODATA;
        done += (size_t)k;
    }
    return 0;
}

int fmt_rblock_load(struct fmt_reader *r, uint64_t off, struct fmt_block_hdr *h)
{
    uint8_t hb[FMT_BLOCK_HEADER_SIZE];
    const char *why;
    int rc;

    if (off + FMT_BLOCK_HEADER_SIZE > r->file_size)
        return fmt_rerr(r, -EPROTO, off, "block header beyond the end of the file");
    if ((rc = r_pread(r, off, hb, sizeof(hb))))
        return fmt_rerr(r, rc == -ENODATA ? -EPROTO : rc, off, "cannot read block header: %s",
                        strerror(-rc));
    if ((rc = fmt_block_parse(hb, h, &why)))
        return fmt_rerr(r, rc, off, "%s", why);
    if (h->stored_size > r->file_size - off - FMT_BLOCK_HEADER_SIZE)
        return fmt_rerr(r, -EPROTO, off, "block of %u bytes runs past the end of the file",
                        h->stored_size);
    if (h->type == FMT_BLOCK_DEFS && !r->loaded_defs_once) {
        /* Tables grow with the definitions' decompressed size; a file
         * cannot hold more than this much of them honestly, and a crafted
         * one must not make the reader allocate without bound. Checked
         * before decompressing. */
        r->defs_raw_total += h->raw_size;
        if (r->defs_raw_total > FMT_DEFS_PER_FILE_BYTE * r->file_size + FMT_DEFS_SLACK)
            return fmt_rerr(r, -EPROTO, off, "implausibly many definitions for the file size");
    }
    if ((rc = fmt_buf_reserve(&r->payload, h->stored_size)))
        return fmt_rerr(r, rc, off, "out of memory");
    r->payload.len = h->stored_size;
    if ((rc = r_pread(r, off + FMT_BLOCK_HEADER_SIZE, r->payload.data, h->stored_size)))
        return fmt_rerr(r, rc == -ENODATA ? -EPROTO : rc, off, "cannot read block: %s",
                        strerror(-rc));
    if (!fmt_block_crc_ok(hb, r->payload.data, h->stored_size))
        return fmt_rerr(r, -EPROTO, off, "bad CRC (block type %u, %u bytes)", h->type,
                        h->stored_size);
    if (!(h->flags & (FMT_BLOCKF_ZSTD | FMT_BLOCKF_ZLIB))) {
        struct fmt_buf t = r->raw;
        r->raw = r->payload;
        r->payload = t;
        return 0;
    }
    if ((rc = fmt_buf_reserve(&r->raw, h->raw_size ? h->raw_size : 1)))
        return fmt_rerr(r, rc, off, "out of memory");
    if (h->flags & FMT_BLOCKF_ZLIB) { /* 1.2: the Windows launcher's coding */
        if (fmt_zc_inflate(r->raw.data, h->raw_size, r->payload.data, h->stored_size))
            return fmt_rerr(r, -EPROTO, off, "bad compressed data (zlib)");
        r->raw.len = h->raw_size;
        return 0;
    }
    size_t z =
        ZSTD_decompressDCtx(r->dctx, r->raw.data, h->raw_size, r->payload.data, h->stored_size);
    if (ZSTD_isError(z) || z != h->raw_size)
        return fmt_rerr(r, -EPROTO, off, "bad compressed data (%s)",
                        ZSTD_isError(z) ? ZSTD_getErrorName(z) : "wrong size");
    r->raw.len = z;
    return 0;
}

/* Note a chunk block seen while opening. */
static int note_chunk(struct fmt_reader *r, uint64_t off, uint32_t stored)
{
    if (r->nr_seen_chunks == r->cap_chunks) {
        uint32_t cap = r->cap_chunks ? r->cap_chunks * 2 : 64;
        struct fmt_rchunk *c = realloc(r->chunks, (size_t)cap * sizeof(*c));
        if (!c)
            return fmt_rerr(r, -ENOMEM, off, "out of memory");
        r->chunks = c;
        r->cap_chunks = cap;
    }
    struct fmt_rchunk *c = &r->chunks[r->nr_seen_chunks++];
    memset(c, 0, sizeof(*c));
    c->c.offset = off;
    c->stored_size = stored;
    return 0;
}

/* Handle one block of the file, whole and checked. */
static int take_block(struct fmt_reader *r, uint64_t off, const struct fmt_block_hdr *h)
{
    switch (h->type) {
    case FMT_BLOCK_META:
        return fmt_rdefs_meta(r, off);
    case FMT_BLOCK_DEFS:
        return fmt_rdefs_parse(r, off);
    case FMT_BLOCK_CHUNK:
        if (r->nr_seen_chunks != r->nr_chunks)
            return fmt_rerr(r, -EPROTO, off, "chunk %u has no summary", r->nr_seen_chunks - 1);
        return note_chunk(r, off, h->stored_size);
    case FMT_BLOCK_INDEX:
        return fmt_rerr(r, -EPROTO, off, "index block in the middle of the file");
    }
    return 0; /* a block type of a later version: skipped */
}

static int all_zero_from(struct fmt_reader *r, uint64_t off)
{
    uint8_t buf[4096];

    while (off < r->file_size) {
        size_t n = r->file_size - off < sizeof(buf) ? r->file_size - off : sizeof(buf);
        if (r_pread(r, off, buf, n))
            return 0;
        for (size_t i = 0; i < n; i++)
            if (buf[i])
                return 0;
        off += n;
    }
    return 1;
}

/* No trailer: walk the blocks from the header until the file ends. What
 * ends it early (a partial block, or a zero-filled tail) is truncation; a
 * bad block with more data after it is corruption. */
static int scan_blocks(struct fmt_reader *r)
{
    uint64_t off = FMT_HEADER_SIZE;
    uint32_t seq = 0;
    int rc;

    r->incomplete = 1;
    while (off + FMT_BLOCK_HEADER_SIZE <= r->file_size) {
        uint8_t hb[FMT_BLOCK_HEADER_SIZE];
        struct fmt_block_hdr h;
        const char *why;

        if ((rc = r_pread(r, off, hb, sizeof(hb))))
            return fmt_rerr(r, rc == -ENODATA ? -EPROTO : rc, off, "cannot read: %s",
                            strerror(-rc));
        if (fmt_block_parse(hb, &h, &why)) {
            if (all_zero_from(r, off))
                break;
            return fmt_rerr(r, -EPROTO, off, "%s", why);
        }
        if (h.stored_size > r->file_size - off - FMT_BLOCK_HEADER_SIZE)
            break; /* the last block was cut short */
        if (h.seq != seq)
            return fmt_rerr(r, -EPROTO, off, "block %u out of sequence (expected %u)", h.seq, seq);
        if (h.type == FMT_BLOCK_INDEX)
            break; /* the end was being written when the file was cut */
        if ((rc = fmt_rblock_load(r, off, &h)) || (rc = take_block(r, off, &h)))
            return rc;
        seq++;
        off += FMT_BLOCK_HEADER_SIZE + (uint64_t)h.stored_size;
    }
    return 0;
}

/* With a trailer: the index lists every block; the blocks must tile the
 * file from the header to the index exactly. */
static int read_index(struct fmt_reader *r, uint64_t index_off, uint64_t nr_blocks)
{
    struct fmt_block_hdr h;
    int rc;

    if (index_off < FMT_HEADER_SIZE ||
        index_off > r->file_size - FMT_TRAILER_SIZE - FMT_BLOCK_HEADER_SIZE)
        return fmt_rerr(r, -EPROTO, r->file_size - FMT_TRAILER_SIZE,
                        "trailer points at offset %llu, outside the file",
                        (unsigned long long)index_off);
    if ((rc = fmt_rblock_load(r, index_off, &h)))
        return rc;
    if (h.type != FMT_BLOCK_INDEX)
        return fmt_rerr(r, -EPROTO, index_off, "trailer does not point at an index block");
    if (index_off + FMT_BLOCK_HEADER_SIZE + h.stored_size != r->file_size - FMT_TRAILER_SIZE)
        return fmt_rerr(r, -EPROTO, index_off, "index block does not end at the trailer");
    if (h.seq != nr_blocks)
        return fmt_rerr(r, -EPROTO, index_off, "index block number %u, trailer says %llu", h.seq,
                        (unsigned long long)nr_blocks);

    /* Copy the directory: loading blocks reuses r->raw. */
    struct fmt_buf dir = {0};
    if ((rc = fmt_buf_add_bytes(&dir, r->raw.data, r->raw.len)))
        return fmt_rerr(r, rc, index_off, "out of memory");
    struct fmt_cur c;
    fmt_cur_init(&c, dir.data, dir.len);
    uint64_t n = fmt_cur_varint(&c);
    uint64_t expect_off = FMT_HEADER_SIZE, off = 0;
    if (n != nr_blocks || c.bad)
        rc = fmt_rerr(r, -EPROTO, index_off, "index lists %llu blocks, trailer says %llu",
                      (unsigned long long)n, (unsigned long long)nr_blocks);
    for (uint64_t i = 0; i < n && !rc; i++) {
        uint64_t type = fmt_cur_varint(&c);
        off += fmt_cur_varint(&c);
        uint64_t size = fmt_cur_varint(&c);
        if (c.bad || off != expect_off || size > FMT_BLOCK_MAX_PAYLOAD) {
            rc = fmt_rerr(r, -EPROTO, index_off, "index entry %llu is inconsistent",
                          (unsigned long long)i);
            break;
        }
        uint8_t hb[FMT_BLOCK_HEADER_SIZE];
        const char *why;
        if ((rc = r_pread(r, off, hb, sizeof(hb)))) {
            rc = fmt_rerr(r, rc == -ENODATA ? -EPROTO : rc, off, "cannot read block header");
            break;
        }
        if ((rc = fmt_block_parse(hb, &h, &why))) {
            rc = fmt_rerr(r, rc, off, "%s", why);
            break;
        }
        if (h.type != type || h.stored_size != size || h.seq != i) {
            rc = fmt_rerr(r, -EPROTO, off, "block does not match index entry %llu",
                          (unsigned long long)i);
            break;
        }
        /* Chunks are only located now; their CRC is checked when decoded. */
        if (h.type != FMT_BLOCK_CHUNK && (rc = fmt_rblock_load(r, off, &h)))
            break;
        rc = take_block(r, off, &h);
        expect_off = off + FMT_BLOCK_HEADER_SIZE + size;
    }
    if (!rc && (expect_off != index_off || fmt_cur_left(&c)))
        rc = fmt_rerr(r, -EPROTO, index_off, "index does not cover the file");
    fmt_buf_free(&dir);
    return rc;
}

static int open_trace(struct fmt_reader *r)
{
    uint8_t hdr[FMT_HEADER_SIZE];
    uint64_t features;
    const char *why;
    struct stat st;
    int rc;

    if (fstat(r->fd, &st))
        return fmt_rerr(r, -errno, 0, "%s", strerror(errno));
    if (!S_ISREG(st.st_mode))
        return fmt_rerr(r, -EINVAL, 0, "not a regular file");
    r->file_size = (uint64_t)st.st_size;
    if (r->file_size < FMT_HEADER_SIZE) {
        rc = r->file_size ? r_pread(r, 0, hdr, r->file_size) : 0;
        if (!rc && r->file_size >= FMT_MAGIC_LEN && !memcmp(hdr, FMT_MAGIC, FMT_MAGIC_LEN))
            return fmt_rerr(r, -EPROTO, 0, "truncated inside the file header (%llu bytes)",
                            (unsigned long long)r->file_size);
        return fmt_rerr(r, -EPROTO, 0, "not a memscribe trace (%llu bytes, too short)",
                        (unsigned long long)r->file_size);
    }
    if ((rc = r_pread(r, 0, hdr, sizeof(hdr))))
        return fmt_rerr(r, rc, 0, "cannot read header: %s", strerror(-rc));
    if ((rc = fmt_header_parse(hdr, &r->info, &features, &why)))
        return fmt_rerr(r, rc, 0, "%s", why);
    r->addr_cands = (features & FMT_FEAT_ADDR_CANDS) != 0;
    r->pe = (features & FMT_FEAT_PE_PROCESS) != 0;
    r->v13 = (features & FMT_FEAT_TIME_UNIT) != 0;
    r->tpack = (features & FMT_FEAT_TIME_PACK) != 0;
    r->v15 = (features & FMT_FEAT_FREE_RANKS) != 0;
    r->v17 = (features & FMT_FEAT_REALLOC_PRED) != 0;
    if (r->v17 && !r->v15) /* the codes use 1.5's ring of ended addresses */
        return fmt_rerr(r, -EPROTO, 0, "feature bit REALLOC_PRED without FREE_RANKS");
    r->sampled = (features & FMT_FEAT_SAMPLED) != 0;
    r->pools = (features & FMT_FEAT_POOLS) != 0;
    r->reach_on = (features & FMT_FEAT_REACH) != 0;
    r->totals_on = (features & FMT_FEAT_TOTALS) != 0;
    r->totals_all = r->totals_on && (features & FMT_FEAT_TOTALS_ALL) != 0;
    r->totals_progs = r->totals_all && (features & FMT_FEAT_TOTALS_PROGS) != 0;
    r->agg = (features & FMT_FEAT_AGGREGATE) != 0;
    r->segment = (features & FMT_FEAT_SEGMENT) != 0;
    r->counters = (features & FMT_FEAT_COUNTERS) != 0;
    r->estimates = r->sampled;
    r->layout = !r->addr_cands                    ? FMT_RLAYOUT_ANY
                : !r->v13 && !r->tpack && !r->v15 ? FMT_RLAYOUT_1_1
                : r->v13 && r->tpack && r->v15    ? FMT_RLAYOUT_1_5
                                                  : FMT_RLAYOUT_ANY;
    fmt_rchunk_reset(r);

    uint8_t tr[FMT_TRAILER_SIZE];
    uint64_t index_off = 0, nr_blocks = 0;
    rc = -ENOENT;
    if (r->file_size >= FMT_HEADER_SIZE + FMT_TRAILER_SIZE) {
        if ((rc = r_pread(r, r->file_size - FMT_TRAILER_SIZE, tr, sizeof(tr))))
            return fmt_rerr(r, rc, r->file_size - FMT_TRAILER_SIZE, "cannot read trailer: %s",
                            strerror(-rc));
        rc = fmt_trailer_parse(tr, &index_off, &nr_blocks, &why);
        if (rc == -EPROTO)
            return fmt_rerr(r, rc, r->file_size - FMT_TRAILER_SIZE, "%s", why);
    }
    rc = rc == -ENOENT ? scan_blocks(r) : read_index(r, index_off, nr_blocks);
    if (rc)
        return rc;
    if (r->nr_seen_chunks != r->nr_chunks) {
        if (!r->incomplete)
            return fmt_rerr(r, -EPROTO, r->chunks[r->nr_chunks].c.offset, "chunk %u has no summary",
                            r->nr_chunks);
        r->nr_seen_chunks = r->nr_chunks; /* its DEFS block was lost: drop it */
    }
    /* The rate is what makes the figures of a sampled trace mean anything. */
    if (r->sampled != (r->info.sample_bytes != 0))
        return fmt_rerr(r, -EPROTO, FMT_HEADER_SIZE,
                        r->sampled ? "sampled trace without a sampling rate"
                                   : "sampling rate in an exact trace");
    r->loaded_defs_once = 1; /* later DEFS reads (live deltas) are re-reads */
    /* The module table is the largest of a build's (a thousand processes'
     * libraries, 648 bytes each): no room left from its doubling. */
    if (r->cap_mods > r->nr_mods && r->nr_mods) {
        struct fmt_rmodule *m = realloc(r->mods, (size_t)r->nr_mods * sizeof(*m));
        if (m) {
            r->mods = m;
            r->cap_mods = r->nr_mods;
        }
    }
    r->info.command = r->command;
    r->info.hostname = r->hostname;
    r->info.only = r->only;
    r->info.wine_prefix = r->wine_prefix;
    r->info.wine_dll_dirs = r->wine_dll_dirs;
    return 0;
}

uint64_t fmt_reader_sample_bytes(const struct fmt_reader *r)
{
    return r->info.sample_bytes;
}

int fmt_reader_has_counters(const struct fmt_reader *r)
{
    return r->counters;
}

void fmt_reader_estimates(struct fmt_reader *r, int on)
{
    r->estimates = on && r->sampled;
}

void fmt_reader_verify_summaries(struct fmt_reader *r, int on)
{
    r->verify = on != 0;
    fmt_reader_seek_chunk(r, 0); /* the decoder with or without the check */
}

int fmt_reader_open_fd(struct fmt_reader **out, int fd, const char *name, char *err,
                       size_t err_size)
{
    return fmt_reader_open_fd_flags(out, fd, name, 0, err, err_size);
}

int fmt_reader_open_fd_flags(struct fmt_reader **out, int fd, const char *name, unsigned flags,
                             char *err, size_t err_size)
{
    struct fmt_reader *r = calloc(1, sizeof(*r));
    int rc;

    *out = NULL;
    if (!r || !(r->name = strdup(name ? name : "(trace)")) || !(r->dctx = ZSTD_createDCtx())) {
        if (err && err_size)
            snprintf(err, err_size, "%s: out of memory", name ? name : "(trace)");
        fmt_reader_close(r);
        return -ENOMEM;
    }
    r->fd = fd;
    r->stacks_later = (flags & FMT_OPEN_STACKS_LATER) != 0;
    rc = open_trace(r);
    if (rc) {
        if (err && err_size)
            snprintf(err, err_size, "%s", r->err);
        fmt_reader_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

int fmt_reader_open(struct fmt_reader **out, const char *path, char *err, size_t err_size)
{
    return fmt_reader_open_flags(out, path, 0, err, err_size);
}

int fmt_reader_open_flags(struct fmt_reader **out, const char *path, unsigned flags, char *err,
                          size_t err_size)
{
    /* O_NONBLOCK: opening a FIFO would wait for a writer; this way the
     * open returns and open_trace() refuses what is not a regular file.
     * It changes nothing for reads of a regular file. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

    *out = NULL;
    if (fd < 0) {
        int e = errno;
        if (err && err_size)
            snprintf(err, err_size, "%s: %s", path, strerror(e));
        return -e;
    }
    int rc = fmt_reader_open_fd_flags(out, fd, path, flags, err, err_size);
    if (rc) {
        close(fd);
        return rc;
    }
    (*out)->own_fd = 1;
    return 0;
}

void fmt_reader_close(struct fmt_reader *r)
{
    if (!r)
        return;
    if (r->own_fd)
        close(r->fd);
    free(r->name);
    ZSTD_freeDCtx(r->dctx);
    free(r->command);
    free(r->hostname);
    free(r->only);
    free(r->wine_prefix);
    free(r->wine_dll_dirs);
    fmt_rnodes_free(r);
    free(r->stkcode);
    fmt_wdelta_destroy(&r->vdeltas);
    for (uint32_t i = 0; i < r->nr_ctxs; i++)
        free(r->ctxs[i].name);
    free(r->ctxs);
    free(r->threads);
    for (uint32_t i = 0; i < r->nr_images; i++) {
        free(r->images[i].exe);
        free(r->images[i].argv);
    }
    free(r->images);
    for (uint32_t i = 0; i < r->nr_mods; i++)
        free(r->mods[i].path);
    free(r->mods);
    for (uint32_t i = 0; i < r->nr_pools; i++)
        free(r->pools_tab[i].name);
    free(r->pools_tab);
    for (uint32_t i = 0; i < r->nr_reach; i++) {
        free(r->reach[i].reason);
        free(r->reach[i].serials);
        free(r->reach[i].classes);
    }
    free(r->reach);
    free(r->chunks);
    fmt_buf_free(&r->payload);
    fmt_buf_free(&r->raw);
    for (int i = 0; i < FMT_NR_COLUMNS; i++)
        fmt_buf_free(&r->col[i]);
    free(r->ctx_slot);
    for (uint32_t i = 0; i < r->cap_slots; i++) {
        free(r->slots[i].started.v);
        fmt_rank_free(&r->slots[i].pred.rank);
    }
    free(r->slots);
    free(r->blks);
    free(r);
}

const char *fmt_reader_error(const struct fmt_reader *r)
{
    return r->err;
}

const struct fmt_trace_info *fmt_reader_info(const struct fmt_reader *r)
{
    return &r->info;
}

int fmt_reader_incomplete(const struct fmt_reader *r)
{
    return r->incomplete;
}

int fmt_reader_pe(const struct fmt_reader *r)
{
    return r->pe;
}

int fmt_reader_pools(const struct fmt_reader *r)
{
    return r->pools;
}

_Static_assert(offsetof(struct fmt_rreach, ri) == 0, "a fmt_reach_info is its record's start");

int fmt_reader_reach_on(const struct fmt_reader *r)
{
    return r->reach_on;
}

uint32_t fmt_reader_nr_reach(const struct fmt_reader *r)
{
    return r->nr_reach;
}

const struct fmt_reach_info *fmt_reader_reach(const struct fmt_reader *r, uint32_t i)
{
    return i < r->nr_reach ? &r->reach[i].ri : NULL;
}

const struct fmt_reach_info *fmt_reader_find_reach(const struct fmt_reader *r, uint32_t image)
{
    if (image < r->nr_images) {
        uint32_t last = r->images[image].last_reach;
        return last ? &r->reach[last - 1].ri : NULL;
    }
    for (uint32_t i = r->nr_reach; i-- > 0;)
        if (r->reach[i].ri.image == image)
            return &r->reach[i].ri;
    return NULL;
}

unsigned fmt_reader_reach_class(const struct fmt_reader *r, const struct fmt_reach_info *ri,
                                uint64_t serial)
{
    const struct fmt_rreach *e = (const struct fmt_rreach *)(const void *)ri;
    uint64_t lo = 0, hi;

    (void)r;
    if (!ri)
        return FMT_REACH_UNKNOWN;
    hi = e->ri.nr_blocks;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;

        if (e->serials[mid] < serial)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < e->ri.nr_blocks && e->serials[lo] == serial ? e->classes[lo] : FMT_REACH_UNKNOWN;
}

unsigned fmt_reader_reach_block(const struct fmt_reader *r, const struct fmt_reach_info *ri,
                                uint64_t i, uint64_t *serial)
{
    const struct fmt_rreach *e = (const struct fmt_rreach *)(const void *)ri;

    (void)r;
    if (!ri || i >= ri->nr_blocks)
        return FMT_REACH_UNKNOWN;
    *serial = e->serials[i];
    return e->classes[i];
}

const char *fmt_reach_class_name(unsigned cls)
{
    static const char *const names[FMT_NR_REACH] = {"unknown", "reachable", "possible", "indirect",
                                                    "definite"};

    return cls < FMT_NR_REACH ? names[cls] : "unknown";
}

uint32_t fmt_reader_nr_pools(const struct fmt_reader *r)
{
    return r->nr_pools;
}

const struct fmt_pool_info *fmt_reader_pool(const struct fmt_reader *r, uint32_t i)
{
    return i < r->nr_pools ? &r->pools_tab[i].pi : NULL;
}

const struct fmt_pool_info *fmt_reader_find_pool(const struct fmt_reader *r, uint32_t image,
                                                 uint64_t handle)
{
    for (uint32_t i = r->nr_pools; i-- > 0;)
        if (r->pools_tab[i].pi.image == image && r->pools_tab[i].pi.handle == handle)
            return &r->pools_tab[i].pi;
    return NULL;
}

void fmt_reader_counts(const struct fmt_reader *r, struct fmt_trace_counts *c)
{
    memset(c, 0, sizeof(*c));
    for (uint32_t k = 0; k < r->nr_chunks; k++) {
        const struct fmt_chunk_info *ci = &r->chunks[k].c;
        c->nr_events += ci->nr_events;
        c->nr_heap_allocs += ci->nr_heap_allocs;
        c->nr_serials += ci->nr_serials;
        c->nr_dropped += ci->nr_dropped;
        if (k == 0 || ci->first_ts_ns < c->first_ts_ns)
            c->first_ts_ns = ci->first_ts_ns;
        if (ci->last_ts_ns > c->last_ts_ns)
            c->last_ts_ns = ci->last_ts_ns;
    }
    c->nr_skipped = r->nr_skipped;
    c->nr_chunks = r->nr_chunks;
    c->nr_stacks = r->nr_nodes;
    c->nr_images = r->nr_images;
    c->nr_threads = r->nr_threads;
    c->nr_modules = r->nr_mods;
}

uint32_t fmt_reader_nr_images(const struct fmt_reader *r)
{
    return r->nr_images;
}

const struct fmt_image_info *fmt_reader_image(const struct fmt_reader *r, uint32_t image)
{
    return image < r->nr_images ? &r->images[image].i : NULL;
}

uint32_t fmt_reader_nr_threads(const struct fmt_reader *r)
{
    return r->nr_threads;
}

const struct fmt_thread_info *fmt_reader_thread(const struct fmt_reader *r, uint32_t i)
{
    return i < r->nr_threads ? &r->ctxs[r->threads[i] - 1].t : NULL;
}

uint32_t fmt_reader_nr_modules(const struct fmt_reader *r)
{
    return r->nr_mods;
}

const struct fmt_module_info *fmt_reader_module(const struct fmt_reader *r, uint32_t i)
{
    return i < r->nr_mods ? &r->mods[i].mi : NULL;
}

const struct fmt_module_info *fmt_reader_find_module(const struct fmt_reader *r, uint32_t image,
                                                     uint64_t addr)
{
    for (uint32_t i = r->nr_mods; i-- > 0;) {
        const struct fmt_module_info *mi = &r->mods[i].mi;
        if (mi->image != image)
            continue;
        for (uint32_t s = 0; s < mi->m.nr_segments; s++) {
            uint64_t lo = mi->m.base + mi->m.segments[s].vaddr;
            if (addr >= lo && addr - lo < mi->m.segments[s].memsz)
                return mi;
        }
    }
    return NULL;
}

/* Node id, decoded if its record was left for later: decoding is the
 * reader's cache of its stack definitions, so a const reader may fill it
 * (one reader serves one thread). NULL with *rc set when it cannot be had. */
static const struct fmt_rnode *node_of(const struct fmt_reader *r, uint32_t id, int *rc)
{
    const struct fmt_rnode *n = fmt_rnode_get(r, id);

    *rc = 0;
    if (n)
        return n;
    if (!id || id > r->nr_nodes) {
        *rc = -EINVAL;
        return NULL;
    }
    if ((*rc = fmt_rnodes_need((struct fmt_reader *)r, id)))
        return NULL;
    return fmt_rnode_get(r, id);
}

int fmt_reader_stack(const struct fmt_reader *r, uint32_t id, uint32_t *image, uint64_t *frames,
                     uint32_t max)
{
    uint32_t depth = 0;
    int rc;
    const struct fmt_rnode *node = node_of(r, id, &rc);

    if (!node)
        return rc;
    if (image)
        *image = FMT_RNODE_IMAGE(node);
    /* A window node's stack is the first `limit` frames of its chain. */
    uint32_t limit = FMT_RNODE_LIMIT(node);
    if (!limit)
        limit = UINT32_MAX;
    /* Parents have smaller ids (the reader checked) of the same image, so
     * this ends, on nodes decoded and not forgotten with the leaf's. */
    for (const struct fmt_rnode *n = node; n && depth < limit;
         n = n->parent ? fmt_rnode_get(r, n->parent) : NULL) {
        if (!n->parent && !n->addr)
            break; /* the root of an empty stack */
        if (depth < max)
            frames[depth] = n->addr;
        depth++;
    }
    return (int)depth;
}

int fmt_reader_stack_node(const struct fmt_reader *r, uint32_t id, uint32_t *parent, uint64_t *addr,
                          uint32_t *image)
{
    int rc;
    const struct fmt_rnode *n = node_of(r, id, &rc);

    if (!n)
        return rc;
    if (parent)
        *parent = n->parent;
    if (addr)
        *addr = n->addr;
    if (image)
        *image = FMT_RNODE_IMAGE(n);
    return 0;
}

uint32_t fmt_reader_nr_chunks(const struct fmt_reader *r)
{
    return r->nr_chunks;
}

const struct fmt_chunk_info *fmt_reader_chunk(const struct fmt_reader *r, uint32_t k)
{
    return k < r->nr_chunks ? &r->chunks[k].c : NULL;
}

uint32_t fmt_reader_find_chunk(const struct fmt_reader *r, uint64_t ts_ns)
{
    uint32_t lo = 0, hi = r->nr_chunks;

    /* Chunks are in time order when events were; a binary search over
     * last_ts finds the first that reaches ts_ns. */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (r->chunks[mid].c.last_ts_ns < ts_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int fmt_reader_seek_range(struct fmt_reader *r, uint32_t k, uint32_t end)
{
    if (k > r->nr_chunks || end > r->nr_chunks)
        return -EINVAL;
    fmt_rchunk_reset(r);
    r->next_chunk = k;
    r->end_chunk = end;
    return 0;
}

int fmt_reader_seek_chunk(struct fmt_reader *r, uint32_t k)
{
    return fmt_reader_seek_range(r, k, 0);
}

int fmt_reader_seek_time(struct fmt_reader *r, uint64_t ts_ns)
{
    return fmt_reader_seek_chunk(r, fmt_reader_find_chunk(r, ts_ns));
}

int fmt_reader_chunk_delta(struct fmt_reader *r, uint32_t k, fmt_stack_live_fn *fn, void *arg)
{
    if (k >= r->nr_chunks)
        return -EINVAL;
    return fmt_rdefs_chunk_delta(r, k, fn, arg);
}

struct live_sum {
    int64_t *bytes;
    int64_t *blocks;
};

static void live_add(void *arg, uint32_t stack, int64_t bytes, int64_t blocks)
{
    struct live_sum *s = arg;

    s->bytes[stack] += bytes;
    s->blocks[stack] += blocks;
}

int fmt_reader_live_at_chunk(struct fmt_reader *r, uint32_t k, fmt_stack_live_fn *fn, void *arg)
{
    struct live_sum s;
    int rc = 0;

    if (k > r->nr_chunks)
        return -EINVAL;
    s.bytes = calloc((size_t)r->nr_nodes + 1, sizeof(*s.bytes));
    s.blocks = calloc((size_t)r->nr_nodes + 1, sizeof(*s.blocks));
    if (!s.bytes || !s.blocks)
        rc = -ENOMEM;
    for (uint32_t j = 0; j < k && !rc; j++)
        rc = fmt_rdefs_chunk_delta(r, j, live_add, &s);
    for (uint32_t id = 0; id <= r->nr_nodes && !rc; id++)
        if (s.bytes[id] || s.blocks[id])
            fn(arg, id, s.bytes[id], s.blocks[id]);
    free(s.bytes);
    free(s.blocks);
    return rc;
}
