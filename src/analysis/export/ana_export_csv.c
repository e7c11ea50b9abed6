/* SPDX-License-Identifier: MIT */
/* CSV of heap blocks for spreadsheets and pandas: a header row, then one
 * row per block when it ends (free or realloc), and the blocks still live
 * at the end last, in the order they started. Memory grows with live
 * blocks (what their allocation said is kept until they end) and stacks.
 * A trace with reachability classes (record --reach) has a last column,
 * leak_class: a live block's class at exit (ana_reach.h), empty for the
 * others. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/export/ana_export_internal.h"
#include "analysis/model/ana_reach.h"

struct csv {
    struct fmt_reader *r;
    struct ana_xout *out;
    struct ana_xsym *sym;
    struct ana_xlive live; /* the blocks not ended yet */
    char **leaf;           /* by stack id: the leaf function, built on first use */
    uint32_t nr_stacks;
    uint32_t *pid; /* by thread index */
    uint32_t *tid;
    uint32_t nr_threads;
    const struct ana_export_options *o;
    bool classes; /* the leak_class column */
};

static int threads_load(struct csv *c)
{
    uint32_t n = fmt_reader_nr_threads(c->r);

    c->nr_threads = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct fmt_thread_info *t = fmt_reader_thread(c->r, i);
        if (t->thread + 1 > c->nr_threads)
            c->nr_threads = t->thread + 1;
    }
    c->pid = calloc(c->nr_threads + 1, sizeof(*c->pid));
    c->tid = calloc(c->nr_threads + 1, sizeof(*c->tid));
    if (!c->pid || !c->tid)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        const struct fmt_thread_info *t = fmt_reader_thread(c->r, i);
        c->pid[t->thread] = t->pid;
        c->tid[t->thread] = t->tid;
    }
    return 0;
}

/* CSV-quote a field if it holds a comma, a quote or a line break. */
static void put_field(struct ana_xout *out, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        ana_xout_write(out, s, strlen(s));
        return;
    }
    ana_xout_write(out, "\"", 1);
    for (; *s; s++) {
        if (*s == '"')
            ana_xout_write(out, "\"", 1);
        ana_xout_write(out, s, 1);
    }
    ana_xout_write(out, "\"", 1);
}

static int leaf_name(struct csv *c, uint32_t stack, const char **name)
{
    const struct ana_sym_stack *st;
    char buf[64];
    int rc;

    if (stack > c->nr_stacks)
        stack = 0;
    if (!c->leaf[stack]) {
        if ((rc = ana_xsym_stack(c->sym, stack, &st, NULL)))
            return rc;
        c->leaf[stack] =
            strdup(st->nr_lines ? ana_xsym_name(st->lines[0].frame, buf, sizeof(buf)) : "");
        if (!c->leaf[stack])
            return -ENOMEM;
    }
    *name = c->leaf[stack];
    return 0;
}

static int row(struct csv *c, uint64_t serial, uint32_t image, uint32_t thread, unsigned kind,
               uint64_t addr, uint64_t size, uint64_t alloc_ns, const uint64_t *free_ns,
               uint32_t stack)
{
    const char *leaf;
    int rc;

    if ((rc = leaf_name(c, stack, &leaf)))
        return rc;
    ana_xout_printf(c->out, "%" PRIu64 ",%u,%u,%s,0x%" PRIx64 ",%" PRIu64 ",%" PRIu64 ",", serial,
                    thread < c->nr_threads ? c->pid[thread] : 0,
                    thread < c->nr_threads ? c->tid[thread] : 0, fmt_kind_name(kind), addr, size,
                    alloc_ns);
    if (free_ns)
        ana_xout_printf(c->out, "%" PRIu64, *free_ns);
    ana_xout_printf(c->out, ",%u,", stack);
    put_field(c->out, leaf);
    if (c->classes) {
        unsigned cls = FMT_REACH_UNKNOWN;
        if (!free_ns)
            cls = ana_reach_class_of(c->r, image, serial, UINT64_MAX);
        ana_xout_printf(c->out, ",%s", cls != FMT_REACH_UNKNOWN ? ana_reach_key(cls) : "");
    }
    return ana_xout_write(c->out, "\n", 1);
}

/* A row per block as it ends (free or realloc). */
static int on_step(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    struct csv *c = arg;
    uint32_t kind;
    int rc;

    if (!st->ends && !st->starts)
        return 0;
    if ((rc = ana_xlive_step(&c->live, ev, st, &kind)))
        return rc;
    if (!st->ends)
        return 0;
    uint64_t addr = ev->kind == FMT_EV_FREE ? ev->addr : ev->old_addr;
    return row(c, ev->ref, ev->image, ev->ref_thread, kind, addr, ev->ref_size, ev->ref_ts_ns,
               &ev->ts_ns, ev->ref_stack);
}

static int live_row(void *arg, const struct fmt_event *ev)
{
    return row(arg, ev->serial, ev->image, ev->thread, ev->kind, ev->addr, ev->size, ev->ts_ns,
               NULL, ev->stack);
}

/* After the pass: the blocks still live, in the order they started. */
static int write_live(struct ana_export_job *job)
{
    struct csv *c = job->state;

    return ana_xlive_each(&c->live, live_row, c);
}

static void release_csv(struct ana_export_job *job)
{
    struct csv *c = job->state;

    for (uint32_t i = 0; c->leaf && i <= c->nr_stacks; i++)
        free(c->leaf[i]);
    free(c->leaf);
    free(c->pid);
    free(c->tid);
    ana_xlive_release(&c->live);
}

int ana_export_csv(struct ana_export_job *job)
{
    static const struct ana_heap_replay_ops ops = {.step = on_step};
    struct fmt_trace_counts counts;
    static const struct ana_xjob_hooks hooks = {.write = write_live, .release = release_csv};
    struct csv *c = ana_xjob_state(job, sizeof(*c), &hooks);
    int rc = 0;

    if (!c)
        return -ENOMEM;
    c->r = job->r;
    c->out = job->out;
    c->o = job->o;
    ana_xlive_init(&c->live);
    fmt_reader_counts(job->r, &counts);
    c->nr_stacks = counts.nr_stacks;
    c->leaf = calloc((size_t)c->nr_stacks + 1, sizeof(*c->leaf));
    if (!c->leaf)
        return -ENOMEM;
    if (!(c->sym = ana_xjob_sym(job, &rc)) || (rc = threads_load(c)))
        return rc;
    c->classes = ana_reach_present(job->r);
    ana_xout_printf(c->out, "serial,pid,tid,kind,address,size,alloc_ns,free_ns,stack,function%s\n",
                    c->classes ? ",leak_class" : "");
    return ana_xjob_subscribe(job, 0, &ops, c);
}
