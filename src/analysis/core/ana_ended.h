/* SPDX-License-Identifier: MIT */
/* Processes that ended, let go in the order they ended once the trace
 * has been read a lag past each end. A process's exit is dated when it
 * began (tests/e2e/ana_exits.sh), so an event of it may come up to about
 * a second later in the trace: what names its stacks (the reader's stack
 * records, an exporter's tables, a fold's rows) is kept as long, then let
 * go, which bounds the memory of a build's thousand processes to those
 * that ran within a second. One queue for each user: the reader's stacks
 * (ana_letgo.h) and the exporters that write what an ended process left
 * (csv, heaptrack, massif, sqlite). */
#ifndef ANA_ENDED_H
#define ANA_ENDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How long after a process's exit an event of it may still come. */
#define ANA_ENDED_LAG_NS 1000000000ull

struct ana_ended {
    struct ana_ended_image {
        uint32_t image;
        uint64_t end_ns;
    } * v;
    size_t first, nr, cap; /* v[first..nr-1]: waiting, oldest first */
};

/* An empty queue is all zeros; ana_ended_release frees it. */
void ana_ended_release(struct ana_ended *q);

/* Image ended at end_ns (ends come in order). Returns 0 or -ENOMEM. */
int ana_ended_push(struct ana_ended *q, uint32_t image, uint64_t end_ns);

/* The oldest image that ended over ANA_ENDED_LAG_NS before now_ns
 * (UINT64_MAX: any, at the end of the trace), taken out into *image and
 * *end_ns: true; false when there is none. */
bool ana_ended_due(struct ana_ended *q, uint64_t now_ns, uint32_t *image, uint64_t *end_ns);

#endif
