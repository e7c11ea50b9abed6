/* SPDX-License-Identifier: MIT */
/* CSV of heap blocks for spreadsheets and pandas: a header row, then one
 * row per block when it ends (free or realloc), and the blocks still live
 * at the end last, in the order they started. Memory grows with live
 * blocks (their kind is kept until they end) and stacks. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/export/ana_export_internal.h"
#include "analysis/export/ana_export_map.h"

struct csv {
    struct fmt_reader *r;
    struct ana_xout *out;
    struct ana_xsym sym;
    struct ana_map live; /* serial -> kind of live blocks */
    char **leaf;         /* by stack id: the leaf function, built on first use */
    uint32_t nr_stacks;
    uint32_t *pid; /* by thread index */
    uint32_t *tid;
    uint32_t nr_threads;
    const struct ana_export_options *o;
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
        if ((rc = ana_xsym_stack(&c->sym, stack, &st, NULL)))
            return rc;
        c->leaf[stack] =
            strdup(st->nr_lines ? ana_xsym_name(st->lines[0].frame, buf, sizeof(buf)) : "");
        if (!c->leaf[stack])
            return -ENOMEM;
    }
    *name = c->leaf[stack];
    return 0;
}

static int row(struct csv *c, uint64_t serial, uint32_t thread, unsigned kind, uint64_t addr,
               uint64_t size, uint64_t alloc_ns, const uint64_t *free_ns, uint32_t stack)
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
    return ana_xout_write(c->out, "\n", 1);
}

static int pass_ended(struct csv *c)
{
    struct ana_xtemp t = {.o = c->o};
    struct fmt_event ev;
    struct ana_xstep st;
    int rc;

    while ((rc = fmt_reader_next(c->r, &ev)) > 0) {
        if ((rc = ana_xstep_event(&t, &ev, &st)) < 0)
            break;
        if (st.ends) {
            uint32_t kind = FMT_EV_MALLOC;
            uint64_t addr = ev.kind == FMT_EV_FREE ? ev.addr : ev.old_addr;

            ana_xmap_get(&c->live, ev.ref, &kind);
            ana_map_del(&c->live, ev.ref);
            if ((rc = row(c, ev.ref, ev.ref_thread, kind, addr, ev.ref_size, ev.ref_ts_ns,
                          &ev.ts_ns, ev.ref_stack)))
                break;
        }
        if (st.starts && (rc = ana_xmap_put(&c->live, ev.serial, ev.kind)))
            break;
    }
    ana_xtemp_release(&t);
    return rc;
}

static int live_row(void *arg, const struct fmt_event *ev)
{
    return row(arg, ev->serial, ev->thread, ev->kind, ev->addr, ev->size, ev->ts_ns, NULL,
               ev->stack);
}

int ana_export_csv(struct fmt_reader *r, const struct ana_export_options *o, struct ana_xout *out)
{
    struct fmt_trace_counts counts;
    struct csv c = {.r = r, .out = out, .o = o};
    int rc;

    fmt_reader_counts(r, &counts);
    c.nr_stacks = counts.nr_stacks;
    c.leaf = calloc((size_t)c.nr_stacks + 1, sizeof(*c.leaf));
    if (!c.leaf)
        return -ENOMEM;
    if ((rc = ana_xsym_open(&c.sym, r, o)))
        goto out;
    if ((rc = threads_load(&c)))
        goto out;
    ana_xout_printf(out, "serial,pid,tid,kind,address,size,alloc_ns,free_ns,stack,function\n");
    if ((rc = fmt_reader_seek_chunk(r, 0)) || (rc = pass_ended(&c)) < 0 ||
        (rc = ana_xlive_each(r, o, &c.live, live_row, &c)) < 0)
        goto out;
    rc = 0;
out:
    for (uint32_t i = 0; i <= c.nr_stacks; i++)
        free(c.leaf[i]);
    free(c.leaf);
    free(c.pid);
    free(c.tid);
    ana_map_release(&c.live);
    if (c.sym.sym)
        ana_xsym_close(&c.sym);
    return rc;
}
