/* SPDX-License-Identifier: MIT */
/* Block output for the writer: frame parts as one block, checksum them,
 * write them with writev, and remember each block for the index. */
#ifndef FMT_WOUT_INTERNAL_H
#define FMT_WOUT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "format/fmt_buf_internal.h"
#include "format/fmt_layout_internal.h"

struct fmt_wout {
    int fd;
    int err;            /* sticky -errno after a failed write */
    uint64_t off;       /* where the next block goes */
    uint32_t seq;       /* number of the next block */
    struct fmt_buf dir; /* index entries: type, offset delta, size */
    uint64_t dir_prev_off;
};

/* Write raw bytes at the current offset (file header, trailer). */
int fmt_wout_raw(struct fmt_wout *o, const void *p, size_t len);

/* Parts of one block at most: a CHUNK block's header and its columns. */
#define FMT_WOUT_MAX_PARTS (FMT_NR_COLUMNS + 1)

/* Write one block of type whose payload is the concatenation of parts
 * (at most FMT_WOUT_MAX_PARTS). raw_size is the payload size after decompression (equal to
 * the stored size unless flags has FMT_BLOCKF_ZSTD). Returns 0 or -errno. */
int fmt_wout_block(struct fmt_wout *o, uint16_t type, uint16_t flags, uint32_t raw_size,
                   const struct iovec *parts, int nr_parts);

#endif
