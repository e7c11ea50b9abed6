/* SPDX-License-Identifier: MIT */
/* The writer's state, shared by its pieces: fmt_writer.c (the file's
 * header, META and index), fmt_wevent.c (encoding events into columns),
 * fmt_wctx.c (context ids and their prediction slots), fmt_wdefs.c (the
 * definitions life-cycle events add) and fmt_wchunk.c (turning a finished
 * chunk into CHUNK and DEFS blocks). */
#ifndef FMT_WRITER_INTERNAL_H
#define FMT_WRITER_INTERNAL_H

#include "format/fmt_zc_internal.h"
#include <stdint.h>

#include "format/fmt_buf_internal.h"
#include "format/fmt_layout_internal.h"
#include "format/fmt_pred_internal.h"
#include "format/fmt_recent_internal.h"
#include "format/fmt_tpack_internal.h"
#include "format/fmt_wdelta_internal.h"
#include "format/fmt_wlive_internal.h"
#include "format/fmt_wout_internal.h"
#include "format/fmt_wpool_internal.h"
#include "format/fmt_writer.h"
#include "format/fmt_wstack_internal.h"
#include "format/fmt_wtotals_internal.h"
#include "format/fmt_wvm_internal.h"

#define FMT_DEFAULT_ZSTD_LEVEL 1
/* Format 1.5 writers at the default level try the deeper search
 * (fmt_zc_compress_deep) on each chunk before the first of full size, then
 * every FMT_REPEAT_PROBE-th, and keep it for the columns whose repeats it
 * finds (fmt_wchunk.c). */
#define FMT_REPEAT_PROBE 8
/* Fewer blocks outlive a chunk of 2^19 events than one of 2^18, and a
 * free of a block from an earlier chunk repeats its facts (docs/format-events.md,
 * "References"): python3's trace came out 7 % smaller (bench/notes/
 * trace-size.md, "Chunks of 2^19 events") for ~5 MiB more of the
 * recorder's memory and 20-30 MB more of a reader's (a chunk decoded).
 * 2^20 (the format's most) made it 4 % smaller still, but cost sqlite3's
 * recorder 2 % more instructions. A short program's chunks are as before. */
#define FMT_DEFAULT_CHUNK_EVENTS (1u << 19)
/* The first chunk's events: each next chunk holds twice as many as the
 * one before, up to chunk_events. A short program's trace (cc1 at -O2:
 * 260,000 events) then ends in a chunk of a quarter of them, not in the
 * whole trace, compressed after the program exits while the user waits
 * (63-70 -> 43-50 ms of the recorder's start and tail); compressed during
 * the run, the others cost the program nothing on a second core. A long
 * program's chunks are all of the full size but the first few. */
#define FMT_FIRST_CHUNK_EVENTS (1u << 16)
#define FMT_CHUNK_MAX_STRS (8u << 20) /* flush early when strings pile up */

/* A module the trace loaded, so its unload finds its id. */
struct fmt_wmod {
    uint64_t base;
    uint32_t image;
    uint32_t gone;
};

struct fmt_writer {
    struct fmt_wout out;
    int level;
    uint32_t chunk_events;  /* the most events of a chunk */
    uint32_t chunk_limit;   /* this chunk's: FMT_FIRST_CHUNK_EVENTS doubled per chunk */
    uint32_t full_chunks;   /* chunks written since chunk_limit reached chunk_events */
    int pe;                 /* FMT_FEAT_PE_PROCESS: Windows kinds allowed */
    uint32_t tu;            /* time unit, ns (1: nanoseconds) */
    int v13;                /* format 1.3: FMT_FEAT_TIME_UNIT, REF split, FACT_* columns */
    int tpack;              /* format 1.4: FMT_FEAT_TIME_PACK, time deltas packed */
    struct fmt_tpack tp[2]; /* the TIME and FREE_TIME groups being filled */
    int pools;              /* format 1.4: FMT_FEAT_POOLS, pool events allowed (pool is set up) */
    int v15;                /* format 1.5: FMT_FEAT_FREE_RANKS */
    int v17;                /* format 1.7: FMT_FEAT_REALLOC_PRED */
    struct fmt_zc zc;       /* zstd or zlib */

    struct fmt_buf col[FMT_NR_COLUMNS];
    int rep_deep;                    /* tries the deeper search (1.5, default level) */
    uint8_t col_rep[FMT_NR_COLUMNS]; /* the column is compressed deeper */
    struct fmt_buf probe;            /* a column compressed at the other level */
    int finishing;                   /* fmt_writer_finish: the last chunk is flushed */
    uint32_t room;                   /* events the columns surely have space for */
    struct fmt_buf defs;             /* pending DEFS records, stacks excepted */
    int reach;                       /* FMT_FEAT_REACH: REACH records allowed (fmt_wreach.c) */
    int agg;                         /* FMT_FEAT_AGGREGATE (1.8): aggregated stretches */
    int counters;                    /* FMT_FEAT_COUNTERS (1.13): FMT_EV_COUNTER events */
    uint64_t agg_ns;                 /* the META's period (aggregated from the start), or 0 */
    int agg_seen;                    /* the FMT_EV_AGGREGATE event was written */
    struct fmt_buf scratch;          /* compressed columns, DEFS payloads */

    /* The chunk being built. */
    uint32_t nr_chunk_events;
    uint64_t nr_chunks;
    uint64_t chunk_first_serial;
    uint64_t chunk_base_ts;
    uint64_t chunk_min_ts;
    uint64_t chunk_max_ts;
    uint64_t chunk_heap_allocs;
    uint64_t chunk_dropped;
    uint64_t prev_ts;
    uint64_t prev_fact_addr;   /* FACT_ADDR's previous address (1.3) */
    uint64_t prev_fact_ts;     /* FACT_TIME's previous time (1.3) */
    uint64_t prev_fact_serial; /* the previous earlier-chunk block's serial (1.5) */
    uint32_t prev_stack[2];    /* last stack id in STACK and in FREE_STACK */
    uint32_t cur_ctx;
    uint64_t next_serial;

    /* Contexts: (image, thread, pid, tid) tuples; events name one by id. */
    struct fmt_writer_who *ctxs; /* contexts by id; [0] unused */
    /* Address prediction state of the contexts active in this chunk, in
     * slots; ctx_slot[ctx] = chunk number + 1 << FMT_SLOT_BITS | slot. */
    uint64_t *ctx_slot;
    struct fmt_pred *slots;
    uint32_t nr_slots;
    uint32_t cap_slots;
    struct fmt_pred *pred; /* the current event's */
    uint32_t nr_ctxs;
    uint32_t cap_ctxs;
    uint32_t *ctx_hash;
    uint32_t ctx_mask;

    struct fmt_recent recent;           /* 1.5: the chunk's ended addresses */
    struct fmt_recent_index *recent_ix; /* 1.5: and where each is in the ring */

    struct fmt_wlive live;
    struct fmt_wpool pool; /* with pools only */
    struct fmt_wvm vm;
    struct fmt_wstack stacks;

    struct fmt_wdeltas deltas;
    struct fmt_wtotals tot; /* 1.10: the chunk's totals (feature bit TOTALS) */

    struct fmt_wmod *mods; /* by id - 1 */
    uint32_t nr_mods;
    uint32_t cap_mods;

    struct fmt_writer_stats st;
};

/* A time rounded down to the time unit (docs/format.md, "Time unit"). 1 us
 * is a constant divisor, a multiply; record's default, 10 us, divides, which
 * measured no slower (rec_replay on the pool storm: 53.8-54.3 ns/event with
 * 10 us made constant too, the same without). */
static inline uint64_t fmt_wtime_round(const struct fmt_writer *w, uint64_t ts_ns)
{
    if (w->tu == 1000)
        return ts_ns - ts_ns % 1000;
    return w->tu > 1 ? ts_ns - ts_ns % w->tu : ts_ns;
}

/* A difference of two rounded times, in time units (exact). */
static inline int64_t fmt_wtime_units(const struct fmt_writer *w, int64_t d_ns)
{
    if (w->tu == 1000)
        return d_ns / 1000;
    return w->tu > 1 ? d_ns / (int64_t)w->tu : d_ns;
}

/* Write the chunk being built (if any) and the DEFS block after it.
 * Returns 0 or -errno. */
int fmt_wchunk_flush(struct fmt_writer *w);

/* Write a DEFS block with what is pending and no chunk summary. */
int fmt_wchunk_flush_defs(struct fmt_writer *w);

/* Append a DEFS record of type whose body is built in a small buffer.
 * Returns 0 or -ENOMEM. */
int fmt_wdefs_add(struct fmt_writer *w, unsigned type, const struct fmt_buf *body);

/* A POOL record (format 1.4): pool handle of image, created at ts_ns, named
 * name (name_len bytes, may be 0). Returns 0 or -ENOMEM. */
int fmt_wdefs_pool(struct fmt_writer *w, uint32_t image, uint64_t handle, uint64_t ts_ns,
                   const char *name, uint32_t name_len);

/* The AGGREGATE record (format 1.8) of an FMT_EV_AGGREGATE event: its
 * time and period. Returns 0 or -ENOMEM. */
int fmt_wdefs_aggregate(struct fmt_writer *w, const struct fmt_event *ev);

/* The definitions a life-cycle event of context ctx adds (images, thread
 * names, modules), and the module id its MISC carries. Returns 0 or
 * -errno (-EINVAL: a module beyond the format's limits). */
int fmt_wdefs_life(struct fmt_writer *w, const struct fmt_event *ev, uint32_t ctx);

#endif
