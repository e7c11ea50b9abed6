/* SPDX-License-Identifier: MIT */
/* Fragmentation over a trace, up to a moment: the mappings of each process
 * image replayed (ana_vm), and its fragmentation (ana_frag_stats) sampled
 * when tracing began (at its first mapping call after the snapshot of
 * /proc/self/maps) and at nr_intervals even times up to the moment.
 * docs/frag.md. */
#ifndef ANA_FRAG_SCAN_H
#define ANA_FRAG_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/core/ana_filter.h"
#include "analysis/core/ana_ticks.h"
#include "analysis/vm/ana_frag.h"
#include "analysis/vm/ana_vm.h"
#include "memscribe/trace.h"

struct ana_frag_sample {
    uint64_t ts;
    uint32_t image;
    struct ana_frag_stats st;
};

struct ana_frag_scan {
    /* Set before ana_frag_scan_init. */
    const struct ana_filter *filter; /* the processes sampled */
    struct fmt_reader *r;            /* the images' pids, for the filter */
    uint64_t at;                     /* the moment: the scan stops after it */
    unsigned nr_intervals;
    /* Results. */
    struct ana_vm vm; /* the mappings at the moment */
    struct ana_frag_sample *v;
    size_t nr, cap;
    struct ana_ticks ticks; /* the sampled moments */
    uint8_t *started;       /* per image: the first sample was taken */
    uint32_t nr_started;
};

void ana_frag_scan_init(struct ana_frag_scan *f);
/* The scan callback (ana_scan_fn): arg is the scan. 1 after the moment,
 * 0, or -ENOMEM. */
int ana_frag_scan_event(void *arg, const struct fmt_event *ev);
/* After the scan: the samples of the intervals left. 0 or -ENOMEM. */
int ana_frag_scan_finish(struct ana_frag_scan *f);
void ana_frag_scan_release(struct ana_frag_scan *f);

#endif
