/* SPDX-License-Identifier: MIT */
/* On-disk constants of the trace file: the numbers docs/format.md fixes.
 * Writer and reader both take them from here, so they cannot drift. */
#ifndef FMT_LAYOUT_INTERNAL_H
#define FMT_LAYOUT_INTERNAL_H

#include <stdint.h>
#include <string.h>

#define FMT_VERSION_MAJOR 1
#define FMT_VERSION_MINOR 1
/* The newest minor version fmt_header_encode writes (chunk totals, 1.10);
 * a format bump raises it, with its golden file (tests/golden/v1_N*.mscr,
 * which the version test holds `memscribe --version` against). */
#define FMT_VERSION_MINOR_NEWEST 13

/* File header: 64 bytes at offset 0. The magic starts with a non-ASCII
 * byte and holds \r\n and ^Z, so text-mode mangling is detected (as PNG). */
#define FMT_MAGIC "\x89MSCR\r\n\x1a"
#define FMT_MAGIC_LEN 8
#define FMT_HEADER_SIZE 64

/* Feature bits: the low 32 are required (a reader refuses a file with a
 * required bit it does not know), the high 32 optional (ignored). */
#define FMT_FEAT_ZSTD_COLUMNS 0x1u
#define FMT_FEAT_STACK_CODES 0x2u    /* 1.1: stack nodes in STACK_CODES records */
#define FMT_FEAT_ADDR_CANDS 0x4u     /* 1.1: heap addresses may name a freed one */
#define FMT_FEAT_PE_PROCESS 0x8u     /* 1.2: Windows kinds and heap handles (docs/windows.md) */
#define FMT_FEAT_TIME_UNIT 0x10u     /* 1.3: a time unit; REF split; facts in columns */
#define FMT_FEAT_SAMPLED 0x20u       /* 1.3: heap blocks are a sample (META SAMPLE_BYTES) */
#define FMT_FEAT_TIME_PACK 0x40u     /* 1.4: time deltas packed four to a byte */
#define FMT_FEAT_POOLS 0x80u         /* 1.4: the program's own pools are heaps (FMT_EVF_POOL) */
#define FMT_FEAT_FREE_RANKS 0x100u   /* 1.5: addresses of recent frees, references by rank */
#define FMT_FEAT_REALLOC_PRED 0x200u /* 1.7: realloc addresses predicted; class tops */
#define FMT_FEAT_AGGREGATE 0x400u    /* 1.8: aggregated stretches (docs/aggregate.md) */
#define FMT_FEAT_SEGMENT 0x800u      /* 1.9: a --keep-last segment (META SEGMENT) */
#define FMT_FEAT_COUNTERS 0x1000u    /* 1.13: a sampled trace's exact counters (FMT_EV_COUNTER) */
#define FMT_FEAT_REQUIRED_MASK 0xffffffffull
/* Optional (a reader that does not know it reads the trace as before): the
 * recorder scanned each image at its exit for memcheck's reachability
 * classes; REACH records say what it found (1.6). */
#define FMT_FEAT_REACH (1ull << 32)
/* 1.10: every chunk's DEFS block has a TOTALS record (optional) */
#define FMT_FEAT_TOTALS (1ull << 33)
/* 1.11: each TOTALS record ends with the all-processes part (optional: a
 * 1.10 reader reads the record as before and stops before it) */
#define FMT_FEAT_TOTALS_ALL (1ull << 34)
/* 1.12: after it, the programs' parts (optional, with TOTALS_ALL: a 1.11
 * reader stops before them) */
#define FMT_FEAT_TOTALS_PROGS (1ull << 35)
#define FMT_FEAT_KNOWN                                                                             \
    (FMT_FEAT_ZSTD_COLUMNS | FMT_FEAT_STACK_CODES | FMT_FEAT_ADDR_CANDS | FMT_FEAT_PE_PROCESS |    \
     FMT_FEAT_TIME_UNIT | FMT_FEAT_SAMPLED | FMT_FEAT_TIME_PACK | FMT_FEAT_POOLS |                 \
     FMT_FEAT_FREE_RANKS | FMT_FEAT_REALLOC_PRED | FMT_FEAT_AGGREGATE | FMT_FEAT_SEGMENT |         \
     FMT_FEAT_COUNTERS)
/* The time unit (feature bit TIME_UNIT): ns per unit, a 32-bit field of the
 * header at this offset, at most FMT_MAX_TIME_UNIT (one second). */
#define FMT_HEADER_TIME_UNIT 44
#define FMT_MAX_TIME_UNIT 1000000000u

/* Block header: 24 bytes before every block payload. */
#define FMT_BLOCK_MAGIC 0x4b42534du /* "MSBK" little-endian */
#define FMT_BLOCK_HEADER_SIZE 24
#define FMT_BLOCK_MAX_PAYLOAD (64u << 20) /* sanity bound, stored and raw */

enum fmt_block_type {
    FMT_BLOCK_META = 1,  /* trace metadata: key/value records */
    FMT_BLOCK_CHUNK = 2, /* events, column-oriented */
    FMT_BLOCK_DEFS = 3,  /* definitions and the summary of the chunk before */
    FMT_BLOCK_INDEX = 4, /* directory of every block, before the trailer */
};

#define FMT_BLOCKF_ZSTD 0x1u /* the whole payload is one zstd frame */
#define FMT_BLOCKF_ZLIB 0x2u /* 1.2: the whole payload is one zlib stream */

/* Trailer: 32 bytes at the very end of a finished trace. */
#define FMT_TRAILER_MAGIC "MSCRTEND"
#define FMT_TRAILER_SIZE 32

/* Columns of a chunk (docs/format-blocks.md, "Chunk"). Unknown ids are skipped. */
enum fmt_column {
    FMT_COL_OP = 1,
    FMT_COL_TIME = 2,
    FMT_COL_CTX = 3,
    FMT_COL_SIZE = 4,
    FMT_COL_ADDR = 5,
    FMT_COL_STACK = 6,
    FMT_COL_REF = 7,
    FMT_COL_MISC = 8,
    FMT_COL_STRS = 9,
    FMT_COL_FREE_TIME = 10,  /* TIME of FREE events */
    FMT_COL_FREE_STACK = 11, /* STACK of FREE events */
    FMT_COL_SIZE_HI = 12,    /* SIZE values >> 7 when they do not fit its byte */
    FMT_COL_TIME_HI = 13,    /* the same for TIME and FREE_TIME */
    FMT_COL_REF_HI = 14,     /* 1.3 (feature bit TIME_UNIT): the same for REF */
    /* 1.3: the facts of a block from an earlier chunk, which 1.1 puts in MISC */
    FMT_COL_FACT_SIZE = 15,
    FMT_COL_FACT_STACK = 16,
    FMT_COL_FACT_ADDR = 17, /* zigzag difference to the chunk's previous one */
    FMT_COL_FACT_TIME = 18,
    FMT_COL_FACT_CTX = 19,
    /* 1.5 (feature bit FREE_RANKS): ranks of recently ended addresses, split */
    FMT_COL_ADDR_REC = 20,
    FMT_COL_ADDR_REC_HI = 21,
};
#define FMT_NR_COLUMNS 22 /* ids 1..21 (index 0 unused) */

#define FMT_COL_ENC_RAW 0
#define FMT_COL_ENC_ZSTD 1
#define FMT_COL_ENC_ZLIB 2 /* 1.2: a zlib stream (Windows launcher) */

/* Op byte: kind in the low 6 bits, then two flags. */
#define FMT_OP_KIND_MASK 0x3f
#define FMT_OP_CTX 0x40       /* the context (thread) changes: CTX column */
#define FMT_OP_EXTRA 0x80     /* MISC holds flags, origin and a field mask */
#define FMT_OP_KIND_ESCAPE 63 /* future kinds: MISC holds kind, length, body */

/* Field mask of an EXTRA record (MISC). */
#define FMT_FIELD_ARG0 0x01
#define FMT_FIELD_ARG1 0x02
#define FMT_FIELD_ARG2 0x04
#define FMT_FIELD_ARG3 0x08
#define FMT_FIELD_OLD_ADDR 0x10
#define FMT_FIELD_OLD_SIZE 0x20
#define FMT_FIELD_STR 0x40
#define FMT_FIELD_STR2 0x80
#define FMT_FIELD_KNOWN 0xff

/* Records of a DEFS block: type, length, body. Unknown types are skipped. */
enum fmt_def_type {
    FMT_DEF_STACKS = 1,       /* new stack nodes */
    FMT_DEF_CONTEXT = 2,      /* a (image, thread, pid, tid) tuple */
    FMT_DEF_IMAGE = 3,        /* a process image began */
    FMT_DEF_IMAGE_END = 4,    /* a process image ended */
    FMT_DEF_THREAD_NAME = 5,  /* a context's thread got a name */
    FMT_DEF_THREAD_END = 6,   /* a context's thread ended */
    FMT_DEF_MODULE = 7,       /* a module was loaded */
    FMT_DEF_MODULE_END = 8,   /* a module was unloaded */
    FMT_DEF_SUMMARY = 9,      /* summary of the chunk just before */
    FMT_DEF_STACK_CODES = 10, /* new stack nodes, coded in streams (1.1) */
    FMT_DEF_POOL = 11,        /* a pool of the program was created (1.4, POOLS) */
    FMT_DEF_REACH = 12,       /* an image's blocks classed at its exit (1.6, REACH) */
    FMT_DEF_AGGREGATE = 13,   /* the trace is aggregated from a time on (1.8, AGGREGATE) */
    FMT_DEF_TOTALS = 14,      /* totals of the chunk just before (1.10, TOTALS) */
};

/* Records of the META block. */
enum fmt_meta_type {
    FMT_META_COMMAND = 1,
    FMT_META_HOSTNAME = 2,
    FMT_META_STACK_DEPTH = 3,
    FMT_META_SAMPLE_BYTES = 4, /* 1.3: the sampling rate (feature bit SAMPLED) */
    FMT_META_ONLY = 5,         /* record --only's glob (absent: no filter) */
    FMT_META_ATTACHED = 6,     /* record -p: varint pid; the trace starts mid-run */
    FMT_META_WINE_PREFIX = 7,  /* a Windows program's WINEPREFIX, a Linux path */
    FMT_META_WINE_DLL_DIR = 8, /* a folder of Wine's own DLLs (repeatable) */
    FMT_META_AGGREGATE = 9,    /* 1.8: varint period ns; aggregated from the start */
    FMT_META_KEEP_LAST = 10,   /* 1.9: varint ns, record --keep-last's duration */
    FMT_META_SEGMENT = 11,     /* 1.9: varint from ns, varint number: a segment */
};

/* Limits a reader enforces so that a corrupt file cannot make it allocate
 * without bound (docs/format.md, "Limits"). */
#define FMT_MAX_CHUNK_EVENTS (1u << 20)
#define FMT_MAX_STRING (1u << 20)
#define FMT_MAX_FRAMES 4096
#define FMT_STACK_MAX_LIMIT 4095 /* a window node's limit fits 12 bits */
#define FMT_AGG_MAX_CLASS 64     /* a batch's size class: floor(log2 size) + 1 of 64 bits */

static inline void fmt_put_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void fmt_put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void fmt_put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t fmt_get_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t fmt_get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint64_t fmt_get_le64(const uint8_t *p)
{
    return (uint64_t)fmt_get_le32(p) | ((uint64_t)fmt_get_le32(p + 4) << 32);
}

#endif
