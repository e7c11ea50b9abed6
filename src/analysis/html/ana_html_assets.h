/* SPDX-License-Identifier: MIT */
/* The report's own JS, CSS and HTML (report.*, this folder), compiled into
 * the binary (analysis/core/ana_asset.h). */
#ifndef ANA_HTML_ASSETS_H
#define ANA_HTML_ASSETS_H

#include "analysis/core/ana_asset.h"

/* Every asset of src/analysis/html/, ending with a {NULL} entry. */
extern const struct ana_asset ana_html_assets[];

#endif
