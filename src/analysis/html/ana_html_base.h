/* SPDX-License-Identifier: MIT */
/* The HTML report's comparison with a base run (memscribe html --base). */
#ifndef ANA_HTML_BASE_H
#define ANA_HTML_BASE_H

#include "analysis/core/ana_json.h"
#include "analysis/html/ana_html.h"

/* Write the "base" member of the page's data: the base's summary and its
 * sites by function chain (html/report.js describes them). Returns 0 or
 * -errno. */
int ana_html_base_write(struct ana_json *j, const struct ana_html_base *b);

#endif
