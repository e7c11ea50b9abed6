/* SPDX-License-Identifier: MIT */
/* The HTML report: one self-contained page (no network, no files beside
 * it) with the summary, the usage timeline whose range selection
 * recomputes the WPA window table and the commit lifetimes' table (WPA's
 * VirtualAlloc Commit Lifetimes, ana_html_vm.h), leaks, top call sites,
 * the flame graph with its cost selector and the size histogram.
 *
 * Numbers come from the analysis core (heap model, timeline, histogram,
 * call sites); the page only adds them up. For the window table the trace
 * is pre-aggregated per stack into a sparse histogram of (allocation time
 * bucket, free time bucket) -> blocks and bytes, so that any selection of
 * whole buckets gives exactly what `memscribe window` prints for that
 * range, at a cost that grows with stacks and buckets, not with events. */
#ifndef ANA_HTML_H
#define ANA_HTML_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/html/ana_html_options.h"
#include "analysis/html/ana_html_wpa.h"
#include "memscribe/trace.h"

/* Write the report of the trace r reads to out. Returns 0, -ENOMEM, -EIO
 * (or another -errno) for a failed write, or a reader error (see
 * fmt_reader_error()). */
int ana_html_write(struct fmt_reader *r, const struct ana_html_options *o, FILE *out);

#endif
