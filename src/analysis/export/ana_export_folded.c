/* SPDX-License-Identifier: MIT */
/* Folded stacks (flamegraph.pl, speedscope, inferno): one line per stack,
 * "root;caller;...;leaf COST", for one cost type. Inlined functions get
 * their own frame; ';' in names becomes ':' since it separates frames. */
#include <inttypes.h>
#include <string.h>

#include "analysis/core/ana_aggregate.h"
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

/* After pass 0: a line per stack with a cost. */
static int write_folded(struct ana_export_job *job)
{
    const struct ana_xmodel *m = *(const struct ana_xmodel **)job->state;
    struct ana_xout *out = job->out;
    char buf[64], label[ANA_SAMPLE_LABEL_SIZE];
    struct ana_xsym *x;
    int rc = 0;

    if (!(x = ana_xjob_sym(job, &rc)))
        return rc;
    /* A sampled or aggregated trace: a first line that says so
     * (flamegraph.pl and inferno skip a line without a count, with a
     * warning). */
    if (*ana_sample_label(label, sizeof(label), fmt_reader_sample_bytes(job->r)))
        rc = ana_xout_printf(out, "# %s\n", label);
    char agg[ANA_AGGREGATE_NOTE_SIZE];
    if (!rc && *ana_aggregate_label(agg, sizeof(agg), fmt_reader_info(job->r)))
        rc = ana_xout_printf(out, "# %s\n", agg);
    for (uint32_t id = 0; id <= m->nr_stacks && !rc; id++) {
        uint64_t cost = stack_cost(&m->stacks[id], job->o->cost);
        const struct ana_sym_stack *st;

        if (!cost)
            continue;
        if ((rc = ana_xsym_stack(x, id, &st, NULL)))
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
    return rc;
}

int ana_export_folded(struct ana_export_job *job)
{
    static const struct ana_xjob_hooks hooks = {.write = write_folded};
    const struct ana_xmodel **m = ana_xjob_state(job, sizeof(*m), &hooks);

    return m && (*m = ana_xjob_model(job)) ? 0 : -ENOMEM;
}
