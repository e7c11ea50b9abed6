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

#include "analysis/vm/ana_frag.h"
#include "analysis/vm/ana_vm.h"
#include "analysis/vm/ana_vm_replay.h"
#include "memscribe/trace.h"

struct ana_frag_sample {
    uint64_t ts;
    uint32_t image;
    struct ana_frag_stats st;
};

struct ana_frag_scan {
    /* Set before ana_frag_scan_init: in replay, the processes sampled
     * (filter, r), the moment (until: the scan stops after it) and the
     * number of samples (nr_intervals); t0, t1 are set by init. */
    struct ana_vm_replay replay; /* replay.vm: the mappings at the moment */
    /* Results. */
    struct ana_frag_sample *v;
    size_t nr, cap;
    uint8_t *started; /* per image: the first sample was taken */
    uint32_t nr_started;
};

void ana_frag_scan_init(struct ana_frag_scan *f);
/* Then scan with ana_vm_replay_event(&f->replay), and after the scan
 * ana_vm_replay_finish(&f->replay): the samples of the intervals left. */
void ana_frag_scan_release(struct ana_frag_scan *f);

#endif
