/* SPDX-License-Identifier: MIT */
/* Commit lifetimes in a time window, as Windows Performance Analyzer's
 * "VirtualAlloc Commit LifeTimes": every lifetime of the chosen origins
 * that overlaps [t0, t1], with its class in the window (ana_wpa.h: a commit
 * starts it, a decommit or release ends it: AIFI, AIFO, AOFI, AOFO, as the
 * heap window's blocks) and its impacting size (+size for AIFO, -size for
 * AOFI, else 0); the classes per process image; groups of lifetimes by
 * stack, function or origin and Impacting Type (Transient: AIFI;
 * Impacting: AIFO and AOFI; AOFO makes no group), as `window` makes rows;
 * the committed peak inside the window; and totals (mapped, reserved,
 * committed, charge) per process image at nr_intervals moments.
 * docs/vmem.md. */
#ifndef ANA_VM_WINDOW_H
#define ANA_VM_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/core/ana_wpa.h"
#include "analysis/vm/ana_vm.h"
#include "analysis/vm/ana_vm_replay.h"
#include "memscribe/trace.h"

struct ana_vm_life {
    struct ana_vm_lifetime l;
    int64_t impacting;
    uint64_t key; /* the group, set by ana_vm_window_key */
    uint8_t cls;  /* enum ana_wpa_class in the window */
};

/* A group: the lifetimes of one key and Impacting Type. count: lifetimes
 * (Transient: AIFI; Impacting: AIFO and AOFI); size: bytes committed
 * inside the window (AIFI; AIFO); impacting: sum(AIFO) - sum(AOFI). */
struct ana_vm_group {
    uint32_t image;
    uint64_t key;
    bool transient;
    uint64_t count, size;
    int64_t impacting;
    size_t first; /* index in the sorted lifetimes */
};

/* Default origins of vmem and the HTML page: every origin but snapshot
 * (the libraries and stacks already mapped at the start). */
#define ANA_VM_WINDOW_ORIGINS ((1u << FMT_NR_ORIGINS) - 1 - (1u << FMT_ORIGIN_SNAPSHOT))

struct ana_vm_sample {
    uint64_t ts;
    uint32_t image;
    uint64_t mapped, reserved, committed, charge;
};

struct ana_vm_window {
    /* Set before ana_vm_window_init: in replay, the processes (filter, r),
     * the window (t0, t1) and the number of totals (nr_intervals); until is
     * set by init (every event: lifetimes end after the window). */
    struct ana_vm_replay replay;
    unsigned origins; /* bit per enum fmt_origin */
    /* Results. */
    struct ana_vm_life *v; /* every lifetime overlapping the window, AOFO too */
    size_t nr, cap;
    struct ana_wpa *images; /* per process image: its lifetimes' classes */
    uint32_t nr_images;
    struct ana_vm_sample *samples;
    size_t nr_samples, cap_samples;
    uint64_t peak_committed, peak_ns;
    uint32_t peak_image;
};

void ana_vm_window_init(struct ana_vm_window *w);
/* Then scan with ana_vm_replay_event(&w->replay), and after the scan
 * ana_vm_replay_finish(&w->replay): the last totals and the lifetimes
 * still open. */
/* What groups lifetimes: the stack that committed them, its function, or
 * the origin of the call. */
enum ana_vm_by { ANA_VM_BY_STACK, ANA_VM_BY_FUNCTION, ANA_VM_BY_ORIGIN };
struct ana_stacks;
/* After finish: set each lifetime's key for grouping by by (stacks: the
 * trace's stack strings, for ANA_VM_BY_FUNCTION). Returns 0 or -errno. */
int ana_vm_window_key(struct ana_vm_window *w, enum ana_vm_by by, struct ana_stacks *stacks);
/* Sorts the lifetimes by image, key, Impacting Type (Transient, Impacting,
 * then AOFO), commit time and address and returns their groups (malloc'd,
 * *out; a group's lifetimes are [first, first + count)), largest
 * |impacting size| first, then size, image, key and Transient before
 * Impacting, as `window` sorts its rows. -ENOMEM or the number of
 * groups. */
long ana_vm_window_groups(struct ana_vm_window *w, struct ana_vm_group **out);
void ana_vm_window_release(struct ana_vm_window *w);

#endif
