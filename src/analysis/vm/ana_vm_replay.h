/* SPDX-License-Identifier: MIT */
/* The one replay of the address space: the events of the selected
 * processes, in trace order up to a moment, applied to an address-space
 * model (ana_vm, which decides what each mapping event does), with the
 * model handed to its consumer at even moments (ana_ticks: a moment sees
 * the events up to and at it) and around each event. Every reader of
 * mappings replays them through it: vmem's commit lifetimes and totals
 * (ana_vm_window), frag's samples (ana_frag_scan), the timeline's
 * committed and reserved columns, the HTML report's address-space map and
 * its commit lifetimes' cells (ana_html_vm.h; fed from the heap replay's
 * pass, beside the heap model: ana_heap_replay_add_vm).
 * docs/event-model.md. */
#ifndef ANA_VM_REPLAY_H
#define ANA_VM_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/core/ana_filter.h"
#include "analysis/core/ana_ticks.h"
#include "analysis/vm/ana_vm.h"
#include "memscribe/trace.h"

/* What a consumer is told; any may be NULL. Each returns 0 or stops the
 * replay with its non-zero result. */
struct ana_vm_replay_ops {
    /* A moment ts (ana_ticks), once per process image of the selected
     * processes the model holds (im->max_addr 0: it has not mapped
     * anything yet), in image order. */
    int (*moment)(void *arg, uint64_t ts, uint32_t image, const struct ana_vm_image *im);
    /* An event of a selected process, before the model applies it, and
     * after. */
    int (*before)(void *arg, const struct fmt_event *ev);
    int (*after)(void *arg, const struct fmt_event *ev);
    /* A commit lifetime ended (ana_vm_lifetime_fn; at the end, each one
     * still open). */
    ana_vm_lifetime_fn *lifetime;
};

struct ana_vm_replay {
    /* Set before ana_vm_replay_init. */
    const struct ana_filter *filter; /* the processes replayed; NULL: all */
    struct fmt_reader *r;            /* the images' pids, for the filter */
    uint64_t until;                  /* events after it end the scan (UINT64_MAX: none) */
    uint64_t t0, t1;                 /* the moments: nr_intervals over [t0, t1] */
    unsigned nr_intervals;           /* 0: none */
    /* The model. */
    struct ana_vm vm;
    /* It replayed a mapping libc, ld.so or pthread_create made themselves
     * (recorded by record --vm-precise). */
    bool precise;
    struct ana_ticks ticks;
    const struct ana_vm_replay_ops *ops;
    void *arg;
};

void ana_vm_replay_init(struct ana_vm_replay *p, const struct ana_vm_replay_ops *ops, void *arg);
/* Is process image `image` one the replay selects? */
bool ana_vm_replay_selects(const struct ana_vm_replay *p, uint32_t image);
/* The scan callback (ana_scan_fn): arg is the replay. 1 after `until`, 0,
 * -ENOMEM or a consumer's result. */
int ana_vm_replay_event(void *arg, const struct fmt_event *ev);

/* The moments before upto (private: ana_vm_replay_event_inline's slow
 * path). */
int ana_vm_replay_moments(struct ana_vm_replay *p, uint64_t upto);

/* ana_vm_replay_event(), inline for the heap replay's pass, which feeds
 * it every event beside the heap model (ana_heap_replay_add_vm). */
static inline int ana_vm_replay_event_inline(struct ana_vm_replay *p, const struct fmt_event *ev)
{
    uint64_t b;
    int rc;

    if (ev->ts_ns > p->until)
        return 1;
    if (!ana_filter_all_images(p->filter) && !ana_filter_image(p->filter, ev->image, ev->pid))
        return 0;
    /* Per event, only the questions: is a moment due, is it a mapping's? */
    if (ana_ticks_due(&p->ticks, ev->ts_ns, &b) && (rc = ana_vm_replay_moments(p, ev->ts_ns)))
        return rc;
    if (p->ops->before && (rc = p->ops->before(p->arg, ev)))
        return rc;
    if (!ana_vm_kind_applies(ev->kind))
        return p->ops->after ? p->ops->after(p->arg, ev) : 0;
    if (ev->kind >= FMT_EV_MMAP && ev->kind <= FMT_EV_SBRK &&
        (ev->origin == FMT_ORIGIN_LIBC || ev->origin == FMT_ORIGIN_LOADER ||
         ev->origin == FMT_ORIGIN_THREAD))
        p->precise = true;
    if ((rc = ana_vm_event(&p->vm, ev)))
        return rc;
    return p->ops->after ? p->ops->after(p->arg, ev) : 0;
}
/* After the scan: the moments left, then every lifetime still open.
 * Returns 0, -ENOMEM or a consumer's result. */
int ana_vm_replay_finish(struct ana_vm_replay *p);
void ana_vm_replay_release(struct ana_vm_replay *p);

#endif
