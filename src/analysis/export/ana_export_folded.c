/* SPDX-License-Identifier: MIT */
/* Folded stacks (flamegraph.pl, speedscope, inferno): one line per stack,
 * "root;caller;...;leaf COST", for one cost type. Inlined functions get
 * their own frame; ';' in names becomes ':' since it separates frames.
 *
 * On a process tree (ana_export_options.image_done) the lines are folded
 * at each process image's end: a model of folded's own hands the image's
 * sites over then (ana_model_options.retire), each with a cost is added
 * into a row keyed by its line's text, and the image's stacks go. What stays is one row per
 * distinct line, not every stack of every process; the rows are written
 * at the end in the order of their lowest stack, the order of the lines
 * written from the whole model, each line's cost the sum of the lines of
 * the same text there (which flamegraph.pl, inferno and speedscope add
 * up). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_aggregate.h"
#include "analysis/core/ana_strtab.h"
#include "analysis/export/ana_export_internal.h"
#include "util/util_array.h"

struct folded {
    const struct ana_xmodel *m; /* written from the whole model */
    /* Streamed: the model handing images over, rows by line text. */
    struct ana_model *model;
    enum ana_export_cost cost;
    uint32_t nr_stacks;
    struct ana_strtab lines; /* each line's text (its frames), by key */
    struct frow {
        uint32_t stack; /* the lowest that counts */
        uint64_t cost;  /* its sites' summed */
        uint64_t gen;   /* the peak generation of the shares summed */
    } * rows;           /* by key */
    size_t cap_rows;
    struct ana_xsym *sym;
    char *text;
    size_t len, cap;
};

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

/* Append n bytes of p to the line's text f->text. 0 or -ENOMEM. */
static int text_add(struct folded *f, const char *p, size_t n)
{
    if (UTIL_ARRAY_RESERVE(f->text, f->cap, f->len + n + 1, 256))
        return -ENOMEM;
    memcpy(f->text + f->len, p, n);
    f->len += n;
    f->text[f->len] = '\0';
    return 0;
}

/* A frame's name, ';' as ':'. */
static int put_name(struct folded *f, const char *name)
{
    const char *semi;
    int rc;

    while ((semi = strchr(name, ';'))) {
        if ((rc = text_add(f, name, (size_t)(semi - name))) || (rc = text_add(f, ":", 1)))
            return rc;
        name = semi + 1;
    }
    return text_add(f, name, strlen(name));
}

/* f->text: stack id's frames, root first, as a line shows them. */
static int stack_text(struct folded *f, uint32_t id)
{
    char buf[64];
    const struct ana_sym_stack *st;
    int rc;

    f->len = 0;
    if ((rc = ana_xsym_stack(f->sym, id, &st, NULL)))
        return rc;
    if (!st->nr_lines)
        return text_add(f, "[unknown]", 9);
    for (uint32_t i = st->nr_lines; i-- > 0;) {
        if ((rc = put_name(f, ana_xsym_name(st->lines[i].frame, buf, sizeof(buf)))) ||
            (i && (rc = text_add(f, ";", 1))))
            return rc;
    }
    return 0;
}

/* A sampled or aggregated trace: a first line that says so (flamegraph.pl
 * and inferno skip a line without a count, with a warning). */
static int header(struct ana_export_job *job)
{
    char label[ANA_SAMPLE_LABEL_SIZE], agg[ANA_AGGREGATE_NOTE_SIZE];
    int rc = 0;

    if (*ana_sample_label(label, sizeof(label), fmt_reader_sample_bytes(job->r)))
        rc = ana_xout_printf(job->out, "# %s\n", label);
    if (!rc && *ana_aggregate_label(agg, sizeof(agg), fmt_reader_info(job->r)))
        rc = ana_xout_printf(job->out, "# %s\n", agg);
    return rc;
}

static int line(struct ana_xout *out, const char *text, size_t len, uint64_t cost)
{
    ana_xout_write(out, text, len);
    return ana_xout_printf(out, " %" PRIu64 "\n", cost);
}

/* After pass 0: a line per stack with a cost. */
static int write_folded(struct ana_export_job *job)
{
    struct folded *f = job->state;
    const struct ana_xmodel *m = f->m;
    int rc = 0;

    if (!(f->sym = ana_xjob_sym(job, &rc)) || (rc = header(job)))
        return rc;
    for (uint32_t id = 0; id <= m->nr_stacks && !rc; id++) {
        uint64_t cost = stack_cost(&m->stacks[id], job->o->cost);

        if (cost && !(rc = stack_text(f, id)))
            rc = line(job->out, f->text, f->len, cost);
    }
    return rc;
}

/* ---- Folded at each image's end. */

/* A site's cost, and the peak generation its share was saved at (0 for
 * the other costs, which are final at its image's end). */
static uint64_t site_cost(const struct ana_site *s, enum ana_export_cost c, uint64_t *gen)
{
    const struct ana_xstack x = {
        .nr_allocs = s->nr_allocs,
        .alloc_bytes = s->alloc_bytes,
        .nr_temporary = s->nr_temporary,
        .live_bytes = s->live_bytes > 0 ? (uint64_t)s->live_bytes : 0,
        .peak_bytes = s->peak_all_bytes,
    };

    *gen = c == ANA_COST_PEAK ? s->gen_all_ : 0;
    return stack_cost(&x, c);
}

/* One of the image's sites with a cost into the row of its line's text:
 * for the peak only the shares saved at the latest peak generation count
 * (a later peak of the tree makes the earlier ones 0, as ana_fold.h says);
 * the row's place is the lowest stack that counts. */
static int add_site(void *arg, uint32_t stack, const struct ana_site *s)
{
    struct folded *f = arg;
    uint64_t gen, cost = site_cost(s, f->cost, &gen);
    uint32_t key;
    int rc;

    if (!cost)
        return 0;
    if (stack > f->nr_stacks)
        stack = 0; /* a corrupt id counts as no stack, as the whole model's */
    if ((rc = stack_text(f, stack)) || (rc = ana_strtab_intern(&f->lines, f->text, &key)) < 0)
        return rc < 0 ? rc : -ENOMEM;
    if (rc == 1) { /* a new line */
        if (UTIL_ARRAY_RESERVE(f->rows, f->cap_rows, (size_t)key + 1, 256))
            return -ENOMEM;
        f->rows[key] = (struct frow){.stack = stack, .gen = gen};
    }
    struct frow *r = &f->rows[key];
    if (gen > r->gen)
        *r = (struct frow){.stack = stack, .gen = gen};
    if (gen < r->gen)
        return 0;
    r->cost += cost;
    if (stack < r->stack)
        r->stack = stack;
    return 0;
}

/* The model's retire callback: the image's sites into the rows, then an
 * image that ended is done (its stacks read no more). */
static int retire(void *arg, const struct ana_model *m, uint32_t image)
{
    struct ana_export_job *job = arg;
    const struct ana_scope *sc = ana_model_image(m, image);
    int rc = ana_model_each_site_of(m, image, add_site, job->state);

    if (rc || !sc->ended)
        return rc;
    return job->o->image_done(job->o->image_arg, image, sc->end_ns);
}

static int by_stack(const void *a, const void *b, void *arg)
{
    const struct frow *rows = arg;
    uint32_t x = rows[*(const uint32_t *)a].stack, y = rows[*(const uint32_t *)b].stack;

    return (x > y) - (x < y);
}

/* After the pass (every image folded): the rows, by lowest stack; for
 * the peak those whose shares are of the tree's last peak. */
static int write_stream(struct ana_export_job *job)
{
    struct folded *f = job->state;
    uint64_t last_gen = ana_model_total(f->model)->gen_;
    uint32_t n = 0, *order = malloc(((size_t)f->lines.nr + 1) * sizeof(*order));
    int rc = order ? header(job) : -ENOMEM;

    for (uint32_t k = 0; k < f->lines.nr; k++)
        if (f->cost != ANA_COST_PEAK || f->rows[k].gen == last_gen)
            order[n++] = k;
    if (order)
        qsort_r(order, n, sizeof(*order), by_stack, f->rows);
    for (uint32_t i = 0; i < n && !rc; i++) {
        const char *text = f->lines.strs[order[i]];
        rc = line(job->out, text, strlen(text), f->rows[order[i]].cost);
    }
    free(order);
    return rc;
}

bool ana_export_folded_streams(const struct fmt_reader *r)
{
    return fmt_reader_nr_images(r) > 1; /* one process: nothing to let go */
}

/* Folded's own model, which hands each image over as it ends. */
static int start_stream(struct ana_export_job *job)
{
    struct folded *f = job->state;
    struct fmt_trace_counts c;
    int rc;

    fmt_reader_counts(job->r, &c);
    f->nr_stacks = c.nr_stacks;
    f->cost = job->o->cost;
    if (!(f->sym = ana_xjob_sym(job, &rc)))
        return rc;
    return ana_xjob_retiring_model(job, retire, &f->model);
}

static void release_folded(struct ana_export_job *job)
{
    struct folded *f = job->state;

    ana_model_destroy(f->model);
    free(f->rows);
    ana_strtab_release(&f->lines);
    free(f->text);
}

int ana_export_folded(struct ana_export_job *job)
{
    static const struct ana_xjob_hooks hooks = {.write = write_folded, .release = release_folded};
    static const struct ana_xjob_hooks stream_hooks = {.write = write_stream,
                                                       .release = release_folded};
    /* image_done is set when the output streams (ana_export_streams). */
    bool stream = job->o->image_done != NULL;
    struct folded *f = ana_xjob_state(job, sizeof(*f), stream ? &stream_hooks : &hooks);

    if (!f)
        return -ENOMEM;
    if (stream)
        return start_stream(job);
    return (f->m = ana_xjob_model(job)) ? 0 : -ENOMEM;
}
