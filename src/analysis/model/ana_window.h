/* SPDX-License-Identifier: MIT */
/* Windows Performance Analyzer's view of a time window [t0, t1] (both
 * ends included). Each heap block is AIFI (allocated inside, freed
 * inside), AIFO (inside, outstanding at t1), AOFI (before t0, freed inside)
 * or AOFO (before, still outstanding at t1). Impacting type: Transient =
 * AIFI; Impacting = AIFO and AOFI. Size = bytes allocated inside; Impacting
 * Size = sum(AIFO) - sum(AOFI). Count = allocations. The classes and their
 * columns are ana_wpa.h's, shared with the commit lifetimes' window.
 *
 * The cost is proportional to the window, not the trace: the reader seeks
 * to the chunk holding t0 and the per-stack live totals at that chunk give
 * what was outstanding before; frees carry their block's size, stack,
 * thread and time, so AOFI needs no memory of earlier blocks. Only a
 * --thread filter makes it read from the start (live totals are per
 * stack, not per thread). */
#ifndef ANA_WINDOW_H
#define ANA_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/core/ana_filter.h"
#include "analysis/core/ana_map.h"
#include "analysis/core/ana_scan.h"
#include "analysis/core/ana_wpa.h"
#include "analysis/model/ana_heaps.h"
#include "memscribe/trace.h"

/* Rows are keyed by one of these. */
enum ana_window_by {
    ANA_WINDOW_BY_STACK = 0,  /* key: stack id */
    ANA_WINDOW_BY_THREAD,     /* key: thread index */
    ANA_WINDOW_BY_SIZE_CLASS, /* key: size class (ana_histogram.h) */
    ANA_WINDOW_BY_HEAP,       /* key: heap handle (Windows traces: arg[1]); with pools
                                 (format 1.4), the id in heaps (malloc's too) */
};

/* One key's numbers. AOFO is known per key only when grouping by stack;
 * otherwise it is zero here and only the image totals carry it. */
struct ana_window_key {
    uint64_t key;
    uint32_t image;
    uint32_t tid; /* by thread: the thread's tid */
    struct ana_wpa c;
    /* Of c.nr[ANA_AOFI], the blocks a realloc ended (it resized or moved
     * them; its new block is AIFO under the realloc's own key): a row of
     * them alone reads count 1, size 0, impacting size -N, and says so. */
    uint64_t nr_aofi_realloc;
};

/* Bounded memory on process trees: called, when rows are stacks, with
 * image's keys (sorted by key) as the image ends at end_ns, no later than
 * the window's end: its keys are final then (AOFO aside: its per-image
 * total keeps it, the keys do not), and dropped when it returns. Returns
 * 0 or -errno. */
struct ana_window;
typedef int ana_window_retire_fn(void *arg, const struct ana_window *w, uint32_t image,
                                 const struct ana_window_key *keys, size_t n, uint64_t end_ns);

struct ana_window {
    /* The bounds counted: those asked, or in an aggregated trace's
     * aggregated stretch the cuts around them (rounded set). */
    uint64_t t0_ns, t1_ns;
    uint64_t asked_t0_ns, asked_t1_ns;
    bool rounded;
    enum ana_window_by by;
    struct ana_map keys;    /* (key, image) -> struct ana_window_key */
    struct ana_wpa *images; /* totals per image index */
    bool *image_seen;
    uint32_t nr_images;
    uint64_t nr_events_read; /* events up to t1 (the rest is decoded unused) */
    uint32_t first_chunk;    /* the chunk reading began at: 0 (with the index, T0's) */
    struct ana_heaps heaps;  /* by heap, a Linux trace: the heaps keys name */
    /* private, during the pass: live bytes and blocks per stack before
     * t0 (key stack + 1), the trace */
    struct ana_map live_;
    struct fmt_reader *r_;
    bool ranged; /* a range of ana_window_compute_index */
    ana_window_retire_fn *retire_;
    void *retire_arg_;
};

/* Compute the window. f may be NULL. Returns 0 or -errno (reader errors:
 * see fmt_reader_error()). Free with ana_window_release(). */
int ana_window_compute(struct ana_window *w, struct fmt_reader *r, struct ana_filter *f,
                       uint64_t t0_ns, uint64_t t1_ns, enum ana_window_by by,
                       ana_progress_fn *progress, void *progress_arg);

/* How ana_window_compute_index reads: nr_threads ranges of chunks at most,
 * each of min_range_events events at least (0: a million), each by its own
 * reader of path but the first. With retire (rows by stack), one range on
 * the caller's reader hands each image's keys to retire as it ends, as
 * ana_window_compute_retire does: the callback reads stacks through that
 * reader, which a range in another thread would be decoding, and a
 * process's keys are final at its end only when no range before holds a
 * part of them. */
struct ana_window_ranges {
    const char *path;
    unsigned nr_threads;
    uint64_t min_range_events;
    ana_window_retire_fn *retire;
    void *retire_arg;
};

/* The same window from the trace's index (ana_index.h): what is live at
 * t0 from the chunk summaries before the chunk that reaches t0, then the
 * events from that chunk on to t1, in ranges of chunks replayed at once
 * (the first by r) and summed; the chunks outside are not decoded (nor
 * checked: dump --verify checks the summaries). Every number is
 * ana_window_compute's but nr_events_read (from that chunk). Returns 0,
 * -ENOTSUP with *why when the index cannot answer (then release w and
 * compute), or -errno with a reader's message in err. */
int ana_window_compute_index(struct ana_window *w, struct fmt_reader *r,
                             const struct ana_window_ranges *rg, struct ana_filter *f,
                             uint64_t t0_ns, uint64_t t1_ns, enum ana_window_by by,
                             ana_progress_fn *progress, void *progress_arg, const char **why,
                             char *err, size_t err_size);
/* ana_window_compute with each image's keys handed to retire as it ends
 * (NULL: kept to the end). */
int ana_window_compute_retire(struct ana_window *w, struct fmt_reader *r, struct ana_filter *f,
                              uint64_t t0_ns, uint64_t t1_ns, enum ana_window_by by,
                              ana_window_retire_fn *retire, void *retire_arg,
                              ana_progress_fn *progress, void *progress_arg);
void ana_window_release(struct ana_window *w);

/* The same from a pass shared with other outputs: the heap replay p (its
 * filter: the processes counted) reads r up to w->t1_ns at least (t1_ns,
 * or in an aggregated trace the cut after it), and w takes its steps up to
 * then. r NULL: events fed by hand (ana_heap_replay_event), bounds as
 * given, no heaps by handle (a Linux trace's). Returns 0, -EINVAL (t1
 * before t0) or -E2BIG (too many consumers); w is ready after the pass. */
struct ana_heap_replay;
int ana_window_subscribe(struct ana_window *w, struct ana_heap_replay *p, struct fmt_reader *r,
                         uint64_t t0_ns, uint64_t t1_ns, enum ana_window_by by);

/* The keys with any block, in a fresh array (caller frees), by image and key.
 * Returns the count or -ENOMEM. */
long ana_window_keys(const struct ana_window *w, struct ana_window_key **out);

#endif
