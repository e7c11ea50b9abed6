/* SPDX-License-Identifier: MIT */
/* memscribe export: write a trace in the formats other tools read
 * (massif, heaptrack, DHAT JSON, pprof, folded stacks, SQLite, CSV), one
 * or several at once.
 *
 * Every exporter streams the trace: memory grows with distinct stacks,
 * frames and live blocks, never with the number of events. Numbers come
 * from one model (ana_export_internal.h) so that the peak, leaked bytes
 * and temporary allocations agree across formats. docs/export.md says
 * what each format keeps and drops. */
#ifndef ANA_EXPORT_API_H
#define ANA_EXPORT_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/core/ana_filter.h"
#include "analysis/core/ana_scan.h"
#include "analysis/sym/ana_symbolize.h"
#include "memscribe/trace.h"

/* What a folded-stacks line counts. */
enum ana_export_cost {
    ANA_COST_ALLOCATIONS, /* heap blocks started */
    ANA_COST_BYTES,       /* bytes requested */
    ANA_COST_LEAKED,      /* bytes live at the end of the trace */
    ANA_COST_PEAK,        /* bytes live at the peak instant */
    ANA_COST_TEMPORARY,   /* temporary allocations */
};

/* How an output is written. */
enum ana_export_compress {
    ANA_COMPRESS_NONE, /* as it is */
    ANA_COMPRESS_GZIP,
    ANA_COMPRESS_ZSTD,
    /* The format's: by the output's name, .zst zstd, .gz gzip, else as
     * it is (heaptrack). */
    ANA_COMPRESS_BY_SUFFIX,
    /* The format's: no stream but a database made at the output's path
     * (sqlite). */
    ANA_COMPRESS_DATABASE,
};

struct ana_export_job;

/* One export format. The table of them (ana_exporters) is the one list:
 * `export --to` takes its names, `export --help` prints its help, its
 * errors name them. */
struct ana_exporter {
    const char *name; /* --to NAME */
    /* What it is for, keeps and drops: lines of `export --help` (each
     * ending in '\n'), at most 62 characters wide. */
    const char *help;
    enum ana_export_compress compress;
    /* Why it refuses an aggregated trace (docs/aggregate.md), or NULL: a
     * format of one row per call or block cannot hold the blocks counted
     * per call site and interval. ana_export_run fails with -ENOTSUP. */
    const char *no_aggregate;
    /* Join an export: subscribe what it reads to the export's passes and
     * set the job's hooks (ana_export_internal.h). 0 or -errno. */
    int (*run)(struct ana_export_job *job);
    /* Whether it can write each process image's part at the image's end
     * for the trace r reads (ana_export_options.image_done), or NULL:
     * never (it writes at the end, from a model of the whole trace). */
    bool (*streams)(const struct fmt_reader *r);
};

/* Every format, in the order help lists them, ending with {NULL}. */
extern const struct ana_exporter ana_exporters[];

/* The format named name, or NULL. */
const struct ana_exporter *ana_exporter_find(const char *name);

struct ana_export_options {
    enum ana_export_cost cost; /* folded */
    uint32_t massif_snapshots; /* 0: the default (50) */
    double massif_threshold;   /* percent of the snapshot; < 0: the default (1%) */
    /* Every Nth regular snapshot is detailed (valgrind's --detailed-freq);
     * 0: the default (10). */
    uint32_t massif_detailed_freq;
    struct ana_filter *filter; /* only these processes (--pid); NULL: all */
    struct ana_sym_options sym;
    /* Called with each of the symbolizer's notes (a module whose file is
     * missing or differs from the recorded one) as the export ends, so
     * that raw addresses in the output are explained. May be NULL. */
    void (*note)(void *arg, const char *note);
    void *note_arg;
    /* Progress of each pass over the trace (ana_scan.h): an export reads
     * it once, or twice when an output places the model's peak in its
     * stream (massif, dhat but alone on a process tree, heaptrack), so the
     * time starts over at the second pass. May be NULL. */
    ana_progress_fn *progress;
    void *progress_arg;
    /* Bounded memory on process trees (docs/architecture.md, "Process
     * trees"): set only when the output streams the trace
     * (ana_export_streams), it writes each image's part when the image
     * ends (and at the end for those still running) and drops what it
     * kept of it, then calls image_done for an image that ended (at
     * end_ns): its stacks are read no more, but for an event of it that
     * comes after its exit (cmd_export.c lets them go a second later).
     * Returns 0 or -errno (which stops the export). NULL: the outputs
     * write at the end. */
    int (*image_done)(void *arg, uint32_t image, uint64_t end_ns);
    void *image_arg;
    /* pprof: a delta of the window [window_t0_ns, window_t1_ns] (times
     * from the trace's start; window set), as Go's /debug/pprof/heap?
     * seconds=N: alloc_* what was allocated inside it, inuse_* the change
     * of what is in use (negative where more was freed), per stack; the
     * classes of `memscribe window` (ana_window.h). Not with image_done. */
    bool window;
    uint64_t window_t0_ns, window_t1_ns;
    /* pprof: the default sample type (pprof -sample_index): one of
     * alloc_objects, alloc_space, inuse_objects, inuse_space; NULL:
     * inuse_space, as Go's /heap (its /allocs: alloc_space). */
    const char *pprof_default;
};

/* Whether name is one of pprof's sample types memscribe writes. */
bool ana_export_pprof_type_ok(const char *name);

/* Name -> value, for the command line. -EINVAL for an unknown name. */
int ana_export_cost_parse(const char *name, enum ana_export_cost *out);

/* One output of an export. */
struct ana_export_output {
    const struct ana_exporter *format;
    int fd;           /* where a stream goes (not closed); unused by a database */
    const char *path; /* the output's file: a database is made there (it must not
                         exist); ANA_COMPRESS_BY_SUFFIX goes by it; NULL: fd is
                         standard output */
    /* Set by ana_export_run() when it fails: whether the error is this
     * output's (a failed write: -ENOSPC, -EIO, ...; for SQLite, err then
     * holds SQLite's message) rather than the input's. */
    int failed;
    char err[512];
};

/* Whether the export's one output can write each process image's part at
 * the image's end for the trace r reads (ana_exporter.streams): pprof (but
 * for a trace with leak classes), folded, csv, sqlite, heaptrack, dhat and
 * massif (a trace of several processes; csv and sqlite without leak
 * classes, sqlite not of Windows; heaptrack lets stacks go but keeps its
 * tables; dhat neither aggregated nor a --keep-last segment, its program
 * points of ended processes in a scratch file; massif not aggregated,
 * what ended processes left in a scratch file).
 * r NULL: whether it can for some trace.
 * Several outputs share one model of the whole trace instead (each that
 * streams would replay a model of its own). */
bool ana_export_streams(const struct fmt_reader *r, const struct ana_export_output *outs,
                        unsigned nr_outs);

/* Write the trace read by r to every output, reading it once, or twice
 * when an output places the model's peak in its stream (massif, dhat,
 * heaptrack): every output's numbers come from the same passes and the
 * same model. Returns 0, or the first -errno: an output's (its failed
 * set) or the input's (a reader error, see fmt_reader_error(), or
 * -ENOMEM). */
int ana_export_run(struct fmt_reader *r, const struct ana_export_options *o,
                   struct ana_export_output *outs, unsigned nr_outs);

#endif
