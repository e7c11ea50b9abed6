/* SPDX-License-Identifier: MIT */
/* The fixed-size framing of a trace: file header, block headers, trailer.
 * Encoding and checking live together so writer and reader agree. */
#ifndef FMT_BLOCK_INTERNAL_H
#define FMT_BLOCK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "format/fmt_layout_internal.h"
#include "memscribe/event.h"

struct fmt_block_hdr {
    uint16_t type;
    uint16_t flags;
    uint32_t stored_size; /* payload bytes in the file */
    uint32_t raw_size;    /* payload bytes after decompression */
    uint32_t seq;         /* block number, from 0 */
    uint32_t crc;
};

/* Fill the 24-byte header for payload; the CRC covers the header's first
 * 20 bytes and the payload. */
void fmt_block_encode(uint8_t out[FMT_BLOCK_HEADER_SIZE], const struct fmt_block_hdr *h,
                      const void *payload);

/* Parse a block header without trusting it. Returns 0, or -EPROTO with
 * *why naming the problem (bad magic, impossible sizes). */
int fmt_block_parse(const uint8_t in[FMT_BLOCK_HEADER_SIZE], struct fmt_block_hdr *h,
                    const char **why);

/* Does the header's CRC match this payload? */
int fmt_block_crc_ok(const uint8_t in[FMT_BLOCK_HEADER_SIZE], const void *payload, size_t len);

/* The 64-byte file header. */
void fmt_header_encode(uint8_t out[FMT_HEADER_SIZE], const struct fmt_trace_info *info,
                       uint64_t features);
/* Returns 0 or -EPROTO with *why set; fills version, clocks and pid. */
int fmt_header_parse(const uint8_t in[FMT_HEADER_SIZE], struct fmt_trace_info *info,
                     uint64_t *features, const char **why);

/* The 32-byte trailer: where the index block starts. */
void fmt_trailer_encode(uint8_t out[FMT_TRAILER_SIZE], uint64_t index_off, uint64_t nr_blocks);
/* Returns 0, -ENOENT when there is no trailer (magic absent: a truncated
 * trace), or -EPROTO with *why (magic present but damaged). */
int fmt_trailer_parse(const uint8_t in[FMT_TRAILER_SIZE], uint64_t *index_off, uint64_t *nr_blocks,
                      const char **why);

#endif
