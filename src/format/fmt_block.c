/* SPDX-License-Identifier: MIT */
/* File header, block header and trailer: encoding and validation. */
#include "format/fmt_block_internal.h"
#include "memscribe/trace.h"

#include <errno.h>
#include <string.h>

#include "format/fmt_crc_internal.h"

void fmt_block_encode(uint8_t out[FMT_BLOCK_HEADER_SIZE], const struct fmt_block_hdr *h,
                      const void *payload)
{
    fmt_put_le32(out, FMT_BLOCK_MAGIC);
    fmt_put_le16(out + 4, h->type);
    fmt_put_le16(out + 6, h->flags);
    fmt_put_le32(out + 8, h->stored_size);
    fmt_put_le32(out + 12, h->raw_size);
    fmt_put_le32(out + 16, h->seq);
    uint32_t crc = fmt_crc32c(0, out, 20);
    crc = fmt_crc32c(crc, payload, h->stored_size);
    fmt_put_le32(out + 20, crc);
}

int fmt_block_parse(const uint8_t in[FMT_BLOCK_HEADER_SIZE], struct fmt_block_hdr *h,
                    const char **why)
{
    if (fmt_get_le32(in) != FMT_BLOCK_MAGIC) {
        *why = "bad block magic";
        return -EPROTO;
    }
    h->type = fmt_get_le16(in + 4);
    h->flags = fmt_get_le16(in + 6);
    h->stored_size = fmt_get_le32(in + 8);
    h->raw_size = fmt_get_le32(in + 12);
    h->seq = fmt_get_le32(in + 16);
    h->crc = fmt_get_le32(in + 20);
    if (h->stored_size > FMT_BLOCK_MAX_PAYLOAD || h->raw_size > FMT_BLOCK_MAX_PAYLOAD) {
        *why = "impossible block size";
        return -EPROTO;
    }
    if (!(h->flags & (FMT_BLOCKF_ZSTD | FMT_BLOCKF_ZLIB)) && h->raw_size != h->stored_size) {
        *why = "impossible block size (stored and raw differ, not compressed)";
        return -EPROTO;
    }
    return 0;
}

/* Fuzzing builds skip checksums (as zstd's and libpng's do), so that
 * mutated inputs reach the decoders behind them. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define CRC_MATCH(a, b) ((void)(a), (void)(b), 1)
#else
#define CRC_MATCH(a, b) ((a) == (b))
#endif

int fmt_block_crc_ok(const uint8_t in[FMT_BLOCK_HEADER_SIZE], const void *payload, size_t len)
{
    uint32_t crc = fmt_crc32c(0, in, 20);

    crc = fmt_crc32c(crc, payload, len);
    return CRC_MATCH(crc, fmt_get_le32(in + 20));
}

void fmt_header_encode(uint8_t out[FMT_HEADER_SIZE], const struct fmt_trace_info *info,
                       uint64_t features)
{
    memset(out, 0, FMT_HEADER_SIZE);
    memcpy(out, FMT_MAGIC, FMT_MAGIC_LEN);
    fmt_put_le16(out + 8, FMT_VERSION_MAJOR);
    /* 1.2 only says something for PE traces, 1.3 for traces with a time
     * unit or sampled ones, 1.4 for traces with packed times or pools, 1.5
     * with recent addresses and ranked references, 1.6 with reachability
     * classes at exit (an optional bit: readers before it read the file), 1.7
     * with predicted realloc addresses, 1.8 with aggregated stretches, 1.9
     * --keep-last's segments, 1.10 with chunk totals (optional), 1.11 with
     * their all-processes part, 1.12 with their programs' parts (both
     * optional), 1.13 with a sampled trace's exact counters: Linux traces
     * in nanoseconds stay 1.1 files. */
    fmt_put_le16(out + 10, (features & FMT_FEAT_COUNTERS)                         ? 13
                           : (features & FMT_FEAT_TOTALS_PROGS)                   ? 12
                           : (features & FMT_FEAT_TOTALS_ALL)                     ? 11
                           : (features & FMT_FEAT_TOTALS)                         ? 10
                           : (features & FMT_FEAT_SEGMENT)                        ? 9
                           : (features & FMT_FEAT_AGGREGATE)                      ? 8
                           : (features & FMT_FEAT_REALLOC_PRED)                   ? 7
                           : (features & FMT_FEAT_REACH)                          ? 6
                           : (features & FMT_FEAT_FREE_RANKS)                     ? 5
                           : (features & (FMT_FEAT_TIME_PACK | FMT_FEAT_POOLS))   ? 4
                           : (features & (FMT_FEAT_TIME_UNIT | FMT_FEAT_SAMPLED)) ? 3
                           : (features & FMT_FEAT_PE_PROCESS)                     ? 2
                                                              : FMT_VERSION_MINOR);
    fmt_put_le32(out + 12, FMT_HEADER_SIZE);
    fmt_put_le64(out + 16, features);
    fmt_put_le64(out + 24, info->start_realtime_ns);
    fmt_put_le64(out + 32, info->start_monotonic_ns);
    fmt_put_le32(out + 40, info->recorder_pid);
    if (features & FMT_FEAT_TIME_UNIT)
        fmt_put_le32(out + FMT_HEADER_TIME_UNIT, info->time_unit_ns);
    fmt_put_le32(out + 60, fmt_crc32c(0, out, 60));
}

void fmt_versions_get(struct fmt_versions *v)
{
    v->major = FMT_VERSION_MAJOR;
    v->read_minor_min = 0;
    v->read_minor_max = FMT_VERSION_MINOR_NEWEST;
    v->write_minor_min = FMT_VERSION_MINOR;
    v->write_minor_max = FMT_VERSION_MINOR_NEWEST;
}

int fmt_header_parse(const uint8_t in[FMT_HEADER_SIZE], struct fmt_trace_info *info,
                     uint64_t *features, const char **why)
{
    if (memcmp(in, FMT_MAGIC, FMT_MAGIC_LEN)) {
        *why = "not a memscribe trace (bad magic)";
        return -EPROTO;
    }
    if (!CRC_MATCH(fmt_get_le32(in + 60), fmt_crc32c(0, in, 60))) {
        *why = "bad header CRC";
        return -EPROTO;
    }
    info->version_major = fmt_get_le16(in + 8);
    info->version_minor = fmt_get_le16(in + 10);
    if (info->version_major != FMT_VERSION_MAJOR) {
        *why = "unsupported major version";
        return -EPROTO;
    }
    if (fmt_get_le32(in + 12) != FMT_HEADER_SIZE) {
        *why = "bad header size";
        return -EPROTO;
    }
    *features = fmt_get_le64(in + 16);
    if (*features & FMT_FEAT_REQUIRED_MASK & ~(uint64_t)FMT_FEAT_KNOWN) {
        *why = "unsupported required feature bits";
        return -EPROTO;
    }
    info->start_realtime_ns = fmt_get_le64(in + 24);
    info->start_monotonic_ns = fmt_get_le64(in + 32);
    info->recorder_pid = fmt_get_le32(in + 40);
    info->time_unit_ns = 1;
    if (*features & FMT_FEAT_TIME_UNIT) {
        info->time_unit_ns = fmt_get_le32(in + FMT_HEADER_TIME_UNIT);
        if (info->time_unit_ns < 1 || info->time_unit_ns > FMT_MAX_TIME_UNIT) {
            *why = "bad time unit in the header";
            return -EPROTO;
        }
    }
    return 0;
}

void fmt_trailer_encode(uint8_t out[FMT_TRAILER_SIZE], uint64_t index_off, uint64_t nr_blocks)
{
    memset(out, 0, FMT_TRAILER_SIZE);
    memcpy(out, FMT_TRAILER_MAGIC, 8);
    fmt_put_le64(out + 8, index_off);
    fmt_put_le64(out + 16, nr_blocks);
    fmt_put_le32(out + 28, fmt_crc32c(0, out, 28));
}

int fmt_trailer_parse(const uint8_t in[FMT_TRAILER_SIZE], uint64_t *index_off, uint64_t *nr_blocks,
                      const char **why)
{
    if (memcmp(in, FMT_TRAILER_MAGIC, 8))
        return -ENOENT;
    if (!CRC_MATCH(fmt_get_le32(in + 28), fmt_crc32c(0, in, 28))) {
        *why = "bad trailer CRC";
        return -EPROTO;
    }
    *index_off = fmt_get_le64(in + 8);
    *nr_blocks = fmt_get_le64(in + 16);
    return 0;
}
