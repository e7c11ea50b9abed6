/* SPDX-License-Identifier: MIT */
/* Compressing chunk columns and definition blocks (docs/format-blocks.md,
 * "Chunk coding"): zstd, as every Linux writer does, or zlib (format 1.2:
 * the Windows launcher, cross-built with mingw-w64, for which Debian has
 * zlib but no zstd). Built with FMT_NO_ZSTD (the mingw build), zlib only.
 * Readers decode both. */
#ifndef FMT_ZC_INTERNAL_H
#define FMT_ZC_INTERNAL_H

#include <stddef.h>

#include "format/fmt_layout_internal.h"

enum fmt_zc_coding { FMT_ZC_ZSTD = 0, FMT_ZC_ZLIB = 1 };

struct fmt_zc {
    int coding; /* enum fmt_zc_coding */
    int level;  /* zstd level; zlib uses its default */
    void *cctx; /* zstd's context */
};

/* Returns 0, -ENOMEM, or -ENOTSUP for zstd in a build without it. */
int fmt_zc_init(struct fmt_zc *z, int coding, int level);
void fmt_zc_free(struct fmt_zc *z);
/* The most bytes n bytes can compress to. */
size_t fmt_zc_bound(const struct fmt_zc *z, size_t n);
/* Compress; the compressed size, or 0 on failure. */
size_t fmt_zc_compress(struct fmt_zc *z, void *dst, size_t cap, const void *src, size_t n);

/* The deeper search a writer tries on columns with repeats far apart:
 * zstd's level FMT_ZC_DEEP_LEVEL with the window and search zstd's tables
 * give it for an input of 256 KB, whatever the column's size, on hash
 * chains with small tables and matches of 6 bytes (fmt_zc.c says why).
 * zstd only; a zlib context compresses as fmt_zc_compress. */
#define FMT_ZC_DEEP_LEVEL 5
size_t fmt_zc_compress_deep(struct fmt_zc *z, void *dst, size_t cap, const void *src, size_t n);

/* How a compressed column and a compressed block are marked. */
static inline unsigned fmt_zc_col_enc(const struct fmt_zc *z)
{
    return z->coding == FMT_ZC_ZLIB ? FMT_COL_ENC_ZLIB : FMT_COL_ENC_ZSTD;
}
static inline unsigned fmt_zc_block_flag(const struct fmt_zc *z)
{
    return z->coding == FMT_ZC_ZLIB ? FMT_BLOCKF_ZLIB : FMT_BLOCKF_ZSTD;
}

/* Readers: a zlib stream that must inflate to exactly raw bytes. Returns 0
 * or -EPROTO. */
int fmt_zc_inflate(void *dst, size_t raw, const void *src, size_t stored);

#endif
