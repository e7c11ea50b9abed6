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
 * 1.11's all-processes totals (ana_pmodel_peaks.c): every site of m (the
 * totals' merged model) gets its bytes at its process's peak and at the
 * running processes' peak, from replays of the chunks where they are.
 * Returns 0, -ENOTSUP (blocks of no stack: not a process's), -EPROTO
 * (the totals disagree with the events, or a corrupt trace: err says
 * why), -ENOMEM. */
int ana_pmodel_peaks(struct ana_model *m, struct fmt_reader *r, const char *path,
                     const struct ana_model_options *opt, char *err, size_t err_size);

/* The image of stack in a trace of several processes (ana_pmodel_totals.c):
 * 0, -ENOTSUP for stack 0 (blocks of no stack: not a process's), -EPROTO
 * (a stack the trace does not define, or of no image it has), -errno. */
int ana_pmodel_stack_image(struct fmt_reader *r, uint32_t stack, uint32_t *image);

/* Add p's counters (ANA_SCOPE_COUNTERS) and time span to r's. */
void ana_pmodel_add_counts(struct ana_scope *r, const struct ana_scope *p);

#endif
