/* SPDX-License-Identifier: MIT */
/* The launcher's whole interim event file as a trace (docs/windows.md, "The
 * trace"): records given times from the CLOCK record, merged by time, each
 * converted by win_conv.c and written with the format's writer. */
#include "win_trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/fmt_writer.h"
#include "win_conv.h"

struct item {
    const struct win_rec *r;
    uint64_t ts;
};

static int by_time(const void *a, const void *b)
{
    const struct item *x = a, *y = b;

    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->r->pid != y->r->pid)
        return x->r->pid < y->r->pid ? -1 : 1;
    return x->r->seq < y->r->seq ? -1 : x->r->seq > y->r->seq;
}

/* The parent of a process: the one whose CreateProcess detour followed it
 * (its CHILD record); 0 for the program the launcher started. (Since the
 * collector's PROCESS record carries the parent, only older files need
 * this.) */
static uint32_t parent_of(const struct win_file *f, uint32_t pid)
{
    for (size_t i = 0; i < f->nr; i++)
        if (f->recs[i]->kind == WIN_REC_CHILD && f->recs[i]->a[0] == pid)
            return f->recs[i]->pid;
    return 0;
}

/* The program of a process: its first module (EnumProcessModules lists the
 * exe first). */
static void exe_of(const struct win_file *f, uint32_t pid, const char **exe, size_t *len)
{
    *exe = NULL;
    *len = 0;
    for (size_t i = 0; i < f->nr; i++)
        if (f->recs[i]->pid == pid && f->recs[i]->kind == WIN_REC_MODULE) {
            const char *pdb;
            size_t pdb_len;

            win_rec_module_text(f->recs[i], exe, len, &pdb, &pdb_len);
            return;
        }
}

/* Times in each process's order: a record takes its seq before the call
 * and its time after, so a time is raised to the one before it. */
static struct item *items_in_time_order(const struct win_file *f)
{
    struct item *v = malloc((f->nr ? f->nr : 1) * sizeof(*v));
    uint64_t prev = 0;

    if (!v)
        return NULL;
    for (size_t i = 0; i < f->nr; i++) {
        uint64_t ts = win_file_ns(f, f->recs[i]);

        if (i && f->recs[i]->pid == f->recs[i - 1]->pid && ts < prev)
            ts = prev;
        v[i] = (struct item){f->recs[i], ts};
        prev = ts;
    }
    qsort(v, f->nr, sizeof(*v), by_time);
    return v;
}

static int sink_stack(void *ctx, uint32_t image, const uint64_t *frames, uint32_t nr, uint32_t *id)
{
    return fmt_writer_stack(ctx, image, frames, nr, id);
}

static int sink_event(void *ctx, struct fmt_event *ev)
{
    return fmt_writer_event(ctx, ev);
}

static int convert_all(const struct win_file *f, const struct item *items, struct win_conv *c)
{
    int rc = 0;

    for (size_t i = 0; i < f->nr && !rc; i++) {
        const struct win_rec *r = items[i].r;
        uint32_t ppid = 0;
        const char *exe = NULL;
        size_t exe_len = 0;

        if (r->kind == WIN_REC_PROCESS) {
            ppid = r->a[1] ? (uint32_t)r->a[1] : parent_of(f, r->pid);
            exe_of(f, r->pid, &exe, &exe_len);
        }
        rc = win_conv_record(c, r, items[i].ts, ppid, exe, exe_len);
    }
    return rc;
}

int win_trace_write(const struct win_file *f, int fd, struct win_conv_stats *st, int zlib,
                    char *err, size_t err_size)
{
    struct fmt_writer_options opt = {.pe_process = 1, .zlib = zlib};
    struct item *items = items_in_time_order(f);
    struct fmt_writer *w;
    struct win_conv *c;
    uint64_t end = 0;
    int rc;

    if (!items)
        return -ENOMEM;
    for (size_t i = 0; i < f->nr; i++)
        end = items[i].ts > end ? items[i].ts : end;
    struct fmt_trace_info info = {
        .start_realtime_ns = f->mtime_ns > end ? f->mtime_ns - end : 0,
        .stack_depth = WIN_REC_MAX_FRAMES,
    };
    if ((rc = fmt_writer_create(&w, fd, &info, &opt))) {
        snprintf(err, err_size, "cannot start the trace: %s", strerror(-rc));
        free(items);
        return rc;
    }
    struct win_conv_sink sink = {w, sink_stack, sink_event};
    if (!(c = win_conv_new(&sink)))
        rc = -ENOMEM;
    if (!rc)
        rc = convert_all(f, items, c);
    if (!rc)
        rc = fmt_writer_finish(w);
    if (rc)
        snprintf(err, err_size, "writing the trace: %s", strerror(-rc));
    fmt_writer_destroy(w);
    if (c && st)
        win_conv_stats(c, st);
    win_conv_free(c);
    free(items);
    return rc;
}
