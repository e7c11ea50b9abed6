/* SPDX-License-Identifier: MIT */
/* DHAT's JSON (dhatFileVersion 2, "heap" mode), read by valgrind's
 * dh_view.html and the Firefox Profiler. One program point (pp) per
 * distinct symbolized stack: stacks that differ only in frames the
 * symbolizer cuts (allocator wrappers) are merged, since dh_view rejects a
 * stack that appears twice. Frames are written as DHAT does,
 * "0xADDR: function (file:line[:column])" or "0xADDR: function (in
 * module)", the forms the Firefox Profiler parses. Times are in microseconds. Access
 * counts (reads, writes) are not recorded, so bkacc is false.
 *
 * Here from the export's model of the whole trace: after its pass, a
 * program point for each stack that allocated, then a second pass for
 * their numbers. A process tree's is folded in one pass as its processes
 * end (ana_export_dhat_fold.c); both write through the functions below
 * (ana_export_dhat.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_aggregate.h"
#include "analysis/core/ana_strtab.h"
#include "analysis/export/ana_export_dhat.h"
#include "analysis/export/ana_export_internal.h"
#include "util/util_array.h"

/* Blocks living at most this long (in tu, here microseconds) count as
 * short-lived in dh_view. */
#define DHAT_SHORT_LIVED_US 1000

struct dhat {
    struct fmt_reader *r;
    struct ana_xout *out;
    struct ana_xsym *sym;
    const struct ana_xmodel *m; /* pass 0's */
    const struct ana_heap_replay *pass;
    struct ana_strtab frames; /* ftbl */
    struct ana_strtab stacks; /* "i,j,k" frame lists -> pp index */
    uint32_t *pp_of;          /* by stack id */
    struct dhat_pp *pps;
    const struct ana_export_options *o;
};

static const char *dhat_label(const struct ana_sym_frame *f, char *buf, size_t size)
{
    char name[64];
    const char *fn = ana_xsym_name(f, name, sizeof(name));

    /* With a column, "file:line:column" as dhat-rs writes it: older
     * Firefox Profiler importers parse only that form. */
    if (f->file && f->line && f->column)
        snprintf(buf, size, "0x%" PRIx64 ": %s (%s:%u:%u)", f->addr, fn, f->file, f->line,
                 f->column);
    else if (f->file && f->line)
        snprintf(buf, size, "0x%" PRIx64 ": %s (%s:%u)", f->addr, fn, f->file, f->line);
    else if (f->module)
        snprintf(buf, size, "0x%" PRIx64 ": %s (in %s)", f->addr, fn, f->module);
    else
        snprintf(buf, size, "0x%" PRIx64 ": %s", f->addr, fn);
    return buf;
}

int ana_xdhat_frames(struct ana_xsym *sym, struct ana_strtab *frames, uint32_t stack,
                     uint32_t **list, uint32_t *n, uint32_t *cap)
{
    const struct ana_sym_stack *st;
    char label[8192];
    int rc;

    if ((rc = ana_xsym_stack(sym, stack, &st, NULL)))
        return rc;
    *n = 0;
    for (uint32_t i = 0; i < st->nr_lines || (i == 0 && !st->nr_lines); i++) {
        const char *l = st->nr_lines ? dhat_label(st->lines[i].frame, label, sizeof(label))
                                     : "0x0: [unknown stack]";
        if (UTIL_ARRAY_RESERVE(*list, *cap, (size_t)*n + 1, 64))
            return -ENOMEM;
        if ((rc = ana_strtab_intern(frames, l, &(*list)[*n])) < 0)
            return rc;
        (*n)++;
    }
    return 0;
}

int ana_xdhat_fs(const uint32_t *list, uint32_t n, char **text, size_t *cap)
{
    size_t len = 0;

    if (UTIL_ARRAY_RESERVE(*text, *cap, 16, 256))
        return -ENOMEM;
    (*text)[0] = '\0';
    for (uint32_t i = 0; i < n; i++) {
        if (UTIL_ARRAY_RESERVE(*text, *cap, len + 16, 256))
            return -ENOMEM;
        len += (size_t)snprintf(*text + len, *cap - len, "%s%u", i ? "," : "", list[i]);
    }
    return 0;
}

/* Give every stack id its pp: the index of its frame list. */
static int group_stacks(struct dhat *d)
{
    uint32_t *list = NULL, nr = 0, cap_list = 0;
    char *key = NULL;
    size_t cap = 0;
    int rc;

    if ((rc = ana_strtab_intern(&d->frames, "[root]", &(uint32_t){0})) < 0)
        return rc;
    for (uint32_t id = 0; id <= d->m->nr_stacks; id++) {
        if (!d->m->stacks[id].nr_allocs)
            continue;
        if ((rc = ana_xdhat_frames(d->sym, &d->frames, id, &list, &nr, &cap_list)) ||
            (rc = ana_xdhat_fs(list, nr, &key, &cap)) ||
            (rc = ana_strtab_intern(&d->stacks, key, &d->pp_of[id])) < 0)
            goto out;
    }
    rc = 0;
    d->pps = calloc(d->stacks.nr + 1, sizeof(*d->pps));
    if (!d->pps)
        rc = -ENOMEM;
out:
    free(key);
    free(list);
    return rc;
}

static void snapshot_peak(struct dhat *d)
{
    for (uint32_t i = 0; i < d->stacks.nr; i++) {
        d->pps[i].gb = d->pps[i].live;
        d->pps[i].gbk = d->pps[i].livebk;
    }
}

/* Pass 1: each program point's blocks as they start and end, and all of
 * them at the peak's heap event. */
/* An aggregated trace's rows (ana_step.h): a batch row's blocks count in
 * tb and tbk (their lifetimes, inside one interval, are not known: tl
 * has the kept blocks' alone); a transient group's bytes join and leave
 * the live ones, for the maximum and the peak. */
static int aggregate_row(struct dhat *d, const struct fmt_event *ev, const struct ana_step *st)
{
    struct dhat_pp *p = &d->pps[d->pp_of[ev->stack <= d->m->nr_stacks ? ev->stack : 0]];

    if (st->batch) {
        p->tb += ev->size;
        p->tbk += ev->arg[0];
        return 0;
    }
    if (st->transient < 0) {
        p->live -= ev->size;
        p->livebk -= ev->arg[0];
        return 0;
    }
    p->live += ev->size;
    p->livebk += ev->arg[0];
    if (p->live > p->mb)
        p->mb = p->live, p->mbk = p->livebk;
    if (d->pass->nr_steps == d->m->peak_step)
        snapshot_peak(d);
    return 0;
}

static int on_step(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    struct dhat *d = arg;
    uint32_t nr_stacks = d->m->nr_stacks;

    if (!st->ends && !st->starts)
        return st->batch || st->transient ? aggregate_row(d, ev, st) : 0;
    if (st->ends)
        ana_xdhat_end(&d->pps[d->pp_of[ev->ref_stack <= nr_stacks ? ev->ref_stack : 0]], ev);
    if (st->starts)
        ana_xdhat_start(&d->pps[d->pp_of[ev->stack <= nr_stacks ? ev->stack : 0]], ev);
    if (d->pass->nr_steps == d->m->peak_step)
        snapshot_peak(d);
    return 0;
}

static uint64_t us(uint64_t ns)
{
    return ns / 1000;
}

int ana_xdhat_head(struct ana_xout *o, struct fmt_reader *r, uint64_t end_ns, uint64_t peak_ns)
{
    const struct fmt_trace_info *info = fmt_reader_info(r);
    const struct fmt_image_info *img = fmt_reader_image(r, 0);
    /* The command line, words joined by spaces, escaped (valid UTF-8 for
     * a strict JSON reader, no control characters). */
    char *cmd =
        ana_xtext(info->command ? info->command : "", info->command ? info->command_len : 0, true);

    if (!cmd)
        return -ENOMEM;
    ana_xout_printf(o,
                    "{\"dhatFileVersion\":2,\"mode\":\"heap\",\"verb\":\"Allocated\","
                    "\"bklt\":true,\"bkacc\":false,\"tu\":\"\\u00b5s\",\"Mtu\":\"s\","
                    "\"tuth\":%d,\"cmd\":\"",
                    DHAT_SHORT_LIVED_US);
    {
        /* A sampled trace: dh_view shows cmd ("Invocation"), led by the label. */
        char label[ANA_SAMPLE_LABEL_SIZE], agg[ANA_AGGREGATE_NOTE_SIZE];

        if (*ana_sample_label(label, sizeof(label), fmt_reader_sample_bytes(r))) {
            ana_xout_printf(o, "[");
            ana_xout_json_strn(o, label, strlen(label));
            ana_xout_printf(o, "] ");
        }
        if (*ana_aggregate_label(agg, sizeof(agg), info)) {
            ana_xout_printf(o, "[");
            ana_xout_json_strn(o, agg, strlen(agg));
            ana_xout_printf(o, "; lifetimes of the blocks born and freed inside an interval "
                               "not known, left out of tl] ");
        }
    }
    ana_xout_json_strn(o, cmd, strlen(cmd));
    free(cmd);
    return ana_xout_printf(o, "\",\"pid\":%u,\"te\":%" PRIu64 ",\"tg\":%" PRIu64 ",\"pps\":[",
                           img ? img->pid : 0, us(end_ns), us(peak_ns));
}

int ana_xdhat_pp(struct ana_xout *o, uint32_t i, const struct dhat_pp *p, uint64_t end_ns,
                 const char *fs)
{
    /* Blocks still live at the end count as living until the end. */
    uint64_t tl = p->tl_ns + p->livebk * end_ns - p->live_ts_sum;

    return ana_xout_printf(
        o,
        "%s\n{\"tb\":%" PRIu64 ",\"tbk\":%" PRIu64 ",\"tl\":%" PRIu64 ",\"mb\":%" PRIu64
        ",\"mbk\":%" PRIu64 ",\"gb\":%" PRIu64 ",\"gbk\":%" PRIu64 ",\"eb\":%" PRIu64
        ",\"ebk\":%" PRIu64 ",\"fs\":[%s]}",
        i ? "," : "", p->tb, p->tbk, us(tl), p->mb, p->mbk, p->gb, p->gbk, p->live, p->livebk, fs);
}

int ana_xdhat_ftbl(struct ana_xout *o, const struct ana_strtab *frames, const uint32_t *order,
                   uint32_t nr)
{
    ana_xout_printf(o, "\n],\"ftbl\":[");
    for (uint32_t i = 0; i < nr; i++) {
        const char *s = frames->strs[order ? order[i] : i];
        ana_xout_printf(o, "%s\n\"", i ? "," : "");
        ana_xout_json_strn(o, s, strlen(s));
        ana_xout_write(o, "\"", 1);
    }
    return ana_xout_printf(o, "\n]}\n");
}

static int write_json(struct dhat *d)
{
    uint64_t end = d->m->end_ts_ns;

    ana_xdhat_head(d->out, d->r, end, d->m->peak_ts_ns);
    for (uint32_t i = 0; i < d->stacks.nr; i++)
        ana_xdhat_pp(d->out, i, &d->pps[i], end, d->stacks.strs[i]);
    return ana_xdhat_ftbl(d->out, &d->frames, NULL, d->frames.nr);
}

/* After pass 0: a program point for each stack that allocated. */
static int group(struct ana_export_job *job)
{
    struct dhat *d = job->state;
    int rc = 0;

    if (!(d->sym = ana_xjob_sym(job, &rc)))
        return rc;
    d->pp_of = calloc((size_t)d->m->nr_stacks + 1, sizeof(*d->pp_of));
    return d->pp_of ? group_stacks(d) : -ENOMEM;
}

static int write_dhat(struct ana_export_job *job)
{
    return write_json(job->state);
}

static void release_dhat(struct ana_export_job *job)
{
    struct dhat *d = job->state;

    free(d->pp_of);
    free(d->pps);
    ana_strtab_release(&d->frames);
    ana_strtab_release(&d->stacks);
}

bool ana_export_dhat_streams(const struct fmt_reader *r)
{
    /* One process: nothing to let go. Aggregated: its rows are not
     * followed without the model. A --keep-last segment: the blocks it
     * carries in are no allocations of their stacks (ana_model.h), whose
     * program point is then the whole model's first, known at the end. */
    const struct fmt_trace_info *info = fmt_reader_info(r);

    return fmt_reader_nr_images(r) > 1 && !info->aggregate_ns && !info->keep_last_ns;
}

int ana_export_dhat(struct ana_export_job *job)
{
    static const struct ana_heap_replay_ops ops = {.step = on_step};
    static const struct ana_xjob_hooks hooks = {
        .model_ready = group, .write = write_dhat, .release = release_dhat};
    struct dhat *d;

    /* image_done is set when the output streams (ana_export_streams). */
    if (job->o->image_done && ana_export_dhat_streams(job->r))
        return ana_export_dhat_fold(job);
    if (!(d = ana_xjob_state(job, sizeof(*d), &hooks)))
        return -ENOMEM;
    *d = (struct dhat){.r = job->r, .out = job->out, .o = job->o, .pass = job->pass[1]};
    if (!(d->m = ana_xjob_model(job)))
        return -ENOMEM;
    return ana_xjob_subscribe(job, 1, &ops, d);
}
