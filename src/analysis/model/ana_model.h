/* SPDX-License-Identifier: MIT */
/* The heap model: replays a trace's events and keeps, per process image and
 * per stack (call site), every number the reports print: calls per
 * function, allocations, bytes, heap in use and its peak (with when),
 * each stack's live bytes at that peak, leaked (live) bytes and blocks,
 * temporary allocations, RSS. Meanings: docs/architecture.md, "Meanings".
 *
 * Memory grows with distinct stacks, threads and images (and with live
 * blocks when keep_blocks is set), never with the number of events: every
 * event costs O(1). Feed events in trace order with ana_model_event(),
 * then call ana_model_finish() before reading peak contributions. The
 * model needs no reader: frees come with their block resolved (ref,
 * ref_size, ref_stack, ref_thread), as struct fmt_event defines. */
#ifndef ANA_MODEL_H
#define ANA_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/core/ana_filter.h"
#include "analysis/core/ana_programs.h"
#include "analysis/model/ana_step.h"
#include "memscribe/event.h"

#define ANA_NR_KINDS 64 /* enum fmt_kind values are below this */

/* nr_calls' slots: an event kind (below ANA_NR_KINDS), or past them a
 * call of the program's own pools (FMT_EVF_POOL, memscribe/annotate.h),
 * counted apart from malloc's: a pool's block is announced, not a call to
 * malloc (and usually lies in a block that was one). */
enum ana_call_slot {
    ANA_CALL_POOL_CREATE = ANA_NR_KINDS,
    ANA_CALL_POOL_DESTROY,
    ANA_CALL_POOL_ALLOC,
    ANA_CALL_POOL_REALLOC,
    ANA_CALL_POOL_FREE,
    /* An aggregated trace's blocks born and freed inside one interval
     * (FMT_EV_HEAP_BATCH, docs/aggregate.md): their allocations and frees,
     * whose functions the recorder does not tell apart. */
    ANA_CALL_BATCH_ALLOC,
    ANA_CALL_BATCH_FREE,
    ANA_NR_CALLS
};

/* The slot ev counts in, or ANA_NR_CALLS for none: a free that a heap's
 * destroy made (FMT_EVF_HEAP_DESTROYED) is no call. */
static inline unsigned ana_call_slot(const struct fmt_event *ev)
{
    if (ev->kind >= ANA_NR_KINDS ||
        (ev->kind == FMT_EV_FREE && (ev->flags & FMT_EVF_HEAP_DESTROYED)))
        return ANA_NR_CALLS;
    if (!(ev->flags & FMT_EVF_POOL))
        return ev->kind;
    switch (ev->kind) {
    case FMT_EV_HEAP_CREATE:
        return ANA_CALL_POOL_CREATE;
    case FMT_EV_HEAP_DESTROY:
        return ANA_CALL_POOL_DESTROY;
    case FMT_EV_REALLOC:
        return ANA_CALL_POOL_REALLOC;
    case FMT_EV_FREE:
        return ANA_CALL_POOL_FREE;
    default:
        return ANA_CALL_POOL_ALLOC;
    }
}

/* A slot's name as report lists it ("malloc", "pool_alloc"), or NULL for a
 * slot that is not a memory call (a process's, thread's or module's life). */
const char *ana_call_name(unsigned slot);

/* Whether a sampled trace estimates the slot's count (heap blocks'
 * calls), as against counting every call (mappings). */
bool ana_call_estimated(unsigned slot);

/* Bounded memory on process trees (docs/architecture.md, "The heap
 * replay"): fn is called when an image ends (its exit or exec, and at
 * ana_model_finish for each image still running) with the image's sites
 * final but for their shares at peaks still to come (ana_fold.h decides
 * those), and the sites are dropped when it returns: ana_model_site() has
 * them no more. Returns 0 or -errno (which stops the replay). */
struct ana_model;
typedef int ana_model_retire_fn(void *arg, const struct ana_model *m, uint32_t image);
struct ana_model_retire {
    ana_model_retire_fn *fn; /* NULL: sites are kept to the end */
    void *arg;
    /* An image the filter leaves out ended at end_ns (no site of it is
     * kept: its stacks are of no more use). NULL: nothing is done. */
    int (*left_out)(void *arg, uint32_t image, uint64_t end_ns);
};

/* In the retire callback: fn(arg, stack, site) for each of image's sites
 * (stack: its stack id), stopping at the first non-zero return, which it
 * returns (else 0). */
struct ana_site;
typedef int ana_model_site_fn(void *arg, uint32_t stack, const struct ana_site *s);
int ana_model_each_site_of(const struct ana_model *m, uint32_t image, ana_model_site_fn *fn,
                           void *arg);

/* The peaks whose shares a caller reads: each site's bytes at its own
 * process's peak (peak_bytes), at its program's (the per-program view)
 * and at all processes' (peak_all_bytes). A route that replays chunks to
 * find them (the totals') finds only those asked. */
enum ana_shares {
    ANA_SHARES_IMAGE = 1,
    ANA_SHARES_PROGRAM = 2,
    ANA_SHARES_ALL = 4,
    ANA_SHARES_EVERY = 7,
};

struct ana_model_options {
    struct ana_filter *filter; /* NULL: every event */
    /* Keep each live block (serial, address, size, time, thread): for
     * `leaks --all`. Costs memory per live block. */
    bool keep_blocks;
    /* With keep_blocks, non-zero: of the images that ended, only their
     * blocks among the first blocks_first (by serial) of all ended images
     * are kept (ana_model_blocks then holds the first blocks_first of all
     * and more); the sites may then be retired too. */
    uint32_t blocks_first;
    /* Temporary (ana_step.h): by default nothing else by the thread
     * between allocation and free. loose_temporary (implied by a non-zero
     * threshold): frees and at most temporary_threshold other allocations
     * by the thread in between. A non-zero threshold implies keep_blocks. */
    bool loose_temporary;
    uint64_t temporary_threshold;
    /* The per-program view (NULL: none): a scope per program of this
     * grouping, and each site's live bytes at its program's peak. Not for
     * a partial model (ana_pmodel_supported says no). */
    const struct ana_programs *programs;
    /* Sites handed over and dropped at their image's end (not for a
     * partial model, nor with keep_blocks but with blocks_first). */
    struct ana_model_retire retire;
};

/* A site's counters: they add up over the ranges of a parallel replay,
 * which merges them by this one list (ana_pmodel.c), so a counter added
 * here is merged too. X(type, name). live_bytes and live_blocks: at the
 * end (or where replay stopped), the leaks; in a range, its delta.
 * In a sampled trace (ana_site_se.h): var_* the estimated variances of
 * alloc_bytes, nr_allocs, live_bytes and live_blocks, and nr_recorded and
 * live_recorded the recorded blocks that make nr_allocs and live_blocks;
 * all 0 in an exact trace. The variances are sums of doubles: another
 * order of adding (a parallel replay's) may change their last bits. */
#define ANA_SITE_COUNTERS(X)                                                                       \
    X(uint64_t, nr_allocs)                                                                         \
    X(uint64_t, alloc_bytes)                                                                       \
    X(uint64_t, nr_temporary)                                                                      \
    X(uint64_t, temporary_bytes)                                                                   \
    X(int64_t, live_bytes)                                                                         \
    X(int64_t, live_blocks)                                                                        \
    X(double, var_alloc_bytes)                                                                     \
    X(double, var_allocs)                                                                          \
    X(double, var_live_bytes)                                                                      \
    X(double, var_live_blocks)                                                                     \
    X(uint64_t, nr_recorded)                                                                       \
    X(int64_t, live_recorded)

#define ANA_SITE_COUNTER_FIELD(type, name) type name;

/* One call site: the numbers of one recorded stack id. */
struct ana_site {
    uint32_t image;
    ANA_SITE_COUNTERS(ANA_SITE_COUNTER_FIELD)
    uint64_t peak_bytes;     /* live bytes at its image's peak (after finish) */
    uint64_t peak_all_bytes; /* live bytes at the peak of all selected images (0 if its
                                image had ended by then) */
    uint64_t gen_;           /* private: the lazy peak bookkeeping */
    uint64_t gen_all_;
};

/* A scope's counters, all uint64_t: they add up over the ranges of a
 * parallel replay, which merges them by this one list (ana_pmodel.c), so
 * a counter added here is merged too. X(name, dimension): nr_calls per
 * slot (enum ana_call_slot: an event kind or a pool's call; failed calls
 * included); nr_arena_maps the program's own mmap calls of 256 KiB or
 * 1 MiB, read-write, private and anonymous: CPython's pymalloc takes its
 * arenas so (report's pymalloc note); nr_allocs heap blocks started,
 * alloc_bytes their requested bytes; nr_frees heap blocks ended;
 * nr_unmatched_frees frees and reallocs of an address never seen
 * allocated; nr_dropped events the collector lost; nr_start_maps the
 * mappings a process had when its stream began (the snapshot: not calls,
 * not in nr_calls); nr_carried and carried_bytes a --keep-last segment's
 * heap blocks live when it began (origin SNAPSHOT: in heap and the leaks,
 * not calls, not in nr_allocs and alloc_bytes). */
#define ANA_SCOPE_COUNTERS(X)                                                                      \
    X(nr_calls, [ANA_NR_CALLS])                                                                    \
    X(nr_arena_maps, )                                                                             \
    X(nr_start_maps, )                                                                             \
    X(nr_carried, )                                                                                \
    X(carried_bytes, )                                                                             \
    X(nr_failed, )                                                                                 \
    X(nr_allocs, )                                                                                 \
    X(alloc_bytes, )                                                                               \
    X(nr_frees, )                                                                                  \
    X(freed_bytes, )                                                                               \
    X(nr_unmatched_frees, )                                                                        \
    X(nr_temporary, )                                                                              \
    X(temporary_bytes, )                                                                           \
    X(nr_dropped, )

#define ANA_SCOPE_COUNTER_FIELD(name, dim) uint64_t name dim;

/* The totals of one process image, or of all of them. */
struct ana_scope {
    uint32_t image; /* UINT32_MAX for the all-images scope */
    uint32_t pid;
    bool seen; /* some event of this image was selected */
    uint64_t first_ns, last_ns;
    ANA_SCOPE_COUNTERS(ANA_SCOPE_COUNTER_FIELD)
    /* Heap in use now and its blocks; after an image's exit, what it left
     * (its leaks). The all-images scope: the sum over every image, ended
     * ones included (all leaks at the end). */
    uint64_t heap;
    uint64_t live_blocks;
    /* The all-images scope only: heap and blocks of the images still
     * running (an image leaves at its exit or exec). Its peak, peak_blocks
     * and max_since_mark follow these (a tree's peak sums live processes);
     * an image's follow heap. */
    uint64_t running_heap;
    uint64_t running_blocks;
    uint64_t peak;    /* maximum of heap (all: of running_heap) */
    uint64_t peak_ns; /* first time it was reached */
    uint64_t peak_blocks;
    uint64_t max_since_mark; /* maximum of heap (all: running_heap) since ana_model_mark() */
    bool ended;              /* images: the image exited (or exec replaced it) */
    uint64_t end_ns;         /* when */
    uint64_t end_gen_;       /* private: the all-images peak generation then */
    /* Images of a sampled trace (format 1.13): the exact counters
     * (enum fmt_counter) as last written, and when the peak was last
     * raised (a recorder round or two after it happened); the
     * all-images scope has none (ana_exact.h adds the images up).
     * exact_set: the counters written (a range of a parallel replay has
     * only those that changed in it). */
    bool has_exact;
    uint64_t exact[FMT_CTR_ALL];
    uint64_t exact_set[(FMT_CTR_ALL + 63) / 64];
    uint64_t exact_peak_ns;
    uint64_t rss; /* latest RSS sample (all: sum of the running images' latest) */
    uint64_t rss_peak;
    uint64_t rss_peak_ns;
    bool has_rss;
    uint64_t gen_; /* private: peak generation */
};

/* A live block (keep_blocks). */
struct ana_block {
    uint64_t serial;
    uint64_t addr;
    uint64_t size;
    uint64_t ts_ns;
    uint32_t stack;
    uint32_t thread;
    uint32_t image;
    uint32_t tid;
};

int ana_model_create(struct ana_model **out, const struct ana_model_options *opt);
/* Set opt.retire of a model no event reached yet (a consumer subscribed
 * after the model was made decides it). 0, or -EINVAL (sites made
 * already, blocks kept, or a partial model). */
int ana_model_set_retire(struct ana_model *m, struct ana_model_retire retire);
void ana_model_destroy(struct ana_model *m);

/* Apply one event. Returns 0 or -ENOMEM. */
int ana_model_event(struct ana_model *m, const struct fmt_event *ev);

/* Apply one event whose meaning st was decided by a stepper with the same
 * filter and temporary rule as the model's (ana_model_event() runs the
 * model's own). Returns 0 or -ENOMEM. */
int ana_model_apply(struct ana_model *m, const struct fmt_event *ev, const struct ana_step *st);

/* ana_model_event() that also gives what the event meant. */
int ana_model_event_step(struct ana_model *m, const struct fmt_event *ev, struct ana_step *st);

/* The stepper options of a heap replay that feeds a model made with mo
 * (NULL: the defaults): its filter and temporary rule. */
struct ana_step_options ana_model_step_options(const struct ana_model_options *mo);

/* Feed m from the heap replay p (ana_heap_replay.h): each event's step is
 * applied (ana_model_apply) and the model finished (ana_model_finish) at
 * the end of the pass. p's stepper must decide as m would: its options
 * those of ana_model_step_options(), partial as m is. Returns 0, -EINVAL
 * (other options) or -E2BIG (too many consumers). */
struct ana_heap_replay;
int ana_model_subscribe(struct ana_model *m, struct ana_heap_replay *p);

/* *out: the finished model of the trace r reads, in one pass of the heap
 * replay over so's part (NULL: the whole trace), its sites sized once for
 * every stack id of the trace. Returns 0 or -errno (reader errors: see
 * fmt_reader_error()); *out is NULL on failure. */
struct ana_scan_options;
int ana_model_build(struct ana_model **out, struct fmt_reader *r,
                    const struct ana_model_options *opt, const struct ana_scan_options *so);

/* Resolve each site's peak contribution. Call once after the last event
 * (more events may follow; call it again after them). With opt.retire,
 * the images' sites are then handed over and dropped. Returns 0 or the
 * retire callback's -errno. */
int ana_model_finish(struct ana_model *m);

/* Scopes of the images seen, in image order (index = image index; an
 * image with no selected event has seen == false). */
uint32_t ana_model_nr_images(const struct ana_model *m);
const struct ana_scope *ana_model_image(const struct ana_model *m, uint32_t image);
const struct ana_scope *ana_model_total(const struct ana_model *m);
/* Images whose scope has seen set. */
uint32_t ana_model_nr_seen(const struct ana_model *m);
/* Whether every image seen ended in the trace (exit or exec): its blocks
 * live at the end are leaked. Where one had not ended (an attach, a trace
 * cut short), they are "live at the end" (docs/architecture.md). */
bool ana_model_all_ended(const struct ana_model *m);

/* Sites by stack id, 0..nr_sites-1 (id 0: events without a stack). */
uint32_t ana_model_nr_sites(const struct ana_model *m);
const struct ana_site *ana_model_site(const struct ana_model *m, uint32_t stack);

/* Programs (ana_model_options.programs; 0 without): scope k is the
 * programs' k-th, like the total restricted to its images: heap and
 * blocks their sum (ended ones' leaks included), peak the largest sum of
 * its running images' heaps, RSS the sum of their latest samples; the
 * counters summed; image is UINT32_MAX, pid the first image's. */
uint32_t ana_model_nr_programs(const struct ana_model *m);
const struct ana_scope *ana_model_program(const struct ana_model *m, uint32_t program);
/* Site stack's live bytes at its program's peak (after finish). */
uint64_t ana_model_site_program_peak(const struct ana_model *m, uint32_t stack);

/* Do two finished models of one trace differ in a number (every scope's,
 * the programs' too, counters, heap, peak, end and RSS; with sites, every
 * site's counters and shares of the peaks, its program's too)? 1 with the first difference said in
 * why (a's value, then b's), else 0 (ana_model_same.c: report --verify holds the chunks' totals
 * so). */
int ana_model_differs(const struct ana_model *a, const struct ana_model *b, bool sites, char *why,
                      size_t size);

/* Reset every scope's max_since_mark to its heap now (timelines). */
void ana_model_mark(struct ana_model *m);

/* Live blocks (keep_blocks): fills a fresh malloc'd array sorted by
 * serial, to be freed by the caller. Returns the count or -ENOMEM. */
long ana_model_blocks(const struct ana_model *m, struct ana_block **out);

/* fn(arg, b) for each of image's live blocks kept (keep_blocks; in the
 * retire callback of an ended image, with blocks_first: those among the
 * first), stopping at the first non-zero return, which it returns. */
typedef int ana_model_block_fn(void *arg, const struct ana_block *b);
int ana_model_each_block_of(const struct ana_model *m, uint32_t image, ana_model_block_fn *fn,
                            void *arg);

#endif
