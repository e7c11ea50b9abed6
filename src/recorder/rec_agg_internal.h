/* SPDX-License-Identifier: MIT */
/* The aggregator's state (rec_agg.h), shared by its pieces: rec_agg.c
 * (events in: what each does to the blocks, the heap and the rows),
 * rec_agg_table.c (the live blocks and the pending list), rec_agg_ix.c
 * (the interval's sites and batch rows) and rec_agg_cut.c (a cut). */
#ifndef REC_AGG_INTERNAL_H
#define REC_AGG_INTERNAL_H

/* A block taken out of the index by another at its address (a free the
 * trace missed): live for ever, as the writer keeps it; rec_agg_blk.kind. */
#define REC_AGG_ORPHAN 0x10000u

#include <stdint.h>

#include "format/fmt_writer.h"
#include "memscribe/event.h"
#include "recorder/rec_agg.h"

/* A live heap block (a slot of the slab; index 0 unused). */
struct rec_agg_blk {
    uint64_t addr;
    uint64_t size;
    uint64_t ts;  /* its allocation's time */
    uint64_t seq; /* its allocation's arrival number, unique: what a thread's last names */
    uint32_t image;
    uint32_t heap;   /* 0: malloc's; else its pool's id (rec_agg_pool) */
    uint32_t thread; /* the allocating thread's index */
    uint32_t stack;
    uint32_t pend; /* its place in the pending list + 1; 0: kept */
    uint32_t site; /* pending: its site in the interval's table; a free slot: the next */
    uint32_t ext;  /* its allocation's other fields (rec_agg_ext) + 1; 0: none */
    uint32_t kind; /* its allocation's kind; a REALLOC is written with old_addr 0 */
};

/* The fields of an allocation that is not a plain MALLOC (calloc's
 * counts, an alignment, a pool's handle, a Windows heap's, flags), for
 * writing it if it is kept. */
struct rec_agg_ext {
    uint64_t arg[2];
    uint16_t flags;
    uint32_t next_free; /* free list, index + 1 */
};

/* A heap event the interval writes (an end of a kept block, a free of an
 * address not known, a kept block's realloc), in arrival order. */
struct rec_agg_hev {
    uint64_t seq, ts, addr, size, old_addr;
    uint32_t thread, stack;
    uint16_t kind, flags;
};

/* Any other event the interval writes, its strings and module copied into
 * the interval's arena. */
struct rec_agg_gev {
    uint64_t seq;
    struct fmt_event ev;
};

/* A site of the interval (image, stack): the bytes and blocks of its
 * pending blocks live now, and at the latest moment of highest heap of
 * all images [0] and of its own image [1], snapshot lazily: the first
 * change after a new highest moment (a new epoch) keeps the value before
 * it, so a new highest moment costs O(1). */
struct rec_agg_site {
    uint32_t image, stack;
    uint64_t bytes, blocks;
    uint64_t snap_bytes[2], snap_blocks[2];
    uint64_t snap_epoch[2];
    uint64_t sub_bytes[2], sub_blocks[2]; /* kept blocks live at the moment (at the cut) */
};

/* A batch row of the interval. */
struct rec_agg_row {
    uint32_t thread, stack, cls;
    uint64_t blocks, bytes, temp, temp_bytes;
};

/* An index of the interval's records by key: slots of (generation << 32
 * | record + 1); a slot of an older generation is empty, so a cut empties
 * it by a new generation (rec_agg_ix.c). */
struct rec_agg_ix {
    uint64_t *slots;
    uint32_t mask; /* capacity - 1, a power of two; 0: none yet */
    uint32_t gen;
    uint32_t nr;
};

/* A thread: who it is and its latest heap event for the temporary rule. */
struct rec_agg_thread {
    struct fmt_writer_who who;
    uint64_t last_seq; /* its latest heap event's block if an allocation, else 0 */
    int known;
};

/* An image: its heap, the highest of the interval and when, and a context
 * of it for its transient groups. */
struct rec_agg_image {
    uint64_t heap, max;
    uint64_t max_seq, max_ts; /* 0: no new highest since the cut */
    uint64_t epoch;
    uint64_t iv;               /* the interval max and max_seq are of (rec_agg_image_enter) */
    struct fmt_writer_who who; /* its main thread's, else its latest thread's */
    int ended, known;
};

/* A pool (FMT_EVF_POOL) of an image: its blocks are apart from malloc's. */
struct rec_agg_pool {
    uint32_t image;
    uint64_t handle;
};

/* A chunk of the interval's arena (strings and modules of buffered events). */
struct rec_agg_arena {
    struct rec_agg_arena *next;
    size_t used, cap;
    unsigned char data[];
};

struct rec_agg {
    struct fmt_writer *w;
    uint64_t period;
    uint64_t unit; /* the writer's time unit: a cut at T comes after every event of T's tick */
    uint64_t next_cut;
    uint64_t last_cut;
    uint64_t seq;     /* events taken, the arrival numbers */
    int started;      /* the FMT_EV_AGGREGATE event is written (or the trace starts exact) */
    int exact;        /* record --max-size: the exact stretch, before the switch */
    int keep_fields;  /* record --keep-last: kept blocks keep their other fields */
    uint64_t last_ts; /* the latest event's time */

    /* The live blocks: a slab and an index by (image, heap, addr). */
    struct rec_agg_blk *blks;
    uint32_t nr_blks, cap_blks, free_blk; /* free list through pend, index */
    uint32_t *bix;                        /* slab index, 0 empty; linear probing */
    uint32_t bix_mask, bix_nr;
    struct rec_agg_ext *exts;
    uint32_t nr_exts, cap_exts, free_ext;
    /* Under --keep-last (keep_fields): the orphans, kept blocks whose
     * address another block took (their free missed): in no index, live
     * for ever, as the writer and a reader keep them, so carried into each
     * segment too (rec_agg_live_each). */
    uint32_t *orphans;
    uint32_t nr_orphans, cap_orphans;
    /* The pending blocks in arrival order (0: one that ended). */
    uint32_t *pend;
    uint32_t nr_pend, cap_pend, nr_pend_dead;

    /* The interval's buffered events. */
    struct rec_agg_hev *hev;
    size_t nr_hev, cap_hev;
    struct rec_agg_gev *gev;
    size_t nr_gev, cap_gev;
    struct rec_agg_arena *arena;

    /* The interval's sites and rows. */
    struct rec_agg_site *sites;
    uint32_t nr_sites, cap_sites;
    struct rec_agg_ix site_ix;
    struct rec_agg_row *rows;
    uint32_t nr_rows, cap_rows;
    struct rec_agg_ix row_ix;

    struct rec_agg_thread *threads;
    uint32_t cap_threads;
    struct rec_agg_image *images;
    uint32_t cap_images;
    struct rec_agg_pool *pools;
    uint32_t nr_pools, cap_pools;
    uint64_t iv; /* intervals begun: an image's max is of this one or stale */

    /* The heap of all running images and its highest in the interval. */
    uint64_t heap, max, max_seq, max_ts, epoch;

    struct rec_agg_stats st;
};

/* Is the cut at next_cut due before an event at ts? Only once ts's tick
 * (its time rounded down to the unit, as the writer writes it) is past the
 * cut's: every event a reader dates at T is before the cut at T, so the
 * blocks live at the cut are those of every event up to T (a reader's
 * `leaks --at T`), transient ones included (they are kept). */
static inline int rec_agg_cut_due(const struct rec_agg *a, uint64_t ts)
{
    return ts >= a->next_cut && ts - a->next_cut >= a->unit;
}

/* rec_agg_table.c: the live blocks. */
/* The slot of the index holding (image, heap, addr) (a->bix[slot] is its
 * slab index), or of the empty slot where it would go (a->bix[slot] 0). */
uint32_t rec_agg_find(const struct rec_agg *a, uint32_t image, uint32_t heap, uint64_t addr);
/* A new block at (image, heap, addr), which the index does not hold: its
 * slab index (0: out of memory). The slab may move: pointers into it are
 * stale after this. The caller fills the rest. */
uint32_t rec_agg_blk_new(struct rec_agg *a, uint32_t image, uint32_t heap, uint64_t addr);
/* Take the block at slot out of the index; its slab entry stays until
 * rec_agg_blk_free. */
void rec_agg_unindex(struct rec_agg *a, uint32_t slot);
/* Kept block k, in no index now, is an orphan: forgotten, or under
 * --keep-last listed for the segments' carries. 0 or -ENOMEM. */
int rec_agg_orphan_kept(struct rec_agg *a, uint32_t k);
void rec_agg_blk_free(struct rec_agg *a, uint32_t b);
/* Pending list: add block b (0 or -ENOMEM), drop it (it ended or was
 * kept). */
int rec_agg_pend_add(struct rec_agg *a, uint32_t b);
void rec_agg_pend_drop(struct rec_agg *a, uint32_t b);
/* The other fields of an allocation: 0 (none, out of memory: the block is
 * written as its kind alone) or index + 1. */
uint32_t rec_agg_ext_new(struct rec_agg *a, const uint64_t arg[2], uint16_t flags);
void rec_agg_ext_free(struct rec_agg *a, uint32_t ext);
void rec_agg_table_free(struct rec_agg *a);

/* rec_agg_ix.c: the interval's sites and rows, emptied at each cut. */
/* The site (image, stack), made if new: its index, or UINT32_MAX. */
uint32_t rec_agg_site(struct rec_agg *a, uint32_t image, uint32_t stack);
/* The row (thread, stack, cls), made if new, or NULL. */
struct rec_agg_row *rec_agg_row(struct rec_agg *a, uint32_t thread, uint32_t stack, uint32_t cls);
/* Empty both for the next interval. */
void rec_agg_ix_reset(struct rec_agg *a);
void rec_agg_ix_free(struct rec_agg *a);

/* rec_agg.c: what the events do to the blocks, in both stretches. */
/* What an allocation is, beside its address and time. */
struct rec_agg_alloc {
    unsigned kind;
    uint32_t heap; /* 0 malloc's, else a pool id */
    uint64_t size;
    uint32_t stack;
    const uint64_t *arg; /* NULL: none (arg[0], arg[1] otherwise) */
    uint16_t flags;
    int kept; /* kept at once: a kept block's realloc (its event written), an exact stretch */
};
/* A block starts at addr by thread t (who): pending (or kept), its site,
 * the heap and its highest. 0 or -ENOMEM. */
int rec_agg_start(struct rec_agg *a, struct rec_agg_thread *t, const struct fmt_writer_who *who,
                  uint64_t ts, uint64_t addr, const struct rec_agg_alloc *in);
/* The block at index slot ends by an event of thread t: the temporary
 * rule, the heap, and a pending block's site and batch row (not in an
 * exact stretch, whose reader decides). Returns 1 if it was transient
 * (nothing of it is written), 0 if kept (its end is written), or -ENOMEM. */
int rec_agg_end(struct rec_agg *a, struct rec_agg_thread *t, uint32_t slot);
/* A pool's id for the blocks' key, made if make (0: none, or out of
 * memory: its blocks are then taken for malloc's). */
uint32_t rec_agg_pool_id(struct rec_agg *a, uint32_t image, uint64_t handle, int make);
/* A pool destroyed (format 1.4): its blocks end before it, oldest first,
 * by the destroying thread, as the writer ends the kept ones itself
 * (docs/format-events.md, "Pools"). 0 or -ENOMEM. */
int rec_agg_pool_destroy(struct rec_agg *a, struct rec_agg_thread *t, const struct fmt_event *ev);
/* The image exits: its blocks leave the running heap (ana_step.h); they
 * stay its leaks. 0 or -ENOMEM. */
int rec_agg_image_exit(struct rec_agg *a, uint32_t image);

/* rec_agg_exact.c: the exact stretch of record --max-size, before the
 * switch: each event written as it comes, the blocks, threads and heap
 * followed (all kept) so that the aggregated stretch starts from them. */
int rec_agg_exact_heap(struct rec_agg *a, struct rec_agg_thread *t,
                       const struct fmt_writer_who *who, unsigned kind, uint64_t ts, uint64_t addr,
                       uint64_t size, uint32_t stack);
int rec_agg_exact_realloc(struct rec_agg *a, struct rec_agg_thread *t,
                          const struct fmt_writer_who *who, const struct fmt_event *e);
int rec_agg_exact_event(struct rec_agg *a, struct rec_agg_thread *t, const struct fmt_event *ev);
/* The switch, at the cut at ts: the FMT_EV_AGGREGATE event (arg[1] 1),
 * the aggregated stretch begins. 0 or -errno. */
int rec_agg_switch_cut(struct rec_agg *a, uint64_t ts);

/* rec_agg_cut.c: the cut at ts: write the interval, start the next (the
 * switch in an exact stretch). 0 or -errno. */
int rec_agg_cut(struct rec_agg *a, uint64_t ts);
/* The interval's state emptied, the next cut after ts. */
void rec_agg_cut_reset(struct rec_agg *a, uint64_t ts);

/* A size class of a batch row: 0 for 0, else floor(log2 size) + 1. */
static inline uint32_t rec_agg_class(uint64_t size)
{
    return size ? 64 - (uint32_t)__builtin_clzll(size) : 0;
}

#endif
