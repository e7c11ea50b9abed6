/* SPDX-License-Identifier: MIT */
/* Reachability classes at exit (docs/leaks.md): memcheck's leak search
 * over the live heap blocks of a stopped process, its memory read through
 * a function (process_vm_readv's semantics) so that a test can hand it a
 * made-up address space. rec_reach_mark.c is the search; rec_reach.c
 * stops the process, finds its roots and writes the REACH record. */
#ifndef REC_REACH_INTERNAL_H
#define REC_REACH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Read remote ranges into local buffers, as process_vm_readv(2) does for
 * one process: the bytes read, fewer when a remote range faults (the
 * read stops there), -1 on error. */
typedef ssize_t rec_reach_read_fn(void *arg, const struct iovec *local, unsigned long nr_local,
                                  const struct iovec *remote, unsigned long nr_remote);

/* A mapping of the process, as /proc/PID/maps says. */
struct rec_reach_map {
    uint64_t lo, hi;
    unsigned r : 1, w : 1, x : 1, file : 1; /* file: backed by a file (a path, not [..]) */
};

struct rec_reach_block {
    uint64_t addr, size, serial;
    uint8_t state;     /* enum fmt_reach_class once classed; REC_REACH_UNREACHED before */
    uint8_t pending;   /* on the mark stack */
    uint8_t heuristic; /* reached through one of memcheck's heuristics only */
};
#define REC_REACH_UNREACHED 0

/* One search. The caller fills mem, blocks (sorted by address, not
 * overlapping), maps (sorted, for the vtable heuristic) and the roots;
 * rec_reach_mark classes every block. */
/* Where [addr, addr + len) of the process is held in the recorder's own
 * memory (rec_reach_snap_view), or NULL: read it then. */
typedef const unsigned char *rec_reach_view_fn(void *arg, uint64_t addr, size_t len);

struct rec_reach {
    unsigned word; /* bytes of a pointer: 8, or 4 for a 32-bit process; 0 is 8 */
    rec_reach_read_fn *read;
    void *read_arg;
    rec_reach_view_fn *view; /* NULL: every read goes through read */
    void *view_arg;
    struct rec_reach_block *blocks;
    size_t nr_blocks;
    const struct rec_reach_map *maps;
    size_t nr_maps;
    /* Work: */
    uint32_t *stack; /* the mark stack, nr_blocks entries */
    size_t top;
    unsigned char *buf; /* REC_REACH_BATCH bytes */
    /* The densest cluster of blocks [idx_lo, idx_hi) indexed by granules
     * of 2^idx_shift bytes: idx[g] is the first block at or above its
     * start (a pointer there costs a step or two, not a binary search). */
    uint32_t *idx;
    uint64_t idx_lo, idx_hi;
    unsigned idx_shift;
    /* [lo, hi): from the lowest block's start to the highest block's end.
     * Most words scanned are not pointers (counts, zeros, text): one
     * compare turns them away, where a binary search took 22 steps each. */
    uint64_t lo, hi;
    /* What it did: */
    uint64_t root_bytes, block_bytes, skipped_bytes;
    uint64_t nr_vtable_checks;
};

/* Bytes read from the process at once, and ranges per read. */
#define REC_REACH_BATCH (1u << 20)
#define REC_REACH_IOV 1024
/* The vtable heuristic reads the process for each candidate: bounded. */
#define REC_REACH_MAX_VTABLE_CHECKS 200000u

/* Set up the work space (after blocks and nr_blocks are set). 0 or -ENOMEM. */
int rec_reach_init(struct rec_reach *rr);
void rec_reach_free(struct rec_reach *rr);
/* A register's value, or the words of a root range [lo, hi) (read in
 * batches; unreadable pages skipped and counted). */
void rec_reach_root_word(struct rec_reach *rr, uint64_t value);
void rec_reach_root_range(struct rec_reach *rr, uint64_t lo, uint64_t hi);
/* After the roots: follow the reachable blocks, then gather the lost ones
 * into cliques (memcheck's order: by address), and class every block. */
void rec_reach_mark(struct rec_reach *rr);

/* rec_reach_snap.c: the blocks' memory copied in a few large reads (spans
 * of neighbouring blocks, at most max_bytes in all; the rest stays in the
 * process), and a read function over the copy that passes what it does
 * not hold to the process's: set rr->read to rec_reach_snap_read and
 * rr->read_arg to the snapshot. */
struct rec_reach_span {
    uint64_t lo, hi; /* remote range */
    size_t off;      /* where it lies in mem */
    int valid;       /* read whole (else read from the process) */
};
struct rec_reach_snap {
    rec_reach_read_fn *read; /* the process's */
    void *read_arg;
    struct rec_reach_span *spans; /* by address */
    uint32_t nr_spans;
    unsigned char *mem;
    size_t mem_size;
};
/* Copy (blocks sorted by address): 0, or -ENOMEM (nothing copied, reads
 * go to the process). Free with rec_reach_snap_free in any case. */
int rec_reach_snap_make(struct rec_reach_snap *sn, const struct rec_reach_block *blocks,
                        size_t nr_blocks, size_t max_bytes);
void rec_reach_snap_free(struct rec_reach_snap *sn);
const unsigned char *rec_reach_snap_view(void *arg, uint64_t addr, size_t len);
ssize_t rec_reach_snap_read(void *arg, const struct iovec *local, unsigned long nr_local,
                            const struct iovec *remote, unsigned long nr_remote);

#endif
