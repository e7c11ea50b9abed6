/* SPDX-License-Identifier: MIT */
/* The report's and flame graph's own JS, CSS and HTML (src/analysis/html/),
 * compiled into the binary by embed.cmake so that output files are
 * self-contained and memscribe needs no data files at run time. */
#ifndef ANA_HTML_ASSETS_H
#define ANA_HTML_ASSETS_H

#include <stddef.h>

struct ana_html_asset {
    const char *name; /* file name under src/analysis/html/ */
    const char *data; /* NUL-terminated */
    size_t len;
};

/* Every asset, ending with a {NULL} entry (generated at build time). */
extern const struct ana_html_asset ana_html_assets[];

/* The text of an asset by file name, or NULL if there is none. */
const char *ana_html_asset(const char *name);

#endif
