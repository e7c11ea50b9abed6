/* SPDX-License-Identifier: MIT */
/* memscribe export: write a trace in the formats other tools read
 * (massif, heaptrack, DHAT JSON, pprof, folded stacks, SQLite, CSV).
 *
 * Every exporter streams the trace: memory grows with distinct stacks,
 * frames and live blocks, never with the number of events. Numbers come
 * from one model (ana_export_internal.h) so that the peak, leaked bytes
 * and temporary allocations agree across formats. docs/export.md says
 * what each format keeps and drops. */
#ifndef ANA_EXPORT_API_H
#define ANA_EXPORT_API_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/core/ana_filter.h"
#include "analysis/sym/ana_symbolize.h"
#include "memscribe/trace.h"

enum ana_export_format {
    ANA_EXPORT_MASSIF,
    ANA_EXPORT_HEAPTRACK,
    ANA_EXPORT_DHAT,
    ANA_EXPORT_PPROF,
    ANA_EXPORT_FOLDED,
    ANA_EXPORT_SQLITE,
    ANA_EXPORT_CSV,
};

/* What a folded-stacks line counts. */
enum ana_export_cost {
    ANA_COST_ALLOCATIONS, /* heap blocks started */
    ANA_COST_BYTES,       /* bytes requested */
    ANA_COST_LEAKED,      /* bytes live at the end of the trace */
    ANA_COST_PEAK,        /* bytes live at the peak instant */
    ANA_COST_TEMPORARY,   /* temporary allocations */
};

/* Output compression (heaptrack chooses it by file suffix). */
enum ana_export_compress {
    ANA_COMPRESS_NONE,
    ANA_COMPRESS_GZIP,
    ANA_COMPRESS_ZSTD,
};

struct ana_export_options {
    enum ana_export_format format;
    enum ana_export_cost cost;         /* folded */
    enum ana_export_compress compress; /* heaptrack */
    uint32_t massif_snapshots;         /* 0: the default (50) */
    double massif_threshold;           /* percent of the snapshot; < 0: the default (1%) */
    struct ana_filter *filter;         /* only these processes (--pid); NULL: all */
    struct ana_sym_options sym;
    /* Called with each of the symbolizer's notes (a module whose file is
     * missing or differs from the recorded one) as the export ends, so
     * that raw addresses in the output are explained. May be NULL. */
    void (*note)(void *arg, const char *note);
    void *note_arg;
    /* Called now and then with the time of the event reached. Exporters
     * read the trace two or three times, so the time starts over at each
     * pass. May be NULL. */
    void (*progress)(void *arg, uint64_t ts_ns);
    void *progress_arg;
};

/* Name <-> value, for the command line. Return -EINVAL for unknown names. */
int ana_export_format_parse(const char *name, enum ana_export_format *out);
const char *ana_export_format_name(enum ana_export_format f);
int ana_export_cost_parse(const char *name, enum ana_export_cost *out);

/* Write the trace read by r in o->format. Text and compressed formats go
 * to fd (which is not closed); SQLite creates the database at path (which
 * must not exist). Returns 0 or -errno. *output_failed tells whether the
 * error is the output's (a failed write: -ENOSPC, -EIO, ...; for SQLite
 * err then holds SQLite's message) or the input's (a reader error, see
 * fmt_reader_error(), or -ENOMEM). */
int ana_export_run(struct fmt_reader *r, const struct ana_export_options *o, int fd,
                   const char *path, int *output_failed, char *err, size_t err_size);

#endif
