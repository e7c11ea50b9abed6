/* SPDX-License-Identifier: MIT */
/* What ana_pmodel.c shares with the index's build (ana_pmodel_index.c)
 * and the totals' (ana_pmodel_totals.c): a range of chunks replayed into
 * a partial model, and the merge of ranges into one model. ana_pmodel.c
 * calls neither of them (the planner does, ana_plan.h). */
#ifndef ANA_PMODEL_INTERNAL_H
#define ANA_PMODEL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/model/ana_heap_replay.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_pmodel.h"

struct range {
    const char *path;
    const struct ana_model_options *opt;
    uint32_t first_chunk;
    uint64_t from_ns;   /* first event time of the range */
    uint64_t end_ns;    /* the next range's first time (progress) */
    uint32_t end_chunk; /* the next range's first chunk (0: none) */
    bool verify;        /* ana_pmodel_options.verify */
    bool paged_sites;   /* its model's sites indexed in pages (one chunk of the index) */
    /* The all-images peak is of the running processes' heap (a trace of
     * several processes' chunk totals): the merge bases it on the ranges'
     * changes of running_heap and running_blocks, not of heap, which
     * keeps what exited processes left. */
    bool running_base;
    uint64_t until_ns;
    uint64_t prog_end_ns; /* the range's last time, for progress */
    ana_progress_fn *progress;
    void *progress_arg;
    struct ana_heap_replay replay; /* partial: its stepper keeps the threads' state */
    struct ana_model *m;
    int rc;
    char err[512];
};

/* Replay range arg (a struct range) into its partial model: a thread's
 * body. rc and err say how it ended. */
void *ana_pmodel_run_range(void *arg);

/* Merge the n ranges' partial models, in order, into out (made by
 * ana_model_create). Returns 0 or -ENOMEM. */
int ana_pmodel_merge(struct ana_model *out, struct range *rg, unsigned n);

/* The shares of the peaks of a trace of several processes with format
 * 1.11's all-processes totals (ana_pmodel_peaks.c), found before the
 * merge (ana_pmodel_peaks_find), from replays of the chunks where they
 * are: each site's bytes at its process's peak and at the running
 * processes' peak (and its program's), those of shares (enum ana_shares)
 * only; then given to the merged model's sites.
 * Returns 0, -ENOTSUP (blocks of no stack: not a process's; or the
 * chunks to replay hold more than max_replayed events: why in err), -EPROTO
 * (the totals disagree with the events, or a corrupt trace: err says
 * why), -ENOMEM. */
struct ana_pmodel_peaks;
int ana_pmodel_peaks_find(struct ana_pmodel_peaks **out, struct fmt_reader *r, const char *path,
                          const struct ana_model_options *opt, unsigned shares,
                          uint64_t max_replayed, char *err, size_t err_size);
/* Before image is retired from m (a fold): its sites get their shares,
 * each stack's once (a site of it made again later, by an event after
 * its exit, has none, as a replay's). Returns 0 or -ENOMEM. */
int ana_pmodel_peaks_give_image(struct ana_pmodel_peaks *p, struct ana_model *m, uint32_t image);
/* After the merge: m's scopes get their peaks (the running RSS's, the
 * programs'), and its sites not given theirs yet their shares. Returns 0,
 * -ENOTSUP or -ENOMEM. */
int ana_pmodel_peaks_give(struct ana_pmodel_peaks *p, struct ana_model *m);
void ana_pmodel_peaks_free(struct ana_pmodel_peaks *p);

/* The per-program view of a trace of several processes from its chunk
 * totals (ana_pmodel_progs.c), for the peaks walk (ana_pmodel_peaks.c),
 * which feeds it each image's totals with the image's state at the
 * chunk's start (struct ana_pmodel_before), in two passes over the chunks:
 * scan (where each program's peak can be: the chunks to replay), then step
 * (the peaks in order, from the exact chunks and the replays). */
struct ana_pmodel_before {
    int64_t heap, blocks; /* its heap and live blocks */
    int64_t rss;          /* its latest RSS sample (0: none yet) */
    bool ended;           /* it exited (or exec'd) in an earlier chunk */
};

struct ana_pmodel_prog;
struct ana_pmodel_doubt;
struct ana_pmodel_share;
struct ana_pmodel_progs {
    const struct ana_programs *programs;
    struct ana_pmodel_prog *v;
    uint32_t *touched; /* the programs with a running image in the chunk read */
    uint32_t nr_touched;
    struct ana_pmodel_doubt *doubts; /* scan: chunks where totals bound a program's highest */
    size_t nr_doubts, cap_doubts;
    struct ana_pmodel_share *shares; /* step: sites' bytes at a program's peak, by replay */
    size_t nr_shares, cap_shares;
};

/* NULL programs: every call does nothing. Returns 0 or -ENOMEM. */
int ana_pmodel_progs_init(struct ana_pmodel_progs *p, const struct ana_programs *programs);
void ana_pmodel_progs_release(struct ana_pmodel_progs *p);
/* Image t->image's totals of chunk k, its state at the chunk's start b. */
void ana_pmodel_progs_image(struct ana_pmodel_progs *p, uint32_t k,
                            const struct ana_pmodel_before *b, const struct fmt_image_totals *t);
/* Chunk k's part of a program (format 1.12), after its images: that
 * program's highest there is exact, unless the part disagrees with its
 * processes' own parts (then it is not used). Returns 0. */
int ana_pmodel_progs_part(struct ana_pmodel_progs *p, uint32_t k, const struct fmt_prog_totals *t);
/* Chunk k read (scan): its exact values and bounds noted. Returns 0 or
 * -ENOMEM. */
int ana_pmodel_progs_scanned(struct ana_pmodel_progs *p, uint32_t k);
/* After the scan: set replay[k] for each chunk that may hold a program's
 * peak (and, with shares, where its highest exact value is, whose shares
 * a replay gives); the running sums start again from the trace's start. */
void ana_pmodel_progs_mark(struct ana_pmodel_progs *p, bool shares, bool *replay);
/* Chunk k read (step), replayed or not: the exact values of the programs
 * one process of which ran in it pass their peaks so far. */
void ana_pmodel_progs_stepped(struct ana_pmodel_progs *p, uint32_t k, bool replayed);
/* A replay of chunk k from the step's state: seed its model m (made with
 * the programs) before, take its peaks and shares after (0 or -ENOMEM). */
void ana_pmodel_progs_seed(const struct ana_pmodel_progs *p, struct ana_model *m);
int ana_pmodel_progs_take(struct ana_pmodel_progs *p, const struct ana_model *m, uint32_t k);
/* The programs' scopes into the totals' model m (made with the programs;
 * ana_model_finish sums their counters after). Returns 0, or -ENOTSUP
 * with shares asked: a program's peak in a chunk not replayed, whose
 * shares the totals cannot say. */
int ana_pmodel_progs_apply(struct ana_pmodel_progs *p, bool shares, struct ana_model *m);
/* After the walk: the sites' bytes at their programs' peaks, in *out (*nr
 * of them, in no order; NULL for none), which the caller frees. Returns 0
 * or -ENOMEM. */
struct ana_pmodel_stack_share {
    uint32_t stack;
    uint64_t bytes;
};
int ana_pmodel_progs_settle(struct ana_pmodel_progs *p, struct ana_pmodel_stack_share **out,
                            size_t *nr);

/* The image of stack in a trace of several processes (ana_pmodel_totals.c):
 * 0, -ENOTSUP for stack 0 (blocks of no stack: not a process's), -EPROTO
 * (a stack the trace does not define, or of no image it has), -errno. */
int ana_pmodel_stack_image(struct fmt_reader *r, uint32_t stack, uint32_t *image);

/* opt without the per-program view and the fold: the options of a range
 * the index's build or the totals' merge, whose whole model then finds
 * the programs' peaks and feeds the fold (ana_pmodel.c). */
struct ana_model_options ana_pmodel_plain_options(const struct ana_model_options *opt);

/* Add p's counters (ANA_SCOPE_COUNTERS) and time span to r's. */
void ana_pmodel_add_counts(struct ana_scope *r, const struct ana_scope *p);

#endif
