/* SPDX-License-Identifier: MIT */
/* Parts of the HTML report shared between its files. */
#ifndef ANA_HTML_INTERNAL_H
#define ANA_HTML_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/core/ana_stacks.h"
#include "analysis/html/ana_html.h"
#include "analysis/html/ana_html_fold.h"
#include "analysis/html/ana_html_vm.h"
#include "analysis/model/ana_histogram.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_reach.h"
#include "analysis/model/ana_timeline.h"
#include "analysis/model/ana_tree.h"
#include "analysis/vm/ana_vm_replay.h"

/* Everything the page is made of, computed before any of it is written. */
struct ana_html_run {
    struct fmt_reader *r;
    const struct ana_html_options *o;
    struct fmt_trace_counts counts;
    struct ana_model *model;
    struct ana_histogram hist;
    struct ana_html_wpa wpa;
    struct ana_timeline tl;
    struct ana_vm_replay replay; /* the address space at the end, from the page's pass */
    struct ana_html_vm vm;       /* its commit lifetimes, for their section */
    struct ana_stacks *stacks;
    struct ana_tree flame, flame_inv;
    /* Per window cells' key (a stack id, or with fold a row id): listed
     * and drawn (ana_flame_top_sites), nr_keys of them. */
    uint8_t *keep;
    uint32_t nr_keys;
    /* On a process tree: the page's rows folded at each process's end
     * (ana_html_fold.h), the model's sites dropped; NULL: read from the
     * whole model. */
    struct ana_html_fold *fold;
    /* Leak classes at exit (record --reach): classes set when the trace has
     * them and the model kept its live blocks for them. */
    bool classes;
    struct ana_reach reach;
    char nonce[40]; /* the Content-Security-Policy nonce of the page's script */
};

/* A stream that writes JSON into out so that it is safe inside a
 * <script> element (see ana_html_script.c). fclose() it to finish; that
 * does not close out. NULL on allocation failure. */
FILE *ana_html_script_open(FILE *out);

/* The page's data as JSON (schema: html/report.js, "data"). Returns 0 or
 * -errno. */
int ana_html_write_data(struct ana_html_run *run, FILE *out);

/* The whole page from the template html/report.html. Returns 0 or
 * -errno. */
int ana_html_write_page(struct ana_html_run *run, FILE *out);

/* The page's address-space section: the map at the end of the trace (vm,
 * every event replayed: the page's pass feeds it) of the process with the
 * most mappings, with a caption, or a note that nothing was mapped. r
 * names the process. Returns 0 or -errno. */
struct ana_vm;
int ana_html_frag(struct fmt_reader *r, const struct ana_vm *vm, FILE *out);

/* The page data's "summary" object of a model (ana_html_data.c); the base
 * run's is written the same way (ana_html_base.c). sample_bytes: the
 * trace's sampling rate (0: exact; a sampled trace's temporary figures are
 * null, ana_sample.h). */
struct ana_json;
void ana_html_write_summary(struct ana_json *j, const struct ana_model *m,
                            const struct fmt_trace_counts *c, uint64_t sample_bytes,
                            uint64_t nr_stacks_used);
/* The stacks a whole model's heap events use (its sites with allocations
 * or live blocks), the summary's stack_count. */
uint64_t ana_html_stacks_used(const struct ana_model *m);

#endif
