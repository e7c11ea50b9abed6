/* SPDX-License-Identifier: MIT */
/* A reader's stacks let go as the processes of a tree end (docs/
 * architecture.md, "Process trees: an image's state goes at its end"): a
 * trace opened with FMT_OPEN_STACKS_LATER decodes each process's stacks as
 * they are needed, and once a process ended a lag ago (ana_ended.h: an
 * event of it may come that much later) they go, with the stack labeler's
 * nodes that named them. What a command shows at the end it keeps first
 * (ana_stacks_get). The model's retire callbacks, a fold's
 * (ana_fold.h) and those of the analyses that read a tree in one pass
 * (window, vmem, frag, timeline, leaks) call it at each exit. */
#ifndef ANA_LETGO_H
#define ANA_LETGO_H

#include <stdint.h>

#include "analysis/core/ana_ended.h"

struct fmt_reader;
struct ana_stacks;

struct ana_letgo {
    struct fmt_reader *r;
    struct ana_stacks *stacks; /* NULL: none made yet */
    struct ana_ended ended;    /* those ended, not let go yet */
};

/* Image ended at end_ns: the labeler's nodes are dropped (the rows keep
 * what they show), and the stacks of the processes that ended a lag
 * before it are let go (fmt_reader_forget_image), in the order they
 * ended. Returns 0 or -errno. */
int ana_letgo_image(struct ana_letgo *g, uint32_t image, uint64_t end_ns);

/* ana_letgo_image as a callback (arg: the struct ana_letgo), for
 * ana_model_retire.left_out and the exporters' image_done. */
int ana_letgo_fn(void *g, uint32_t image, uint64_t end_ns);

/* A command that reads the trace from t_ns on (an index's answer): the
 * stacks of the images that ended a lag before it go now, in the order
 * they ended, so that decoding the stacks of those still running does not
 * keep every earlier process's. Returns 0 or -errno. */
int ana_letgo_before(struct ana_letgo *g, uint64_t t_ns);

void ana_letgo_release(struct ana_letgo *g);

#endif
