/* SPDX-License-Identifier: MIT */
/* zstd or zlib for chunk columns and definition blocks (fmt_zc_internal.h). */
#include "format/fmt_zc_internal.h"

#include <errno.h>
#include <zlib.h>
#ifndef FMT_NO_ZSTD
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

int fmt_zc_inflate(void *dst, size_t raw, const void *src, size_t stored)
{
    uLongf k = (uLongf)raw;
    uLong used = (uLong)stored;

    /* uncompress2 also says how much input it used: all of it, or corrupt */
    if (uncompress2(dst, &k, src, &used) != Z_OK || k != raw || used != stored)
        return -EPROTO;
    return 0;
}
