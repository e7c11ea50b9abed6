/* SPDX-License-Identifier: MIT */
/* The export entry point: format and cost names, and the dispatch to one
 * exporter with its output sink. */
#include <errno.h>
#include <string.h>

#include "analysis/export/ana_export_internal.h"

static const char *const format_names[] = {
    [ANA_EXPORT_MASSIF] = "massif", [ANA_EXPORT_HEAPTRACK] = "heaptrack",
    [ANA_EXPORT_DHAT] = "dhat",     [ANA_EXPORT_PPROF] = "pprof",
    [ANA_EXPORT_FOLDED] = "folded", [ANA_EXPORT_SQLITE] = "sqlite",
    [ANA_EXPORT_CSV] = "csv",
};

static const char *const cost_names[] = {
    [ANA_COST_ALLOCATIONS] = "allocations", [ANA_COST_BYTES] = "bytes",
    [ANA_COST_LEAKED] = "leaked",           [ANA_COST_PEAK] = "peak",
    [ANA_COST_TEMPORARY] = "temporary",
};

#define NR(a) (sizeof(a) / sizeof((a)[0]))

int ana_export_format_parse(const char *name, enum ana_export_format *out)
{
    for (size_t i = 0; i < NR(format_names); i++)
        if (!strcmp(name, format_names[i])) {
            *out = (enum ana_export_format)i;
            return 0;
        }
    return -EINVAL;
}

const char *ana_export_format_name(enum ana_export_format f)
{
    return (size_t)f < NR(format_names) ? format_names[f] : "unknown";
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

int ana_export_run(struct fmt_reader *r, const struct ana_export_options *o, int fd,
                   const char *path, int *output_failed, char *err, size_t err_size)
{
    enum ana_export_compress c = ANA_COMPRESS_NONE;
    struct ana_xout *out;
    int rc, rc2;

    *output_failed = 0;
    if (err_size)
        err[0] = '\0';
    if (o->format == ANA_EXPORT_SQLITE)
        return ana_export_sqlite(r, o, path, output_failed, err, err_size);
    if (o->format == ANA_EXPORT_PPROF)
        c = ANA_COMPRESS_GZIP; /* profile.proto is always gzipped */
    else if (o->format == ANA_EXPORT_HEAPTRACK)
        c = o->compress;
    if ((rc = ana_xout_open(&out, fd, c)))
        return rc;
    switch (o->format) {
    case ANA_EXPORT_MASSIF:
        rc = ana_export_massif(r, o, out);
        break;
    case ANA_EXPORT_HEAPTRACK:
        rc = ana_export_heaptrack(r, o, out);
        break;
    case ANA_EXPORT_DHAT:
        rc = ana_export_dhat(r, o, out);
        break;
    case ANA_EXPORT_PPROF:
        rc = ana_export_pprof(r, o, out);
        break;
    case ANA_EXPORT_FOLDED:
        rc = ana_export_folded(r, o, out);
        break;
    case ANA_EXPORT_CSV:
        rc = ana_export_csv(r, o, out);
        break;
    default:
        rc = -EINVAL;
        break;
    }
    /* Output errors stick in the sink, so a failed write shows here even
     * when the exporter stopped on it. */
    rc2 = ana_xout_close(out);
    if (rc2) {
        *output_failed = 1;
        return rc2;
    }
    return rc;
}
