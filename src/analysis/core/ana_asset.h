/* SPDX-License-Identifier: MIT */
/* Files compiled into the binary (cmake/embed.cmake): the HTML report's
 * JS, CSS and HTML (html/), the flame graph's script (pictures/), so that
 * output files are self-contained and memscribe needs no data files at
 * run time. Each room lists its own in a table of its own. */
#ifndef ANA_ASSET_H
#define ANA_ASSET_H

#include <stddef.h>

struct ana_asset {
    const char *name; /* file name in the room's folder */
    const char *data; /* NUL-terminated */
    size_t len;
};

/* The text of asset `name` in table (which ends with a {NULL} entry), or
 * NULL if there is none. */
const char *ana_asset_find(const struct ana_asset *table, const char *name);

#endif
