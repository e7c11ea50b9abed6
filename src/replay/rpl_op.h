/* SPDX-License-Identifier: MIT */
/* The replay worker's input: a stream of fixed-size operations that
 * `memscribe replay` writes from a trace and memscribe-replay executes.
 *
 * Blocks live in slots (dense from 0, reused first-freed first): an
 * operation names its slot and the slot's sequence number, the count of
 * operations done on that slot before it, so that a free of another
 * thread's block waits for that block's allocation and nothing else
 * (docs/replay.md, "Threads"). The stream starts with RPL_OP_HEADER and
 * ends with RPL_OP_END. Host byte order: the stream never leaves the
 * machine. */
#ifndef RPL_OP_H
#define RPL_OP_H

#include <stdint.h>

#define RPL_MAGIC 0x4c50524d53434d55ull /* "UMCSMRPL" little-endian, version 1 */

enum rpl_kind {
    RPL_OP_NONE = 0,
    /* The heap calls; values match enum fmt_kind. */
    RPL_OP_MALLOC = 1,         /* a size */
    RPL_OP_CALLOC = 2,         /* a nmemb, b element size */
    RPL_OP_REALLOC = 3,        /* a size; the slot's block (NULL if empty) is the old one */
    RPL_OP_REALLOCARRAY = 4,   /* a nmemb, b element size; as realloc */
    RPL_OP_FREE = 5,           /* the slot's block; slot RPL_NO_SLOT: free(NULL) */
    RPL_OP_MEMALIGN = 6,       /* a size, b alignment */
    RPL_OP_POSIX_MEMALIGN = 7, /* a size, b alignment */
    RPL_OP_ALIGNED_ALLOC = 8,  /* a size, b alignment */
    RPL_OP_VALLOC = 9,         /* a size */
    RPL_OP_PVALLOC = 10,       /* a size */
    /* Control. */
    RPL_OP_HEADER = 32,      /* a RPL_MAGIC, b number of slots; slot: touch mode;
                              * thread: RPL_TOUCH_PAGES's bound in MiB (0: none) */
    RPL_OP_THREAD_EXIT = 33, /* the thread ends after its earlier operations */
    RPL_OP_SAMPLE = 34,      /* all threads drained, then RSS is read; a sample id */
    RPL_OP_END = 35,
};

/* Touch modes (RPL_OP_HEADER slot): what is written into a new block. */
enum rpl_touch {
    RPL_TOUCH_FIRST = 0, /* its first byte (and so its first page) */
    RPL_TOUCH_PAGES = 1, /* one byte in every 4096 from its start */
};

#define RPL_NO_SLOT UINT32_MAX

struct rpl_op {
    uint8_t kind; /* enum rpl_kind */
    uint8_t pad[3];
    uint32_t thread; /* dense from 0 in the order threads first appear */
    uint32_t slot;
    uint32_t seq; /* operations done on the slot before this one */
    uint64_t a, b;
};

_Static_assert(sizeof(struct rpl_op) == 32, "rpl_op is 32 bytes on the pipe");

#endif
