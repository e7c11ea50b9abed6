/* SPDX-License-Identifier: MIT */
/* Folded stacks (flamegraph.pl, speedscope, inferno): one line per stack,
 * "root;caller;...;leaf COST", for one cost type. Inlined functions get
 * their own frame; ';' in names becomes ':' since it separates frames. */
#include <inttypes.h>
#include <string.h>

#include "analysis/export/ana_export_internal.h"

static uint64_t stack_cost(const struct ana_xstack *s, enum ana_export_cost c)
{
    switch (c) {
    case ANA_COST_ALLOCATIONS:
        return s->nr_allocs;
    case ANA_COST_BYTES:
        return s->alloc_bytes;
    case ANA_COST_LEAKED:
        return s->live_bytes;
    case ANA_COST_PEAK:
        return s->peak_bytes;
    case ANA_COST_TEMPORARY:
        return s->nr_temporary;
    }
    return 0;
}

static void put_name(struct ana_xout *out, const char *name)
{
    const char *semi;

    while ((semi = strchr(name, ';'))) {
        ana_xout_write(out, name, (size_t)(semi - name));
        ana_xout_write(out, ":", 1);
        name = semi + 1;
    }
    ana_xout_write(out, name, strlen(name));
}

int ana_export_folded(struct fmt_reader *r, const struct ana_export_options *o,
                      struct ana_xout *out)
{
    struct ana_xmodel m;
    struct ana_xsym x;
    char buf[64], label[ANA_SAMPLE_LABEL_SIZE];
    int rc;

    if ((rc = ana_xmodel_build(r, o, &m)))
        return rc;
    if ((rc = ana_xsym_open(&x, r, o))) {
        ana_xmodel_release(&m);
        return rc;
    }
    /* A sampled trace: a first line that says so (flamegraph.pl and
     * inferno skip a line without a count, with a warning). */
    if (*ana_sample_label(label, sizeof(label), fmt_reader_sample_bytes(r)))
        rc = ana_xout_printf(out, "# %s\n", label);
    for (uint32_t id = 0; id <= m.nr_stacks && !rc; id++) {
        uint64_t cost = stack_cost(&m.stacks[id], o->cost);
        const struct ana_sym_stack *st;

        if (!cost)
            continue;
        if ((rc = ana_xsym_stack(&x, id, &st, NULL)))
            break;
        if (!st->nr_lines)
            ana_xout_write(out, "[unknown]", 9);
        for (uint32_t i = st->nr_lines; i-- > 0;) {
            put_name(out, ana_xsym_name(st->lines[i].frame, buf, sizeof(buf)));
            if (i)
                ana_xout_write(out, ";", 1);
        }
        rc = ana_xout_printf(out, " %" PRIu64 "\n", cost);
    }
    ana_xsym_close(&x);
    ana_xmodel_release(&m);
    return rc;
}
