/* SPDX-License-Identifier: MIT */
/* The base run in the HTML report's data (memscribe html --base). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_json.h"
#include "analysis/core/ana_sample.h"
#include "analysis/diff/ana_diff.h"
#include "analysis/diff/ana_diff_site.h"
#include "analysis/html/ana_html_base.h"
#include "analysis/html/ana_html_internal.h"

/* "base": the base run's summary, and its sites by function chain (leaf
 * first, one name per line: the key the page builds from its frames),
 * columnar: keys[] and v[] = [allocations, bytes, peak, leaked,
 * temporary] each. */
int ana_html_base_write(struct ana_json *j, const struct ana_html_base *b)
{
    struct ana_diff d;
    char *key = NULL;
    size_t cap = 0;
    int rc = 0;

    ana_diff_init(&d);
    for (uint32_t id = 0; id < ana_model_nr_sites(b->model) && !rc; id++) {
        const struct ana_site *site = ana_model_site(b->model, id);
        uint64_t v[ANA_DIFF_NR_METRICS];
        long len;

        if (!site || !ana_diff_site_values(site, v))
            continue;
        len = ana_diff_site_key(b->stacks, id, 0, &key, &cap);
        if (len < 0)
            rc = (int)len;
        else if (len > 0)
            rc = ana_diff_add(&d, ANA_DIFF_BASE, key, v);
    }
    free(key);
    if (!rc) {
        ana_diff_finish(&d);
        ana_json_key(j, "base");
        ana_json_begin_object(j);
        ana_json_kv_str(j, "trace", b->trace_name);
        ana_sample_json(j, b->sample_bytes);
        ana_html_write_summary(j, b->model, &b->counts, b->sample_bytes,
                               ana_html_stacks_used(b->model));
        ana_json_key(j, "keys");
        ana_json_begin_array(j);
        for (size_t i = 0; i < d.nr_rows; i++)
            ana_json_str(j, d.rows[i].key);
        ana_json_end_array(j);
        ana_json_key(j, "v");
        ana_json_begin_array(j);
        for (size_t i = 0; i < d.nr_rows; i++) {
            ana_json_begin_array(j);
            /* The five the page compares (not lost: no classes here). */
            for (int m = 0; m < ANA_DIFF_LOST; m++)
                if (m == ANA_DIFF_TEMPORARY && !ana_sample_has_temporary(b->sample_bytes))
                    ana_json_null(j); /* not estimated (ana_sample.h) */
                else
                    ana_json_u64(j, d.rows[i].v[ANA_DIFF_BASE][m]);
            ana_json_end_array(j);
        }
        ana_json_end_array(j);
        ana_json_end_object(j);
    }
    ana_diff_release(&d);
    return rc;
}
