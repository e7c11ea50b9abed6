/* SPDX-License-Identifier: MIT */
/* zstd or zlib for chunk columns and definition blocks (fmt_zc_internal.h). */
#include "format/fmt_zc_internal.h"

#include <errno.h>
#include <zlib.h>
#ifndef FMT_NO_ZSTD
/* for ZSTD_c_useRowMatchFinder (fmt_zc_compress_deep) */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#endif

int fmt_zc_init(struct fmt_zc *z, int coding, int level)
{
    z->coding = coding;
    z->level = level;
    z->cctx = NULL;
    if (coding == FMT_ZC_ZLIB)
        return 0;
#ifdef FMT_NO_ZSTD
    return -ENOTSUP;
#else
    return (z->cctx = ZSTD_createCCtx()) ? 0 : -ENOMEM;
#endif
}

void fmt_zc_free(struct fmt_zc *z)
{
#ifndef FMT_NO_ZSTD
    ZSTD_freeCCtx(z->cctx);
#endif
    z->cctx = NULL;
}

size_t fmt_zc_bound(const struct fmt_zc *z, size_t n)
{
#ifndef FMT_NO_ZSTD
    if (z->coding == FMT_ZC_ZSTD)
        return ZSTD_compressBound(n);
#endif
    return compressBound((uLong)n);
}

size_t fmt_zc_compress(struct fmt_zc *z, void *dst, size_t cap, const void *src, size_t n)
{
#ifndef FMT_NO_ZSTD
    if (z->coding == FMT_ZC_ZSTD) {
        size_t k = ZSTD_compressCCtx(z->cctx, dst, cap, src, n, z->level);
        return ZSTD_isError(k) ? 0 : k;
    }
#endif
    uLongf k = (uLongf)cap;
    return compress2(dst, &k, src, (uLong)n, Z_DEFAULT_COMPRESSION) == Z_OK ? (size_t)k : 0;
}

/* Level 5's window and search for inputs of 128-256 KB (zstd 1.5's tables:
 * ZSTD_getCParams(5, 256 << 10, 0)): a 256 KiB window, a search of 32
 * candidates, greedy. For larger inputs zstd takes a larger window but a
 * search of 8, which finds fewer of a column's repeats: real programs'
 * columns (sizes, addresses, stacks of 0.3-4 MB in chunks of 2^18-2^20 events)
 * came out 3-8 % smaller with these (bench/notes/trace-size.md, "Chunks of
 * 2^19 events and a deeper search pinned to 256 KB"). Set by
 * name, not taken from ZSTD_getCParams, which zstd keeps out of its stable
 * API; zstd shrinks the window and tables itself for smaller inputs.
 *
 * The search walks hash chains, not zstd's row-based match finder, which
 * zstd picks by itself for a window over 16 KiB: on the columns of a
 * program that repeats itself (sqlite3's compress 28 to 1) the row finder
 * took twice as long, with tables of 2^15 or 2^18 alike, for traces no
 * smaller (bench/notes/trace-size.md, "zstd's hash chains for the deeper
 * search"). The chains' tables (hash 2^15,
 * chain 2^16: 384 KiB) stay in a core's L2 cache. Matches of 6 bytes or
 * more, not level 5's 5: as fast here, traces ~1 % smaller.
 * ZSTD_c_useRowMatchFinder is zstd's experimental API (the same value
 * since 1.5.0); a libzstd that refuses it keeps its row finder: slower,
 * the same frames. */
size_t fmt_zc_compress_deep(struct fmt_zc *z, void *dst, size_t cap, const void *src, size_t n)
{
#ifndef FMT_NO_ZSTD
    static const struct {
        ZSTD_cParameter param;
        int value;
    } deep[] = {
        {ZSTD_c_compressionLevel, FMT_ZC_DEEP_LEVEL},
        {ZSTD_c_windowLog, 18},
        {ZSTD_c_chainLog, 16},
        {ZSTD_c_hashLog, 15},
        {ZSTD_c_searchLog, 5},
        {ZSTD_c_minMatch, 6},
        {ZSTD_c_targetLength, 2},
        {ZSTD_c_strategy, ZSTD_greedy},
    };

    if (z->coding == FMT_ZC_ZSTD) {
        ZSTD_CCtx_reset(z->cctx, ZSTD_reset_session_and_parameters);
        for (size_t i = 0; i < sizeof(deep) / sizeof(deep[0]); i++)
            if (ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, deep[i].param, deep[i].value)))
                return 0;
        (void)ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_useRowMatchFinder, ZSTD_ps_disable);
        size_t k = ZSTD_compress2(z->cctx, dst, cap, src, n);
        return ZSTD_isError(k) ? 0 : k;
    }
#endif
    return fmt_zc_compress(z, dst, cap, src, n);
}

int fmt_zc_inflate(void *dst, size_t raw, const void *src, size_t stored)
{
    uLongf k = (uLongf)raw;
    uLong used = (uLong)stored;

    /* uncompress2 also says how much input it used: all of it, or corrupt */
    if (uncompress2(dst, &k, src, &used) != Z_OK || k != raw || used != stored)
        return -EPROTO;
    return 0;
}
