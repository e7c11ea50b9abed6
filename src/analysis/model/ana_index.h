/* SPDX-License-Identifier: MIT */
/* The trace's index (docs/format.md, SUMMARY): each chunk's summary holds
 * the change of every stack's live heap over the chunk, so what is live
 * at the start of chunk k, per stack, is the sum of the summaries before
 * it, and a question about a moment T needs the events of the chunk that
 * reaches T only (leaks --index, window --index). The summaries are taken
 * on trust: `memscribe dump --verify` holds them against the events. */
#ifndef ANA_INDEX_H
#define ANA_INDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/core/ana_filter.h"
#include "memscribe/trace.h"

/* Why the index cannot say what is live for this trace and selection, or
 * NULL: a sampled trace (its summaries are in recorded sizes, its answers
 * estimates), an aggregated one (its batches), one with pools or Windows
 * heaps (a heap's destruction ends blocks without a reference), a thread
 * selection (--tid: the summaries are per stack, not per thread). */
const char *ana_index_refusal(struct fmt_reader *r, const struct ana_filter *f);

/* Why the chunks' totals cannot answer (report --index, timeline --index):
 * the trace has none (it was recorded without record --totals), or NULL. */
const char *ana_index_no_totals(struct fmt_reader *r);

/* What is live at the start of chunk k (nr_chunks: the end), per stack of
 * a selected image. */
typedef int ana_index_live_fn(void *arg, uint32_t stack, uint32_t image, int64_t bytes,
                              int64_t blocks);

/* Every stack of image is given (ana_index_live_fn), or, for an image the
 * filter leaves out (selected false), none will be: its stacks are of no
 * more use to the walk. Called between two summaries' reads, so it may
 * decode stacks with r. Returns 0 or -errno, which ends the walk. */
typedef int ana_index_image_fn(void *arg, uint32_t image, bool selected);

/* Calls fn for each stack with live blocks or bytes at chunk k's start,
 * image by image: each image's stacks in increasing id order, then done
 * (if not NULL), the images in the order of their last change in the
 * summaries before chunk k (then by index); an image with no change there
 * gets neither. The summaries are read twice, first for each image's last
 * change, then summed, each image's stacks held from its first change to
 * its last: a build's answer holds the stacks of the processes running at
 * one chunk, not of the whole build, and no stack is decoded
 * (fmt_reader_stack_image). Returns 0, fn's or done's non-zero return,
 * -ENOTSUP for blocks without a stack in a trace of several processes
 * (whose process the summaries do not say; before any call of fn), or
 * -errno. */
int ana_index_live_at(struct fmt_reader *r, uint32_t k, const struct ana_filter *f,
                      ana_index_live_fn *fn, ana_index_image_fn *done, void *arg);

/* The message for ana_index_live_at's -ENOTSUP. */
extern const char ana_index_stackless[];

#endif
