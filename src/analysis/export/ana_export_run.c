/* SPDX-License-Identifier: MIT */
/* The export: the table of formats, cost names, and the driver that runs
 * every output's job over the shared passes (ana_export_internal.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/export/ana_export_internal.h"

/* The reason a format of one row per call or block gives. */
#define NO_AGGREGATE(rows)                                                                         \
    "its format is " rows ", and an aggregated trace counts the blocks born and freed inside an "  \
    "interval per call site instead (docs/aggregate.md); record without --aggregate for it"

const struct ana_exporter ana_exporters[] = {
    {"massif",
     "ms_print, massif-visualizer. Keeps heap in use over time\n"
     "(--snapshots points), a detailed tree at the peak and at the\n"
     "end. Drops threads, frees, block counts; '#' in names -> '_'.\n",
     ANA_COMPRESS_NONE, NULL, ana_export_massif, ana_export_massif_streams},
    {"heaptrack",
     "heaptrack_print, heaptrack_gui (.zst: zstd, .gz: gzip, else\n"
     "plain). Keeps every allocation and free with its stack and\n"
     "size, time in ms, RSS. Drops threads, addresses, kinds.\n",
     ANA_COMPRESS_BY_SUFFIX, NO_AGGREGATE("a line per allocation and free"), ana_export_heaptrack,
     ana_export_heaptrack_streams},
    {"dhat",
     "valgrind's dh_view.html, Firefox Profiler. Keeps per stack\n"
     "blocks, bytes, lifetimes, maximum, at peak and at end. Drops\n"
     "the time series, threads; has no read/write counts.\n",
     ANA_COMPRESS_NONE, NULL, ana_export_dhat, ana_export_dhat_streams},
    {"pprof",
     "go tool pprof and pprof-based services (gzipped\n"
     "profile.proto). Keeps per stack alloc_objects, alloc_space,\n"
     "inuse_objects, inuse_space (in use = live at the end).\n"
     "Drops time, threads, the peak.\n",
     ANA_COMPRESS_GZIP, NULL, ana_export_pprof, ana_export_pprof_streams},
    {"folded",
     "flamegraph.pl, speedscope, inferno: 'root;...;leaf COST' per\n"
     "stack, for one --cost. Drops everything else.\n",
     ANA_COMPRESS_NONE, NULL, ana_export_folded, ana_export_folded_streams},
    {"sqlite",
     "a database (-o required): every heap block with its alloc\n"
     "and free time and thread, frames as a tree, stacks, modules,\n"
     "threads, processes, mappings with reserve/commit lifetimes.\n"
     "Drops nothing memscribe analyses (see docs/export.md).\n",
     ANA_COMPRESS_DATABASE, NO_AGGREGATE("a row per heap block, with its times and address"),
     ana_export_sqlite, ana_export_sqlite_streams},
    {"csv",
     "one row per heap block: serial, pid, tid, kind, address,\n"
     "size, alloc and free time, stack id, leaf function. Drops\n"
     "whole stacks and virtual memory.\n",
     ANA_COMPRESS_NONE, NO_AGGREGATE("a row per heap block, with its times and address"),
     ana_export_csv, ana_export_csv_streams},
    {NULL, NULL, ANA_COMPRESS_NONE, NULL, NULL, NULL},
};

static const char *const cost_names[] = {
    [ANA_COST_ALLOCATIONS] = "allocations", [ANA_COST_BYTES] = "bytes",
    [ANA_COST_LEAKED] = "leaked",           [ANA_COST_PEAK] = "peak",
    [ANA_COST_TEMPORARY] = "temporary",
};

#define NR(a) (sizeof(a) / sizeof((a)[0]))

const struct ana_exporter *ana_exporter_find(const char *name)
{
    for (const struct ana_exporter *x = ana_exporters; x->name; x++)
        if (!strcmp(name, x->name))
            return x;
    return NULL;
}

bool ana_export_streams(const struct fmt_reader *r, const struct ana_export_output *outs,
                        unsigned nr_outs)
{
    const struct ana_exporter *x = nr_outs == 1 ? outs[0].format : NULL;

    return x && x->streams && (!r || x->streams(r));
}

int ana_export_cost_parse(const char *name, enum ana_export_cost *out)
{
    for (size_t i = 0; i < NR(cost_names); i++)
        if (!strcmp(name, cost_names[i])) {
            *out = (enum ana_export_cost)i;
            return 0;
        }
    return -EINVAL;
}

/* What every job of one export shares. */
struct ana_xrun {
    struct fmt_reader *r;
    const struct ana_export_options *o;
    struct ana_heap_replay pass[2];
    struct ana_xmodel model;
    bool model_wanted;
    struct ana_xsym sym;
    bool sym_open;
};

struct ana_xmodel *ana_xjob_model(struct ana_export_job *job)
{
    struct ana_xrun *x = job->run;

    if (!x->model_wanted) {
        if (ana_xmodel_subscribe(&x->model, &x->pass[0], x->r))
            return NULL;
        x->model_wanted = true;
    }
    return &x->model;
}

struct ana_xsym *ana_xjob_sym(struct ana_export_job *job, int *rc)
{
    struct ana_xrun *x = job->run;

    if (!x->sym_open) {
        if ((*rc = ana_xsym_open(&x->sym, x->r, x->o)))
            return NULL;
        x->sym_open = true;
    }
    return &x->sym;
}

void *ana_xjob_state(struct ana_export_job *job, size_t size, const struct ana_xjob_hooks *hooks)
{
    job->hooks = hooks;
    return job->state = calloc(1, size);
}

int ana_xjob_subscribe(struct ana_export_job *job, unsigned k,
                       const struct ana_heap_replay_ops *ops, void *arg)
{
    return ana_heap_replay_subscribe(job->pass[k], ops, arg, 0);
}

/* Each job's model_ready or write hook, in output order. */
static int each(struct ana_export_job *jobs, unsigned n, bool write)
{
    int rc;

    for (unsigned i = 0; i < n; i++) {
        const struct ana_xjob_hooks *h = jobs[i].hooks;
        int (*fn)(struct ana_export_job *) = !h ? NULL : write ? h->write : h->model_ready;
        if (fn && (rc = fn(&jobs[i])))
            return rc;
    }
    return 0;
}

/* The passes: pass 0, the model's hooks, pass 1 if anything reads it,
 * the writes. */
static int passes(struct ana_xrun *x, struct ana_export_job *jobs, unsigned n)
{
    struct ana_scan_options so;
    int rc;

    ana_scan_options_init(&so);
    so.progress = x->o->progress;
    so.progress_arg = x->o->progress_arg;
    if ((rc = ana_heap_replay_run(&x->pass[0], x->r, &so)) || (rc = each(jobs, n, false)))
        return rc;
    if (x->pass[1].nr_consumers && (rc = ana_heap_replay_run(&x->pass[1], x->r, &so)))
        return rc;
    return each(jobs, n, true);
}

static enum ana_export_compress compress_of(const struct ana_export_output *out)
{
    size_t n = out->path ? strlen(out->path) : 0;

    if (out->format->compress != ANA_COMPRESS_BY_SUFFIX)
        return out->format->compress;
    if (n >= 4 && !strcmp(out->path + n - 4, ".zst"))
        return ANA_COMPRESS_ZSTD;
    if (n >= 3 && !strcmp(out->path + n - 3, ".gz"))
        return ANA_COMPRESS_GZIP;
    return ANA_COMPRESS_NONE;
}

/* Open each output's stream and start its job. */
static int start(struct ana_xrun *x, struct ana_export_job *jobs, struct ana_export_output *outs,
                 unsigned n)
{
    int rc;

    for (unsigned i = 0; i < n; i++) {
        struct ana_export_job *j = &jobs[i];
        enum ana_export_compress c = compress_of(&outs[i]);

        if (fmt_reader_info(x->r)->aggregate_ns && outs[i].format->no_aggregate) {
            snprintf(outs[i].err, sizeof(outs[i].err), "--to %s refuses an aggregated trace: %s",
                     outs[i].format->name, outs[i].format->no_aggregate);
            outs[i].failed = 1;
            return -ENOTSUP;
        }
        *j = (struct ana_export_job){
            .run = x,
            .r = x->r,
            .o = x->o,
            .path = outs[i].path,
            .pass = {&x->pass[0], &x->pass[1]},
            .output_failed = &outs[i].failed,
            .err = outs[i].err,
            .err_size = sizeof(outs[i].err),
        };
        if (c != ANA_COMPRESS_DATABASE && (rc = ana_xout_open(&j->out, outs[i].fd, c)))
            return rc;
        if ((rc = outs[i].format->run(j)))
            return rc;
    }
    return 0;
}

int ana_export_run(struct fmt_reader *r, const struct ana_export_options *o,
                   struct ana_export_output *outs, unsigned nr_outs)
{
    struct ana_step_options step = {.filter = o->filter};
    struct ana_xrun x = {.r = r, .o = o};
    struct ana_export_job *jobs = calloc(nr_outs ? nr_outs : 1, sizeof(*jobs));
    int rc;

    for (unsigned i = 0; i < nr_outs; i++) {
        outs[i].failed = 0;
        outs[i].err[0] = '\0';
    }
    if (!jobs)
        return -ENOMEM;
    ana_heap_replay_init(&x.pass[0], &step);
    ana_heap_replay_init(&x.pass[1], &step);
    if (!(rc = start(&x, jobs, outs, nr_outs)))
        rc = passes(&x, jobs, nr_outs);
    for (unsigned i = 0; i < nr_outs; i++) {
        if (jobs[i].state && jobs[i].hooks->release)
            jobs[i].hooks->release(&jobs[i]);
        free(jobs[i].state);
        /* Output errors stick in the sink, so a failed write shows here
         * even when the exporter stopped on it. */
        int rc2 = jobs[i].out ? ana_xout_close(jobs[i].out) : 0;
        if (rc2 && !outs[i].failed) {
            outs[i].failed = 1;
            rc = rc2;
        }
    }
    if (x.sym_open)
        ana_xsym_close(&x.sym);
    ana_xmodel_release(&x.model);
    ana_heap_replay_release(&x.pass[0]);
    ana_heap_replay_release(&x.pass[1]);
    free(jobs);
    return rc;
}
