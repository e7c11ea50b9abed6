/* SPDX-License-Identifier: MIT */
/* What the HTML report is asked (ana_html.h): its options and the base run
 * it compares with; shared by the report's pass and its parts (the fold,
 * ana_html_fold.h), which see these and not the pass. */
#ifndef ANA_HTML_OPTIONS_H
#define ANA_HTML_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/core/ana_filter.h"
#include "analysis/core/ana_scan.h"
#include "analysis/sym/ana_symbolize.h"
#include "memscribe/trace.h"

/* A base run the page compares with (memscribe html --base): the page
 * shows each summary number's change and, per call site, the change
 * against the base's sites of the same function chain. */
struct ana_model;
struct ana_stacks;
struct ana_html_base {
    const char *trace_name;         /* escaped where shown */
    struct ana_model *model;        /* finished */
    struct ana_stacks *stacks;      /* of the base trace */
    struct fmt_trace_counts counts; /* of the base trace */
    uint64_t sample_bytes;          /* its sampling rate; 0: exact (ana_sample.h) */
};

struct ana_html_options {
    struct ana_sym_options sym;
    const char *trace_name;    /* shown in the title; escaped */
    uint32_t nr_buckets;       /* window buckets wanted; 0: 400 */
    uint32_t nr_top;           /* rows per table; 0: all */
    ana_progress_fn *progress; /* may be NULL */
    void *progress_arg;
    const struct ana_html_base *base; /* NULL: no comparison */
    /* The processes and threads the page covers (--pid, --exe, --thread;
     * NULL: all). The event and thread counts stay the trace's. */
    struct ana_filter *filter;
    /* The per-program view (NULL: off): call sites of the processes of one
     * executable merged into one row, and a table of the programs. */
    const struct ana_programs *programs;
    /* With programs: fold what the page keeps of each process at its end
     * (ana_html_fold.h), for bounded memory on process trees. let_go (may
     * be NULL) is then called once each ended image is folded: its stacks
     * are read no more but by a late event of it. Returns 0 or -errno. */
    bool fold;
    int (*let_go)(void *arg, uint32_t image, uint64_t end_ns);
    void *let_go_arg;
};

#endif
