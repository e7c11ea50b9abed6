/* SPDX-License-Identifier: MIT */
/* Looking up the embedded assets by name. */
#include <string.h>

#include "analysis/html/ana_html_assets.h"

const char *ana_html_asset(const char *name)
{
    for (const struct ana_html_asset *a = ana_html_assets; a->name; a++)
        if (!strcmp(a->name, name))
            return a->data;
    return NULL;
}
