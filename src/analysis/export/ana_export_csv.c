/* SPDX-License-Identifier: MIT */
/* CSV of heap blocks for spreadsheets and pandas: a header row, then one
 * row per block when it ends (free or realloc), and the blocks still live
 * at the end last, in the order they started. Memory grows with live
 * blocks (what their allocation said is kept until they end) and stacks.
 * A trace with reachability classes (record --reach) has a last column,
 * leak_class: a live block's class at exit (ana_reach.h), empty for the
 * others.
 *
 * On a process tree (ana_export_options.image_done) memory follows the
 * processes running: a model of csv's own tells it each image's end
 * (ana_model_options.retire), when the leaf names of its live blocks are
 * taken and its stacks let go; a second later (an event of it may come
 * late, as the stacks' let-go waits for) its live blocks, final then,
 * leave memory as rows in a scratch file (unlinked; $TMPDIR or /tmp), a
 * run in trace order per image. The last rows merge the runs by serial:
 * the file is the same, byte for byte. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/core/ana_strtab.h"
#include "analysis/export/ana_export_internal.h"
#include "analysis/model/ana_reach.h"
#include "util/util_array.h"

/* A run of the scratch file: one image's live blocks' rows, each an
 * 8-byte serial, a 4-byte length and the row's text; and its reader in
 * the merge. */
struct run {
    uint64_t pos, end; /* in the file: the next record, the run's end */
    uint64_t serial;   /* the record at buf + at */
    char *buf;
    size_t at, len, cap;
};

struct csv {
    struct fmt_reader *r;
    struct ana_xout *out;
    struct ana_xsym *sym;
    struct ana_xlive live; /* the blocks not ended yet */
    /* By stack id: its leaf function's id + 1 in leaves, or 0; streamed,
     * in leaf_of (stack -> id), the stacks of an image whose blocks went
     * dropped. */
    uint32_t *leaf;
    struct ana_map leaf_of;
    struct ana_strtab leaves;
    uint32_t nr_stacks;
    char *line; /* the row being written (line_len bytes) */
    size_t line_len, line_cap;
    /* Streamed (on a tree): the model that tells images' ends, the
     * images ended whose blocks go next and their sites' stacks, those
     * gone (spilled: a block of one that ends now came too late), the
     * scratch file and its runs. */
    struct ana_model *model;
    struct ana_ended ended;
    struct ended_stacks {
        uint32_t nr, cap;
        uint32_t *v; /* its sites' */
    } * stacks_of;   /* by image, until its blocks go */
    size_t cap_stacks_of;
    uint8_t *spilled;
    size_t cap_spilled;
    struct ana_xscratch_out spill; /* the live blocks of ended images, a run each */
    struct run *runs;
    size_t nr_runs, cap_runs;
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

/* Stack's leaf function's id in c->leaves, found on first use. */
static int leaf_id(struct csv *c, uint32_t stack, uint32_t *id)
{
    const struct ana_sym_stack *st;
    uint32_t *at;
    char buf[64];
    int rc;

    if (stack > c->nr_stacks)
        stack = 0;
    at = c->model ? ana_map_put(&c->leaf_of, (uint64_t)stack + 1, NULL) : &c->leaf[stack];
    if (!at)
        return -ENOMEM;
    if (!*at) {
        if ((rc = ana_xsym_stack(c->sym, stack, &st, NULL)))
            return rc;
        if (ana_strtab_intern(
                &c->leaves, st->nr_lines ? ana_xsym_name(st->lines[0].frame, buf, sizeof(buf)) : "",
                id) < 0)
            return -ENOMEM;
        *at = *id + 1;
    }
    *id = *at - 1;
    return 0;
}

/* Add to the row being written (c->line). 0 or -ENOMEM. */
__attribute__((format(printf, 2, 3))) static int put(struct csv *c, const char *fmt, ...)
{
    va_list ap;
    int n;

    for (;;) {
        va_start(ap, fmt);
        n = vsnprintf(c->line + c->line_len, c->line_cap - c->line_len, fmt, ap);
        va_end(ap);
        if (n < 0)
            return -EINVAL;
        if ((size_t)n < c->line_cap - c->line_len)
            break;
        if (UTIL_ARRAY_RESERVE(c->line, c->line_cap, c->line_len + (size_t)n + 1, 256))
            return -ENOMEM;
    }
    c->line_len += (size_t)n;
    return 0;
}

/* CSV-quote a field if it holds a comma, a quote or a line break. */
static int put_field(struct csv *c, const char *s)
{
    int rc = 0;

    if (!strpbrk(s, ",\"\n\r"))
        return put(c, "%s", s);
    rc = put(c, "\"");
    for (; *s && !rc; s++)
        rc = *s == '"' ? put(c, "\"\"") : put(c, "%c", *s);
    return rc ? rc : put(c, "\"");
}

/* c->line: a block's row. */
static int row(struct csv *c, uint64_t serial, uint32_t image, uint32_t thread, unsigned kind,
               uint64_t addr, uint64_t size, uint64_t alloc_ns, const uint64_t *free_ns,
               uint32_t stack)
{
    uint32_t leaf;
    int rc;

    c->line_len = 0;
    if ((rc = leaf_id(c, stack, &leaf)) ||
        (rc = put(c, "%" PRIu64 ",%u,%u,%s,0x%" PRIx64 ",%" PRIu64 ",%" PRIu64 ",", serial,
                  thread < c->nr_threads ? c->pid[thread] : 0,
                  thread < c->nr_threads ? c->tid[thread] : 0, fmt_kind_name(kind), addr, size,
                  alloc_ns)) ||
        (free_ns && (rc = put(c, "%" PRIu64, *free_ns))) || (rc = put(c, ",%u,", stack)) ||
        (rc = put_field(c, c->leaves.strs[leaf])))
        return rc;
    if (c->classes) {
        unsigned cls = FMT_REACH_UNKNOWN;
        if (!free_ns)
            cls = ana_reach_class_of(c->r, image, serial, UINT64_MAX);
        if ((rc = put(c, ",%s", cls != FMT_REACH_UNKNOWN ? ana_reach_key(cls) : "")))
            return rc;
    }
    return put(c, "\n");
}

static int spill_due(struct csv *c, uint64_t now_ns);

/* A row per block as it ends (free or realloc). */
static int on_step(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    struct csv *c = arg;
    uint32_t kind;
    int rc;

    if (c->model && (rc = spill_due(c, ev->ts_ns)))
        return rc;
    if (!st->ends && !st->starts)
        return 0;
    if (st->ends && ev->image < c->cap_spilled && c->spilled[ev->image] &&
        !ana_map_get(&c->live.blocks, ev->ref))
        return -ESTALE; /* its row went with its image's live blocks */
    if ((rc = ana_xlive_step(&c->live, ev, st, &kind)))
        return rc;
    if (!st->ends)
        return 0;
    uint64_t addr = ev->kind == FMT_EV_FREE ? ev->addr : ev->old_addr;
    if ((rc = row(c, ev->ref, ev->image, ev->ref_thread, kind, addr, ev->ref_size, ev->ref_ts_ns,
                  &ev->ts_ns, ev->ref_stack)))
        return rc;
    return ana_xout_write(c->out, c->line, c->line_len);
}

static int live_row(void *arg, const struct fmt_event *ev)
{
    struct csv *c = arg;
    int rc = row(c, ev->serial, ev->image, ev->thread, ev->kind, ev->addr, ev->size, ev->ts_ns,
                 NULL, ev->stack);

    return rc ? rc : ana_xout_write(c->out, c->line, c->line_len);
}

/* After the pass: the blocks still live, in the order they started. */
static int write_live(struct ana_export_job *job)
{
    struct csv *c = job->state;

    return ana_xlive_each(&c->live, live_row, c);
}

/* ---- Streamed: each image's live blocks into the scratch file. */

/* A live block's stack's leaf, taken while its stacks are readable. */
static int take_leaf(void *arg, const struct fmt_event *ev)
{
    uint32_t id;

    return leaf_id(arg, ev->stack, &id);
}

/* A live block's record in the scratch file. */
static int spill_row(void *arg, const struct fmt_event *ev)
{
    struct csv *c = arg;
    int rc = row(c, ev->serial, ev->image, ev->thread, ev->kind, ev->addr, ev->size, ev->ts_ns,
                 NULL, ev->stack);
    uint32_t len = (uint32_t)c->line_len;

    if (rc || (rc = ana_xscratch_append(&c->spill, &ev->serial, sizeof(ev->serial))) ||
        (rc = ana_xscratch_append(&c->spill, &len, sizeof(len))))
        return rc;
    return ana_xscratch_append(&c->spill, c->line, c->line_len);
}

/* Image's live blocks (UINT32_MAX: every image's) as a run of the
 * scratch file, out of memory. */
static int spill(struct csv *c, uint32_t image)
{
    uint64_t start = ana_xscratch_end(&c->spill);
    int rc = image == UINT32_MAX ? ana_xlive_each(&c->live, spill_row, c)
                                 : ana_xlive_each_of(&c->live, image, true, spill_row, c);

    if (rc || ana_xscratch_end(&c->spill) == start)
        return rc;
    if (UTIL_ARRAY_RESERVE(c->runs, c->cap_runs, c->nr_runs + 1, 64))
        return -ENOMEM;
    c->runs[c->nr_runs++] = (struct run){.pos = start, .end = ana_xscratch_end(&c->spill)};
    if (image == UINT32_MAX)
        return 0;
    if (UTIL_ARRAY_RESERVE_ZERO(c->spilled, c->cap_spilled, (size_t)image + 1, 64))
        return -ENOMEM;
    c->spilled[image] = 1;
    return 0;
}

/* The images that ended over a second before now_ns: their live blocks
 * are final (UINT64_MAX: every image that ended); their stacks' leaves
 * are read no more. */
static int spill_due(struct csv *c, uint64_t now_ns)
{
    uint32_t image;
    uint64_t end_ns;
    int rc = 0;

    while (!rc && ana_ended_due(&c->ended, now_ns, &image, &end_ns)) {
        struct ended_stacks *e = &c->stacks_of[image];
        rc = spill(c, image);
        for (uint32_t i = 0; i < e->nr; i++)
            ana_map_del(&c->leaf_of, (uint64_t)e->v[i] + 1);
        free(e->v);
        *e = (struct ended_stacks){0};
    }
    return rc;
}

/* One of an ended image's sites: its stack, into the image's list. */
static int note_stack(void *arg, uint32_t stack, const struct ana_site *s)
{
    struct ended_stacks *e = arg;

    (void)s;
    if (UTIL_ARRAY_RESERVE(e->v, e->cap, (size_t)e->nr + 1, 16))
        return -ENOMEM;
    e->v[e->nr++] = stack;
    return 0;
}

/* The model's retire callback: an image that ended has its live blocks'
 * leaves taken, its stacks let go, and its blocks go a second later. */
static int retire(void *arg, const struct ana_model *m, uint32_t image)
{
    struct ana_export_job *job = arg;
    struct csv *c = job->state;
    const struct ana_scope *sc = ana_model_image(m, image);
    int rc;

    if (!sc->ended)
        return 0; /* still running at the end: written from memory */
    if ((rc = ana_xlive_each_of(&c->live, image, false, take_leaf, c)))
        return rc;
    if (UTIL_ARRAY_RESERVE_ZERO(c->stacks_of, c->cap_stacks_of, (size_t)image + 1, 64) ||
        ana_ended_push(&c->ended, image, sc->end_ns))
        return -ENOMEM;
    if ((rc = ana_model_each_site_of(m, image, note_stack, &c->stacks_of[image])))
        return rc;
    return job->o->image_done(job->o->image_arg, image, sc->end_ns);
}

/* Run r's next record at r->buf + r->at (r->serial its serial); 0 at the
 * run's end (r->buf freed). Returns 1, 0 or -errno. */
static int run_next(struct csv *c, struct run *r)
{
    for (size_t need = 12;;) {
        if (r->len - r->at >= need) {
            uint32_t n;
            memcpy(&n, r->buf + r->at + 8, sizeof(n));
            if (need == 12 && (need += n) > 12)
                continue;
            memcpy(&r->serial, r->buf + r->at, sizeof(r->serial));
            return 1;
        }
        if (r->pos == r->end) {
            free(r->buf);
            r->buf = NULL;
            return r->len == r->at ? 0 : -EIO;
        }
        if (r->at)
            memmove(r->buf, r->buf + r->at, r->len - r->at);
        r->len -= r->at;
        r->at = 0;
        if (UTIL_ARRAY_RESERVE(r->buf, r->cap, need > 2048 ? need : 2048, 2048))
            return -ENOMEM;
        size_t want = r->cap - r->len < r->end - r->pos ? r->cap - r->len : r->end - r->pos;
        int rc = ana_xscratch_read(c->spill.fd, r->pos, r->buf + r->len, want);
        if (rc)
            return rc;
        r->len += want;
        r->pos += want;
    }
}

/* heap[i] down to its place in the min-heap of runs by serial. */
static void sift(const struct run *runs, uint32_t *heap, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && runs[heap[l]].serial < runs[heap[m]].serial)
            m = l;
        if (l + 1 < n && runs[heap[l + 1]].serial < runs[heap[m]].serial)
            m = l + 1;
        if (m == i)
            return;
        uint32_t t = heap[i];
        heap[i] = heap[m];
        heap[m] = t;
        i = m;
    }
}

/* After the pass: every image's live blocks, the runs merged by serial
 * (the order they started). */
static int write_stream(struct ana_export_job *job)
{
    struct csv *c = job->state;
    uint32_t *heap;
    size_t n = 0;
    int rc;

    if ((rc = spill_due(c, UINT64_MAX)) || (rc = spill(c, UINT32_MAX)) ||
        (rc = ana_xscratch_flush(&c->spill)))
        return rc;
    if (!(heap = malloc((c->nr_runs + 1) * sizeof(*heap))))
        return -ENOMEM;
    for (uint32_t i = 0; i < c->nr_runs && !rc; i++)
        if ((rc = run_next(c, &c->runs[i])) == 1)
            heap[n++] = i, rc = 0;
    for (size_t i = n; i-- > 0;)
        sift(c->runs, heap, n, i);
    while (n && !rc) {
        struct run *r = &c->runs[heap[0]];
        uint32_t len;
        memcpy(&len, r->buf + r->at + 8, sizeof(len));
        rc = ana_xout_write(c->out, r->buf + r->at + 12, len);
        r->at += 12 + (size_t)len;
        if (!rc && (rc = run_next(c, r)) == 0)
            heap[0] = heap[--n];
        rc = rc < 0 ? rc : 0;
        sift(c->runs, heap, n, 0);
    }
    free(heap);
    return rc;
}

bool ana_export_csv_streams(const struct fmt_reader *r)
{
    /* One process: nothing to let go. Leak classes: known at the end. */
    return fmt_reader_nr_images(r) > 1 && !ana_reach_present(r);
}

/* csv's own model, which tells each image's end. */
static int start_stream(struct ana_export_job *job)
{
    struct csv *c = job->state;

    if ((c->spill.fd = ana_xscratch_open("csv")) < 0)
        return c->spill.fd;
    return ana_xjob_retiring_model(job, retire, &c->model);
}

static void release_csv(struct ana_export_job *job)
{
    struct csv *c = job->state;

    ana_model_destroy(c->model);
    if (c->spill.fd >= 0)
        close(c->spill.fd);
    for (size_t i = 0; i < c->nr_runs; i++)
        free(c->runs[i].buf);
    free(c->runs);
    for (size_t i = 0; i < c->cap_stacks_of; i++)
        free(c->stacks_of[i].v);
    free(c->stacks_of);
    ana_ended_release(&c->ended);
    ana_map_release(&c->leaf_of);
    free(c->spilled);
    free(c->leaf);
    ana_strtab_release(&c->leaves);
    free(c->line);
    free(c->pid);
    free(c->tid);
    ana_xlive_release(&c->live);
}

int ana_export_csv(struct ana_export_job *job)
{
    static const struct ana_heap_replay_ops ops = {.step = on_step};
    struct fmt_trace_counts counts;
    static const struct ana_xjob_hooks hooks = {.write = write_live, .release = release_csv};
    static const struct ana_xjob_hooks stream_hooks = {.write = write_stream,
                                                       .release = release_csv};
    /* image_done is set when the output streams (ana_export_streams). */
    bool stream = job->o->image_done != NULL;
    struct csv *c = ana_xjob_state(job, sizeof(*c), stream ? &stream_hooks : &hooks);
    int rc = 0;

    if (!c)
        return -ENOMEM;
    c->r = job->r;
    c->out = job->out;
    c->o = job->o;
    c->spill.fd = -1;
    ana_xlive_init(&c->live);
    ana_map_init(&c->leaf_of, sizeof(uint32_t));
    fmt_reader_counts(job->r, &counts);
    c->nr_stacks = counts.nr_stacks;
    c->leaf = calloc(stream ? 1 : (size_t)c->nr_stacks + 1, sizeof(*c->leaf));
    if (!c->leaf)
        return -ENOMEM;
    if (!(c->sym = ana_xjob_sym(job, &rc)) || (rc = threads_load(c)))
        return rc;
    c->classes = ana_reach_present(job->r);
    ana_xout_printf(c->out, "serial,pid,tid,kind,address,size,alloc_ns,free_ns,stack,function%s\n",
                    c->classes ? ",leak_class" : "");
    if ((rc = ana_xjob_subscribe(job, 0, &ops, c)))
        return rc;
    return stream ? start_stream(job) : 0;
}
