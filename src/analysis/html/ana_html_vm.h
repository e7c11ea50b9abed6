/* SPDX-License-Identifier: MIT */
/* The HTML report's commit lifetimes (its "VirtualAlloc commit lifetimes"
 * section, Windows Performance Analyzer's first table): the lifetimes the
 * page's address-space replay ends (ana_vm_replay, fed by the page's one
 * pass), of vmem's default origins (ANA_VM_WINDOW_ORIGINS) and the page's
 * processes, kept per commit stack and process as the heap's window cells
 * are (ana_html_wpa: (commit bucket, decommit bucket or never) -> count
 * and bytes). For a selection of whole buckets [i, j] the page sums AIFI,
 * AIFO, AOFI and AOFO, exactly what `memscribe vmem --from i*W --to
 * (j+1)*W-1ns` groups by stack. docs/html.md, docs/vmem.md. */
#ifndef ANA_HTML_VM_H
#define ANA_HTML_VM_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/core/ana_filter.h"
#include "analysis/core/ana_json.h"
#include "analysis/core/ana_map.h"
#include "analysis/html/ana_html_wpa.h"
#include "memscribe/trace.h"

struct ana_vm_replay;

struct ana_html_vm {
    struct ana_html_wpa cells; /* key: a key's index below */
    /* Keys: a commit stack in a process image. */
    struct ana_map index; /* (image << 32 | stack) + 1 -> key index */
    uint32_t *image, *stack;
    uint64_t *bytes; /* committed, to pick the keys listed */
    uint32_t nr_keys, cap_keys;
    /* After ana_html_vm_finish: the keys listed (NULL: every one), the
     * others lumped into one key (ANA_HTML_OTHER_STACK in cells). */
    uint8_t *keep;
    uint32_t nr_other;
    unsigned origins; /* bit per enum fmt_origin */
    const struct ana_filter *filter;
    struct fmt_reader *r;
};

/* Cells of bucket_ns over [0, end_ns], the heap window's. Returns as
 * ana_html_wpa_init(). */
int ana_html_vm_init(struct ana_html_vm *v, struct fmt_reader *r, const struct ana_filter *filter,
                     uint64_t bucket_ns, uint64_t end_ns);
/* Set up the address-space replay p (until, filter and moments set by the
 * caller) with v as its consumer of lifetimes. */
void ana_html_vm_subscribe(struct ana_html_vm *v, struct ana_vm_replay *p);
/* After the pass: p's open lifetimes counted, the cells' buckets made the
 * heap window's (heap: both coarsened to the wider), the keys listed
 * picked (at most ANA_HTML_MAX_SITES, by bytes committed). Returns 0 or
 * -errno. */
int ana_html_vm_finish(struct ana_html_vm *v, struct ana_vm_replay *p, struct ana_html_wpa *heap);
/* Is key k listed (else lumped)? */
static inline bool ana_html_vm_listed(const struct ana_html_vm *v, uint32_t k)
{
    return !v->keep || v->keep[k];
}
/* The page data's "vm" member (html/report.js describes it): node[k], the
 * frame-tree leaf of key k's stack (of the lumped ones at nr_keys). */
void ana_html_vm_write(struct ana_json *j, const struct ana_html_vm *v, const uint32_t *node);
void ana_html_vm_release(struct ana_html_vm *v);

#endif
