/* SPDX-License-Identifier: MIT */
/* Trace writer: takes events in time order and writes a trace file
 * (docs/format.md): header, zstd-compressed chunks, index, trailer. */
#ifndef FMT_WRITER_H
#define FMT_WRITER_H

#include <stdint.h>

#include "memscribe/event.h"

struct fmt_writer;

/* The largest time unit (fmt_writer_options.time_unit_ns): one second. */
#define FMT_WRITER_MAX_TIME_UNIT_NS 1000000000u

struct fmt_writer_options {
    int zstd_level;        /* 0: the default */
    uint32_t chunk_events; /* events per chunk, 0: the default */
    int pe_process;        /* a Windows trace: format 1.2, feature bit PE_PROCESS */
    int zlib;              /* chunks coded with zlib, not zstd (format 1.2) */
    uint32_t time_unit_ns; /* 0: nanoseconds, a format 1.1 file; else a 1.3 file whose
                              times are rounded down to multiples of this (1: ns) */
    int time_pack;         /* with time_unit_ns: a format 1.4 file, time deltas packed
                              (feature bit TIME_PACK) */
    int free_ranks;        /* with time_pack: a format 1.5 file, recently ended addresses
                              named by rank (feature bit FREE_RANKS) */
    int realloc_pred;      /* with free_ranks: a format 1.7 file, realloc addresses
                              predicted, class tops (feature bit REALLOC_PRED) */
    int pools;             /* events of the program's own pools (FMT_EVF_POOL) allowed:
                              format 1.4, feature bit POOLS */
    int reach;             /* images may be classed at their exit (fmt_writer_reach):
                              format 1.6, feature bit REACH (optional) */
    int aggregate;         /* the kinds of aggregated stretches (FMT_EV_HEAP_BATCH,
                              FMT_EV_HEAP_TRANSIENT, FMT_EV_AGGREGATE) allowed: format
                              1.8, feature bit AGGREGATE (docs/aggregate.md). With
                              fmt_trace_info.aggregate_ns set, the trace is aggregated
                              from its start (META AGGREGATE) */
    int totals;            /* with realloc_pred: a format 1.10 file, each chunk's totals
                              (a TOTALS record: report --index), feature bit TOTALS
                              (optional) */
    int counters;          /* a sampled trace's exact counters (FMT_EV_COUNTER) allowed:
                              format 1.13, feature bit COUNTERS */
};

struct fmt_writer_stats {
    uint64_t nr_events;     /* events written (definitions included) */
    uint64_t nr_allocs;     /* blocks started */
    uint64_t nr_stacks;     /* distinct stack nodes */
    uint64_t bytes_written; /* file size so far */
    uint64_t pending;       /* events of the chunk being built, not in bytes_written yet */
};

/* Start a trace on fd (which the writer does not close). opt may be NULL.
 * Returns 0 or -errno. */
int fmt_writer_create(struct fmt_writer **out, int fd, const struct fmt_trace_info *info,
                      const struct fmt_writer_options *opt);

/* Intern a stack of image (frames leaf first, as unw_backtrace gives them).
 * Sets *id to the trace-wide stack id (never 0). Same frames in the same
 * image give the same id. Returns 0 or -errno. */
int fmt_writer_stack(struct fmt_writer *w, uint32_t image, const uint64_t *frames,
                     uint32_t nr_frames, uint32_t *id);

/* Append one event. Events must come in non-decreasing ts_ns order (with
 * a time unit, ts_ns is rounded down to a multiple of it). The
 * writer matches frees, reallocs and unmaps to the blocks they end by
 * address within ev->image. An FMT_EV_AGGREGATE event (option aggregate,
 * once a trace, arg[0] the period, arg[1] 0 or 1; from the start: at time
 * 0 with the META's period) also writes the DEFS record AGGREGATE beside
 * its chunk. Returns 0 or -errno (-EINVAL: a kind or field the options do
 * not allow; -ENOSPC: disk full; the file stays readable up to its last
 * whole chunk). */
int fmt_writer_event(struct fmt_writer *w, const struct fmt_event *ev);

/* Who an event belongs to: a context of the trace (docs/format.md). */
struct fmt_writer_who {
    uint32_t image;
    uint32_t thread;
    uint32_t pid;
    uint32_t tid;
};

/* Append a malloc (kind FMT_EV_MALLOC: addr, size) or a free (FMT_EV_FREE:
 * addr; size ignored) without flags or other fields: the same as
 * fmt_writer_event() with a struct fmt_event holding these fields and zero
 * elsewhere, without building one. The bulk of a recording takes this
 * path; the struct's construction and checks were a quarter of the
 * writer's time per event. Returns 0 or -errno. */
int fmt_writer_heap(struct fmt_writer *w, const struct fmt_writer_who *who, unsigned kind,
                    uint64_t ts_ns, uint64_t addr, uint64_t size, uint32_t stack);

/* A realloc (FMT_EV_REALLOC, flags 0 or FMT_EVF_IN_PLACE, no origin or
 * other fields) of who that moved or resized the block at old_addr (0:
 * none) to addr: the same as fmt_writer_event() with such an event,
 * without a struct fmt_event. */
int fmt_writer_realloc(struct fmt_writer *w, const struct fmt_writer_who *who, unsigned flags,
                       uint64_t ts_ns, uint64_t old_addr, uint64_t addr, uint64_t size,
                       uint32_t stack);

/* A hint that changes nothing in the trace: a heap event of image at addr
 * comes soon, so start loading the slot of the writer's table of live
 * blocks it will look at. With many live blocks (python3: a million) each
 * event's lookup is a cache miss, most of the writer's time per event; the
 * recorder calls this a few events ahead. */
void fmt_writer_prefetch(const struct fmt_writer *w, uint32_t image, uint64_t addr);

/* 1 when fmt_writer_prefetch() pays: the table of live blocks is larger
 * than a core's cache. */
int fmt_writer_prefetch_pays(const struct fmt_writer *w);

/* End the current chunk now and write it (with its DEFS block), so that
 * what was appended so far survives the recorder dying; the recorder may
 * call this on a timer. Returns 0 or -errno. */
int fmt_writer_flush(struct fmt_writer *w);

/* Flush the last chunk, write the index and trailer. Returns 0 or -errno. */
int fmt_writer_finish(struct fmt_writer *w);

/* A heap block the writer holds live (fmt_writer_live_blocks). */
struct fmt_writer_block {
    uint64_t addr;
    uint64_t size;
    uint64_t serial; /* the reader's allocation serial */
};

/* Call fn once for each heap block of image that is live now, in no
 * particular order; fn returns 0 to go on, anything else stops the walk
 * and is returned. O(the table of live blocks). The recorder's scan at
 * an image's exit (docs/leaks.md) reads the live set through this. */
typedef int fmt_writer_block_fn(void *arg, const struct fmt_writer_block *b);
int fmt_writer_live_blocks(const struct fmt_writer *w, uint32_t image, fmt_writer_block_fn *fn,
                           void *arg);

/* The classes of image's blocks found at its exit: a REACH record
 * (docs/format.md) in the next DEFS block. serials increase strictly and
 * name blocks already written; classes are enum fmt_reach_class values
 * (not UNKNOWN). With status FMT_REACH_UNAVAILABLE, reason says why and
 * nr_blocks is 0. Needs the option reach. Returns 0 or -errno (-EINVAL:
 * out of order, a bad class, no reach option). */
struct fmt_writer_reach {
    uint32_t image;
    uint32_t status; /* enum fmt_reach_status */
    uint64_t ts_ns;  /* relative to the trace's start, as events' */
    const char *reason;
    uint32_t nr_threads;
    uint64_t root_bytes, skipped_bytes;
    uint64_t nr_blocks;
    const uint64_t *serials;
    const uint8_t *classes;
};
int fmt_writer_reach(struct fmt_writer *w, const struct fmt_writer_reach *rr);

/* record --keep-last (fmt_wcarry.c): make in dst, a segment's writer
 * that takes its stacks from src alone, the stacks src has and dst lacks,
 * with src's ids, so that events name stacks by src's ids in both.
 * Returns 0 or -errno. */
int fmt_writer_copy_stacks(struct fmt_writer *dst, const struct fmt_writer *src);
/* The time unit w rounds times down to, in ns (1: nanoseconds). */
uint32_t fmt_writer_time_unit(const struct fmt_writer *w);
/* The highest stack id w has given. */
uint32_t fmt_writer_nr_stacks(const struct fmt_writer *w);

/* A mapping the writer holds live (fmt_writer_live_maps): a piece of an
 * mmap or mremap, as it is now, with its call's time, stack and context,
 * and the prot and flags it was mapped with. */
struct fmt_writer_map {
    uint64_t addr, size, ts_ns;
    uint32_t stack;
    struct fmt_writer_who who;
    uint32_t prot, flags;
};
typedef int fmt_writer_map_fn(void *arg, const struct fmt_writer_map *m);
/* Call fn once for each live mapping of every image, by image and address;
 * fn returns 0 to go on, anything else stops the walk and is returned. */
int fmt_writer_live_maps(const struct fmt_writer *w, fmt_writer_map_fn *fn, void *arg);

void fmt_writer_get_stats(const struct fmt_writer *w, struct fmt_writer_stats *st);

/* Free the writer (after finish, or instead of it on an error path). */
void fmt_writer_destroy(struct fmt_writer *w);

#endif
