/* SPDX-License-Identifier: MIT */
/* The collector<->recorder protocol (docs/protocol.md): the hello message on
 * the recorder's socket, the shared-memory segment of per-thread rings, and
 * the raw records that travel in them. Header-only: the collector includes
 * it without linking anything of format/. */
#ifndef FMT_SHM_H
#define FMT_SHM_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "format/fmt_shm_counters.h"
#include "memscribe/event.h"

#define FMT_SHM_VERSION 6
#define FMT_SHM_HELLO_MAGIC 0x6f6c6568u         /* "helo" */
#define FMT_SHM_SEG_MAGIC 0x4745534c4f43534dull /* "MSCOLSEG" */

/* Environment the recorder gives the traced program. */
#define FMT_SHM_ENV_SOCKET "MEMSCRIBE_SOCKET"       /* abstract socket name, without the NUL */
#define FMT_SHM_ENV_DEPTH "MEMSCRIBE_DEPTH"         /* frames per stack, default 64 */
#define FMT_SHM_ENV_NO_FOLLOW "MEMSCRIBE_NO_FOLLOW" /* "1": trace only the first image */
#define FMT_SHM_ENV_CLOCK "MEMSCRIBE_CLOCK"   /* "tsc": stamp with rdtsc, not CLOCK_MONOTONIC */
#define FMT_SHM_ENV_SAMPLE "MEMSCRIBE_SAMPLE" /* mean bytes between samples; 0: every call */
/* record --only: a glob; an image whose executable's name matches it not
 * stays dormant (no rings, no hello) but keeps the environment. */
#define FMT_SHM_ENV_ONLY "MEMSCRIBE_ONLY"
/* record --reach: "1": at its exit an image asks the recorder to class its
 * live heap blocks (docs/protocol-order.md, "Leak classes at exit") and waits. */
#define FMT_SHM_ENV_REACH "MEMSCRIBE_REACH"
/* Without the wrapper (LD_PRELOAD=... MEMSCRIBE_OUTPUT=...): the program's
 * MEMSCRIBE_AGGREGATE (a period: 1s, 100ms) passed to the recorder the
 * collector starts, `record --serve`, for an aggregated trace
 * (docs/aggregate.md). The collector itself does not read it. */
#define FMT_SHM_ENV_AGGREGATE "MEMSCRIBE_AGGREGATE"
/* Without the wrapper, the same way: the metrics server of the recorder
 * ([ADDR:]PORT), the file of its bearer token and its labels (K=V,K=V),
 * as record's --metrics, --metrics-token-file and --metrics-label
 * (docs/metrics.md). The collector itself does not read them. */
#define FMT_SHM_ENV_METRICS "MEMSCRIBE_METRICS"
#define FMT_SHM_ENV_METRICS_TOKEN "MEMSCRIBE_METRICS_TOKEN_FILE"
#define FMT_SHM_ENV_METRICS_LABELS "MEMSCRIBE_METRICS_LABELS"
/* The recording's secret, FMT_SHM_SECRET_BYTES random bytes in hex: every
 * hello carries it, and the recorder takes in only hellos that do. Only
 * the traced tree inherits it (docs/protocol.md, Channel and hello). */
#define FMT_SHM_ENV_SECRET "MEMSCRIBE_SECRET"
#define FMT_SHM_SECRET_BYTES 16
/* record -p only (a settings line, never the environment): the recorder's
 * pid, so that a collector whose recorder was killed can tell that it is
 * free to be attached to again (docs/record-attach.md). */
#define FMT_SHM_ENV_RECORDER_PID "MEMSCRIBE_RECORDER_PID"

#define FMT_SHM_DEFAULT_DEPTH 64
#define FMT_SHM_MAX_DEPTH 256
#define FMT_SHM_MAX_PATH 4096 /* longest path or name a record carries */
/* Segments per process image at most: the collector's schedule (1, 1, 2,
 * 4, 8, then 16 rings) gives 1,024 rings in 68 segments. */
#define FMT_SHM_MAX_SEGMENTS 68

/* A hello: one SOCK_SEQPACKET message per connection, with the segment's
 * memfd attached (SCM_RIGHTS). */
enum fmt_shm_hello_kind {
    FMT_SHM_HELLO_IMAGE = 0,   /* a freshly loaded image: first program or after exec */
    FMT_SHM_HELLO_FORK = 1,    /* a forked child's first segment */
    FMT_SHM_HELLO_SEGMENT = 2, /* one more segment of a stream already announced */
    FMT_SHM_HELLO_SAY = 3,     /* no memfd: FMT_SHM_SAY_MAX bytes of text at most follow,
                                  a line for the recorder to print */
};
#define FMT_SHM_SAY_MAX 256

struct fmt_shm_hello {
    uint32_t magic;   /* FMT_SHM_HELLO_MAGIC */
    uint16_t version; /* FMT_SHM_VERSION */
    uint16_t kind;    /* enum fmt_shm_hello_kind */
    uint32_t pid;
    uint32_t ppid;
    uint32_t segment_index; /* 0 for the first segment of a stream */
    uint32_t reserved;
    uint64_t stream_id; /* random per process image; ties segments together */
    uint64_t ts_ns;     /* when the stream started (the segment's clock) */
    /* FMT_SHM_ENV_SECRET's bytes: the recorder refuses a hello without. */
    uint8_t secret[FMT_SHM_SECRET_BYTES];
};

/* The segment: a header page, then nr_rings control blocks, then the ring
 * data, ring i at data_offset + i * ring_size. */
#define FMT_SHM_HEADER_SIZE 4096u
#define FMT_SHM_CACHE_LINE 64

struct fmt_shm_header {
    uint64_t magic; /* FMT_SHM_SEG_MAGIC */
    uint32_t version;
    uint32_t nr_rings;
    uint32_t ring_size; /* bytes, a power of two */
    uint32_t ctl_offset;
    uint32_t data_offset;
    uint32_t pid;
    uint64_t stream_id;
    uint32_t segment_index;
    uint32_t max_frames;
    _Atomic uint32_t recorder_pid; /* set by the recorder once it maps the segment */
    uint32_t clock_tsc;            /* 1: every time in this segment is in TSC ticks, 0: in ns */
    _Atomic uint64_t nr_dropped;   /* events the collector could not record */
    /* Segment 0 only: the program's path and NUL-separated argv (possibly
     * cut short), at FMT_SHM_INFO_OFFSET, the path first. The process may
     * be gone before the recorder could read /proc. */
    uint32_t exe_len;
    uint32_t argv_len;
    /* Segment 0 only: when the process image began to end (exit() reached
     * the collector's destructor, or _exit() was called), in the
     * segment's clock; 0: not seen (killed by a signal, an exec, or a
     * collector before this field). The recorder dates the image's exit
     * then rather than when it notices the exit (docs/protocol.md). */
    _Atomic uint64_t exit_ts;
    /* Segment 0 only, under FMT_SHM_ENV_REACH: the scan at exit
     * (docs/protocol-order.md, "Leak classes at exit"). The thread that ends the
     * image stores its tid in reach_req (once) and waits on reach_done (a
     * shared futex), which the recorder moves to FMT_SHM_REACH_SCANNING and
     * then FMT_SHM_REACH_DONE. own_addr, own_nr: where the collector keeps
     * the table of its own mappings (pairs of lo, hi), which the scan does
     * not take as roots; read from the program like any of its memory. */
    _Atomic uint32_t reach_req;
    _Atomic uint32_t reach_done;
    _Atomic uint64_t own_addr;
    _Atomic uint32_t own_nr;
    uint32_t pad_; /* a 32-bit collector aligns the next field as a 64-bit recorder does */
    /* Segment 0 only: where its exact counters' area (struct
     * fmt_shm_counters) starts, past the rings; 0 in the others. */
    uint64_t counters_offset;
};

enum { FMT_SHM_REACH_WAITING = 0, FMT_SHM_REACH_SCANNING = 1, FMT_SHM_REACH_DONE = 2 };

#define FMT_SHM_INFO_OFFSET 256u
_Static_assert(sizeof(struct fmt_shm_header) <= FMT_SHM_INFO_OFFSET, "header overlaps the info");
_Static_assert(offsetof(struct fmt_shm_header, counters_offset) == 104,
               "a 32-bit collector's header reads as a 64-bit recorder's");

/* A time stamp with this bit set is CLOCK_MONOTONIC ns read by the
 * clock_gettime system call, whatever the segment's clock: its thread may
 * not read the TSC (prctl PR_SET_TSC, seccomp strict mode), and the vDSO's
 * clock_gettime reads the TSC too. The recorder puts such stamps on its
 * own line of the TSC, so both kinds merge in order (docs/protocol.md,
 * Clock). Any stamp: events, pending, hellos, exit_ts. */
#define FMT_SHM_TS_SYSCLOCK (1ull << 63)

/* `pending` values: 0 = not inside a hook; MARKER = entering a hook and
 * about to read the clock; otherwise the hook's time stamp, not yet
 * published. The recorder's watermark reads it (docs/protocol.md). */
#define FMT_SHM_PENDING_MARKER 1ull

struct fmt_shm_ring_ctl {
    /* Written by the producer (the owning thread). */
    alignas(FMT_SHM_CACHE_LINE) _Atomic uint64_t head; /* bytes ever published */
    _Atomic uint64_t pending;
    _Atomic uint32_t owner_tid; /* 0: free; FMT_SHM_OWNER_EXITING: see below */
    /* Written by the recorder. */
    alignas(FMT_SHM_CACHE_LINE) _Atomic uint64_t tail; /* bytes ever consumed */
    /* A producer waiting for room sets waiters and sleeps on wake_seq (a
     * shared futex); the recorder, after moving tail, bumps and wakes it. */
    _Atomic uint32_t waiters;
    _Atomic uint32_t wake_seq;
};

/* owner_tid with this bit: the thread ran its exit hook and wrote its
 * THREAD_EXIT, but keeps the ring until it is gone (glibc frees after the
 * exit hook). Tids stay below 2^22. */
#define FMT_SHM_OWNER_EXITING 0x80000000u

/* Records. Every record is a multiple of 8 bytes and starts with its type
 * byte; a record never wraps around the ring end (PAD fills the rest). Two
 * layouts: "event" records (EVENT, RELEASE) whose length follows from their
 * argument count, and "sized" records with a 32-bit byte length. */
enum fmt_shm_rec_type {
    FMT_SHM_REC_PAD = 1,           /* sized; skip to the ring end */
    FMT_SHM_REC_EVENT = 2,         /* struct fmt_shm_event */
    FMT_SHM_REC_RELEASE = 3,       /* struct fmt_shm_event, no args: a realloc/mremap
                                      is about to end old block `addr` (ts before the call) */
    FMT_SHM_REC_STACK = 4,         /* struct fmt_shm_stack */
    FMT_SHM_REC_THREAD_START = 5,  /* struct fmt_shm_thread, name = comm */
    FMT_SHM_REC_THREAD_EXIT = 6,   /* struct fmt_shm_thread, no name */
    FMT_SHM_REC_THREAD_NAME = 7,   /* struct fmt_shm_thread, name = new name */
    FMT_SHM_REC_MODULE_LOAD = 8,   /* struct fmt_shm_module */
    FMT_SHM_REC_MODULE_UNLOAD = 9, /* struct fmt_shm_module, no segments, no path */
    FMT_SHM_REC_POOL = 10,         /* struct fmt_shm_pool (memscribe/annotate.h) */
    FMT_SHM_REC_MAX = 10,
};

struct fmt_shm_sized {
    uint8_t type;
    uint8_t reserved[3];
    uint32_t len; /* whole record, bytes, multiple of 8 */
};

struct fmt_shm_event {
    uint8_t type;
    uint8_t kind;         /* enum fmt_kind */
    uint8_t flags;        /* FMT_EVF_* (all fit in 8 bits) */
    uint8_t origin_nargs; /* origin (low 4 bits) | number of extra words << 4 */
    uint32_t stack;       /* process-local stack id, 0 = none */
    uint64_t ts_ns;       /* CLOCK_MONOTONIC */
    uint64_t addr;
    uint64_t size;
    uint64_t extra[]; /* per kind, see fmt_shm_event_nargs() */
};

struct fmt_shm_stack {
    struct fmt_shm_sized h;
    uint32_t id; /* process-local, from 1 */
    uint32_t nr_frames;
    uint64_t frames[]; /* leaf first */
};

struct fmt_shm_thread {
    struct fmt_shm_sized h;
    uint64_t ts_ns;
    uint32_t tid;
    uint32_t name_len; /* bytes of name, no NUL */
    char name[];       /* padded to 8 */
};

struct fmt_shm_module {
    struct fmt_shm_sized h;
    uint64_t ts_ns;
    uint64_t base;
    uint32_t path_len;
    uint32_t build_id_len;
    uint32_t nr_segments;
    uint32_t reserved;
    uint8_t build_id[FMT_MAX_BUILD_ID];
    struct fmt_shm_segment {
        uint64_t vaddr, memsz, offset;
        uint32_t flags, reserved;
    } segments[]; /* then path, padded to 8 */
};

/* An event of the program's own pool (memscribe/annotate.h, format 1.4):
 * kind MALLOC, REALLOC or FREE of a block of pool, or HEAP_CREATE (with
 * the pool's name) or HEAP_DESTROY. Stamped as the heap events are. */
#define FMT_SHM_MAX_POOL_NAME 255
struct fmt_shm_pool {
    struct fmt_shm_sized h;
    uint64_t ts_ns;
    uint8_t kind; /* enum fmt_kind */
    uint8_t reserved[3];
    uint32_t stack; /* process-local stack id, 0 = none */
    uint64_t pool;  /* the handle the program passed */
    uint64_t addr;
    uint64_t size;
    uint64_t old_addr; /* REALLOC */
    uint32_t name_len; /* HEAP_CREATE: bytes of name, no NUL */
    uint32_t reserved2;
    char name[]; /* padded to 8 */
};

#define FMT_SHM_ALIGN8(n) (((n) + 7u) & ~(uint32_t)7u)
#define FMT_SHM_EVENT_SIZE(nargs) ((uint32_t)sizeof(struct fmt_shm_event) + 8u * (nargs))

/* Extra words an EVENT of this kind carries, or -1 if the kind never
 * travels as an EVENT. The layout of extra[] per kind:
 *   CALLOC        nmemb, elsize
 *   REALLOC       old_addr
 *   REALLOCARRAY  old_addr, nmemb, elsize
 *   MEMALIGN, ALIGNED_ALLOC  alignment
 *   POSIX_MEMALIGN           alignment, return code
 *   MMAP          prot, flags, fd, offset
 *   MREMAP        old_addr, old_size, flags
 *   MPROTECT      prot
 *   BRK           requested break      SBRK  increment */
static inline int fmt_shm_event_nargs(unsigned kind)
{
    switch (kind) {
    case FMT_EV_MALLOC:
    case FMT_EV_FREE:
    case FMT_EV_VALLOC:
    case FMT_EV_PVALLOC:
    case FMT_EV_MUNMAP:
        return 0;
    case FMT_EV_REALLOC:
    case FMT_EV_MEMALIGN:
    case FMT_EV_ALIGNED_ALLOC:
    case FMT_EV_MPROTECT:
    case FMT_EV_BRK:
    case FMT_EV_SBRK:
        return 1;
    case FMT_EV_CALLOC:
    case FMT_EV_POSIX_MEMALIGN:
        return 2;
    case FMT_EV_REALLOCARRAY:
    case FMT_EV_MREMAP:
        return 3;
    case FMT_EV_MMAP:
        return 4;
    default:
        return -1;
    }
}

static inline uint32_t fmt_shm_thread_size(uint32_t name_len)
{
    return (uint32_t)sizeof(struct fmt_shm_thread) + FMT_SHM_ALIGN8(name_len);
}

static inline uint32_t fmt_shm_module_size(uint32_t nr_segments, uint32_t path_len)
{
    return (uint32_t)(sizeof(struct fmt_shm_module) +
                      nr_segments * sizeof(struct fmt_shm_segment)) +
           FMT_SHM_ALIGN8(path_len);
}

static inline uint32_t fmt_shm_pool_size(uint32_t name_len)
{
    return (uint32_t)sizeof(struct fmt_shm_pool) + FMT_SHM_ALIGN8(name_len);
}

/* The kinds a POOL record may carry. */
static inline int fmt_shm_pool_kind(unsigned kind)
{
    return kind == FMT_EV_MALLOC || kind == FMT_EV_REALLOC || kind == FMT_EV_FREE ||
           kind == FMT_EV_HEAP_CREATE || kind == FMT_EV_HEAP_DESTROY;
}

static inline uint32_t fmt_shm_stack_size(uint32_t nr_frames)
{
    return (uint32_t)sizeof(struct fmt_shm_stack) + 8u * nr_frames;
}

/* The secret from its hex form (FMT_SHM_ENV_SECRET): 0, or -1 if hex is
 * not exactly 2 * FMT_SHM_SECRET_BYTES hex digits. */
static inline int fmt_shm_secret_parse(const char *hex, uint8_t out[FMT_SHM_SECRET_BYTES])
{
    for (unsigned i = 0; i < 2 * FMT_SHM_SECRET_BYTES; i++) {
        char c = hex[i];
        unsigned v = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                                            : 16u;

        if (v == 16)
            return -1;
        out[i / 2] = (uint8_t)(i % 2 ? out[i / 2] | v : v << 4);
    }
    return hex[2 * FMT_SHM_SECRET_BYTES] ? -1 : 0;
}

/* Where ring i lives in a mapped segment. */
static inline struct fmt_shm_ring_ctl *fmt_shm_ring_ctl(void *seg, uint32_t i)
{
    struct fmt_shm_header *h = (struct fmt_shm_header *)seg;
    return (struct fmt_shm_ring_ctl *)((char *)seg + h->ctl_offset) + i;
}

static inline unsigned char *fmt_shm_ring_data(void *seg, uint32_t i)
{
    struct fmt_shm_header *h = (struct fmt_shm_header *)seg;
    return (unsigned char *)seg + h->data_offset + (uint64_t)i * h->ring_size;
}

/* Where the rings' data starts: past the header and the ring controls,
 * page-aligned. */
static inline uint32_t fmt_shm_data_offset(uint32_t nr_rings)
{
    uint64_t ctl = (uint64_t)nr_rings * sizeof(struct fmt_shm_ring_ctl);

    return FMT_SHM_HEADER_SIZE + (uint32_t)((ctl + 4095) & ~4095ull);
}

static inline uint64_t fmt_shm_segment_size(uint32_t nr_rings, uint32_t ring_size)
{
    return fmt_shm_data_offset(nr_rings) + (uint64_t)nr_rings * ring_size;
}

/* The exact counters' area, page-rounded: at the end of segment 0. */
#define FMT_SHM_COUNTERS_BYTES ((sizeof(struct fmt_shm_counters) + 4095) & ~(size_t)4095)

/* Segment number index's whole size: its rings, and segment 0's counters. */
static inline uint64_t fmt_shm_segment_bytes(uint32_t index, uint32_t nr_rings, uint32_t ring_size)
{
    return fmt_shm_segment_size(nr_rings, ring_size) + (index == 0 ? FMT_SHM_COUNTERS_BYTES : 0);
}

/* The layout half of a fresh segment's header (magic, version, rings,
 * counters), for the collector and its stand-ins (tests,
 * bench/rec_replay.c). */
static inline void fmt_shm_header_layout(struct fmt_shm_header *h, uint32_t index,
                                         uint32_t nr_rings, uint32_t ring_size)
{
    h->magic = FMT_SHM_SEG_MAGIC;
    h->version = FMT_SHM_VERSION;
    h->nr_rings = nr_rings;
    h->ring_size = ring_size;
    h->ctl_offset = FMT_SHM_HEADER_SIZE;
    h->data_offset = fmt_shm_data_offset(nr_rings);
    h->counters_offset = index == 0 ? fmt_shm_segment_size(nr_rings, ring_size) : 0;
}

#endif
