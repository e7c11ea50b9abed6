/* SPDX-License-Identifier: MIT */
/* Rows grouped by process, program or all (see cli_view.h). */
#include "cli/cli_view.h"

#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* Group v->rows (made) by v->by, and mark the rows whose leaks a
 * suppression matches. */
static void index_rows(struct cli_ana *a, struct cli_view *v, uint32_t nr_images)
{
    uint32_t nr = v->rows.nr, *next;

    v->nr_groups = v->by == CLI_ROWS_BY_IMAGE     ? nr_images
                   : v->by == CLI_ROWS_BY_PROGRAM ? a->programs.nr
                                                  : 1;
    v->group_start = calloc((size_t)v->nr_groups + 2, sizeof(*v->group_start));
    v->by_group = malloc(((size_t)nr + 1) * sizeof(*v->by_group));
    v->suppressed = calloc((size_t)nr + 1, sizeof(*v->suppressed));
    next = malloc(((size_t)v->nr_groups + 1) * sizeof(*next));
    if (!v->group_start || !v->by_group || !v->suppressed || !next)
        cli_die("%s: out of memory", a->cmd);
    for (uint32_t id = 0; id < nr; id++) {
        const struct ana_site *row = v->rows.row[id];
        uint32_t g = row ? cli_rows_group(a, v->by, row->image) : UINT32_MAX;
        if (g < v->nr_groups)
            v->group_start[g + 1]++;
        if (row && row->live_blocks > 0)
            v->suppressed[id] = cli_ana_suppressed(a, cli_rows_stack(&v->rows, id));
    }
    for (uint32_t g = 0; g < v->nr_groups; g++) {
        v->group_start[g + 1] += v->group_start[g];
        next[g] = v->group_start[g];
    }
    for (uint32_t id = 0; id < nr; id++) {
        const struct ana_site *row = v->rows.row[id];
        uint32_t g = row ? cli_rows_group(a, v->by, row->image) : UINT32_MAX;
        if (g < v->nr_groups)
            v->by_group[next[g]++] = id;
    }
    free(next);
}

void cli_view_answer(struct cli_ana *a, const struct ana_model *m, enum cli_rows_by by,
                     struct cli_view *v)
{
    memset(v, 0, sizeof(*v));
    v->by = by;
    cli_rows_answer(a, m, by, &v->rows);
    index_rows(a, v, ana_model_nr_images(m));
}

void cli_view_release(struct cli_view *v)
{
    cli_rows_release(&v->rows);
    free(v->suppressed);
    free(v->by_group);
    free(v->group_start);
    memset(v, 0, sizeof(*v));
}

const uint32_t *cli_view_group(const struct cli_view *v, uint32_t g, uint32_t *n)
{
    if (g >= v->nr_groups) {
        *n = v->group_start[v->nr_groups];
        return v->by_group;
    }
    *n = v->group_start[g + 1] - v->group_start[g];
    return v->by_group + v->group_start[g];
}

void cli_view_suppressed(const struct cli_view *v, uint32_t g, uint64_t *bytes, uint64_t *blocks)
{
    uint32_t nr;
    const uint32_t *ids = cli_view_group(v, g, &nr);

    *bytes = *blocks = 0;
    if (v->supp_sums) {
        *bytes = v->supp_sums[g < v->nr_groups ? g : v->nr_groups][0];
        *blocks = v->supp_sums[g < v->nr_groups ? g : v->nr_groups][1];
        return;
    }
    for (uint32_t k = 0; k < nr; k++) {
        const struct ana_site *s = v->rows.row[ids[k]];
        if (v->suppressed[ids[k]] && s->live_bytes > 0) {
            *bytes += (uint64_t)s->live_bytes;
            *blocks += (uint64_t)s->live_blocks;
        }
    }
}

void cli_view_leaks(const struct cli_view *v, uint32_t g, const struct ana_scope *s,
                    const struct ana_reach_sum *classes, const struct ana_reach *reach,
                    struct cli_view_leaks *out)
{
    memset(out, 0, sizeof(*out));
    cli_view_suppressed(v, g, &out->supp_bytes, &out->supp_blocks);
    out->bytes = s->heap - out->supp_bytes;
    out->blocks = s->live_blocks - out->supp_blocks;
    if (!classes || !reach)
        return;
    out->classes = true;
    uint32_t nr;
    const uint32_t *ids = cli_view_group(v, g, &nr);
    struct ana_reach_sum *row = cli_rows_reach(&v->rows, v->rows.nr, reach);
    for (uint32_t k = 0; k < nr; k++) {
        if (!v->suppressed[ids[k]])
            continue;
        for (unsigned c = 0; c < FMT_NR_REACH; c++) {
            out->supp_cls.bytes[c] += row[ids[k]].bytes[c];
            out->supp_cls.blocks[c] += row[ids[k]].blocks[c];
        }
    }
    free(row);
    for (unsigned c = 0; c < FMT_NR_REACH; c++) {
        out->cls.bytes[c] = classes->bytes[c] - out->supp_cls.bytes[c];
        out->cls.blocks[c] = classes->blocks[c] - out->supp_cls.blocks[c];
    }
}
