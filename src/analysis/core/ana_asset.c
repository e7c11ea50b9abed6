/* SPDX-License-Identifier: MIT */
/* Looking up embedded files by name (see ana_asset.h). */
#include "analysis/core/ana_asset.h"

#include <string.h>

const char *ana_asset_find(const struct ana_asset *table, const char *name)
{
    for (const struct ana_asset *a = table; a->name; a++)
        if (!strcmp(a->name, name))
            return a->data;
    return NULL;
}
