/* SPDX-License-Identifier: MIT */
/* Parts of the HTML report shared between its files. */
#ifndef ANA_HTML_INTERNAL_H
#define ANA_HTML_INTERNAL_H

#include <stdio.h>

#include "analysis/ana_histogram.h"
#include "analysis/ana_html.h"
#include "analysis/ana_model.h"
#include "analysis/ana_stacks.h"
#include "analysis/ana_timeline.h"
#include "analysis/ana_tree.h"

/* Everything the page is made of, computed before any of it is written. */
struct ana_html_run {
    struct fmt_reader *r;
    const struct ana_html_options *o;
    struct fmt_trace_counts counts;
    struct ana_model *model;
    struct ana_histogram hist;
    struct ana_html_wpa wpa;
    struct ana_timeline tl;
    struct ana_stacks *stacks;
    struct ana_tree flame, flame_inv;
    uint8_t *keep; /* per stack id: listed and drawn (ana_flame_top_sites) */
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

#endif
