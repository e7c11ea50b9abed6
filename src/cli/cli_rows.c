/* SPDX-License-Identifier: MIT */
/* Call sites grouped by the frames a row shows (see cli_rows.h). */
#include "cli/cli_rows.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_map.h"
#include "cli/cli.h"

uint32_t cli_rows_key(struct cli_ana *a, uint32_t stack)
{
    uint32_t key;
    int rc = ana_stacks_key(cli_ana_stacks(a), stack, 1, &key);

    if (rc)
        cli_ana_fail(a, rc);
    return key;
}

uint32_t cli_rows_first(struct cli_ana *a, struct ana_map *m, uint32_t image, uint32_t stack)
{
    uint64_t k = ((uint64_t)image << 32 | cli_rows_key(a, stack)) + 1;
    int created;
    uint32_t *first = ana_map_put(m, k, &created);

    if (!first)
        cli_die("%s: out of memory", a->cmd);
    if (created)
        *first = stack;
    return *first;
}

/* A row's numbers: the sums of its sites' (all additive), by the model's
 * one list of site counters and the two peak shares. */
static void add(struct ana_site *to, const struct ana_site *s)
{
#define ADD(type, name) to->name += s->name;
    ANA_SITE_COUNTERS(ADD)
#undef ADD
    to->peak_bytes += s->peak_bytes;
    to->peak_all_bytes += s->peak_all_bytes;
}

struct ana_site *cli_rows_sites(struct cli_ana *a, const struct ana_model *m)
{
    uint32_t n = ana_model_nr_sites(m);
    struct ana_site *v = calloc((size_t)n + 1, sizeof(*v));
    struct ana_map first;

    if (!v)
        cli_die("%s: out of memory", a->cmd);
    ana_map_init(&first, sizeof(uint32_t));
    for (uint32_t id = 0; id < n; id++) {
        const struct ana_site *s = ana_model_site(m, id);

        v[id].image = UINT32_MAX;
        if (!s || (!s->nr_allocs && !s->live_blocks))
            continue;
        uint32_t f = cli_rows_first(a, &first, s->image, id);
        v[f].image = s->image;
        add(&v[f], s);
    }
    ana_map_release(&first);
    return v;
}
