/* SPDX-License-Identifier: MIT */
/* report's and leaks' lines about the heaps of a trace with pools. */
#include "cli/cli_heaps.h"

#include <inttypes.h>
#include <string.h>

#include "analysis/core/ana_sample.h"
#include "analysis/core/ana_text.h"

void cli_heaps_load(struct cli_ana *a, struct ana_heaps *h, uint64_t until_ns)
{
    int rc;

    ana_heaps_init(h, a->r);
    if (!ana_heaps_present(a->r))
        return;
    rc = ana_heaps_compute(h, a->r, &a->filter, until_ns, cli_ana_progress, a);
    cli_ana_progress_done(a);
    if (rc)
        cli_ana_fail(a, rc);
}

void cli_heaps_text(struct cli_ana *a, const struct ana_heaps *h, uint32_t image, FILE *out)
{
    char name[300], b1[64], b2[64], t1[64];
    int any = 0;

    for (uint32_t i = 0; i < h->nr; i++) {
        const struct ana_heap *hp = &h->v[i];
        if (hp->image != image || (!hp->nr_allocs && !hp->nr_frees))
            continue;
        if (!any++)
            fprintf(out, "  heaps (a pool's blocks lie in malloc's blocks: the totals above "
                         "count both):\n");
        ana_heap_name(a->r, hp->image, hp->handle, name, sizeof(name));
        fputs("    ", out);
        ana_text_put(out, name, strlen(name));
        fprintf(
            out,
            ": %" PRIu64 " allocations (%" PRIu64 " bytes), peak %" PRIu64 " bytes (%s) in %" PRIu64
            " blocks at %s, leaked %" PRIu64 " bytes (%s) in %" PRIu64 " blocks, ",
            hp->nr_allocs, hp->alloc_bytes, hp->peak, ana_bytes_format(hp->peak, b1, sizeof(b1)),
            hp->peak_blocks, ana_time_format(hp->peak_ns, t1, sizeof(t1)), hp->live,
            ana_bytes_format(hp->live, b2, sizeof(b2)), hp->live_blocks);
        if (ana_sample_has_temporary(fmt_reader_sample_bytes(a->r)))
            fprintf(out, "%" PRIu64 " temporary\n", hp->nr_temporary);
        else
            fprintf(out, "temporary " ANA_SAMPLE_NO_TEMPORARY "\n");
    }
}

void cli_heaps_leaks_text(struct cli_ana *a, const struct ana_heaps *h, uint32_t image, FILE *out)
{
    char name[300];
    int any = 0;

    for (uint32_t i = 0; i < h->nr; i++) {
        const struct ana_heap *hp = &h->v[i];
        if (hp->image != image || !hp->live_blocks)
            continue;
        fputs(any++ ? "; " : "  by heap: ", out);
        ana_heap_name(a->r, hp->image, hp->handle, name, sizeof(name));
        ana_text_put(out, name, strlen(name));
        fprintf(out, " %" PRIu64 " bytes in %" PRIu64 " blocks", hp->live, hp->live_blocks);
    }
    if (any)
        fputc('\n', out);
}

void cli_heaps_json(struct cli_ana *a, const struct ana_heaps *h, uint32_t image,
                    struct ana_json *j)
{
    char name[300], handle[32];

    if (!h->nr)
        return;
    ana_json_key(j, "heaps");
    ana_json_begin_array(j);
    for (uint32_t i = 0; i < h->nr; i++) {
        const struct ana_heap *hp = &h->v[i];
        if (hp->image != image || (!hp->nr_allocs && !hp->nr_frees))
            continue;
        ana_json_begin_object(j);
        ana_json_kv_str(j, "name", ana_heap_name(a->r, hp->image, hp->handle, name, sizeof(name)));
        snprintf(handle, sizeof(handle), "0x%" PRIx64, hp->handle);
        ana_json_kv_str(j, "handle", handle);
        ana_json_kv_bool(j, "pool", hp->handle != 0);
        ana_json_kv_u64(j, "allocations", hp->nr_allocs);
        ana_json_kv_u64(j, "allocated_bytes", hp->alloc_bytes);
        ana_json_kv_u64(j, "frees", hp->nr_frees);
        ana_json_kv_u64(j, "freed_by_destroy", hp->nr_destroyed);
        ana_json_kv_u64(j, "peak_bytes", hp->peak);
        ana_json_kv_u64(j, "peak_blocks", hp->peak_blocks);
        ana_json_kv_u64(j, "peak_ns", hp->peak_ns);
        ana_json_kv_u64(j, "leaked_bytes", hp->live);
        ana_json_kv_u64(j, "leaked_blocks", hp->live_blocks);
        bool temp = ana_sample_has_temporary(fmt_reader_sample_bytes(a->r));
        ana_json_kv_u64_or_null(j, "temporary", temp, hp->nr_temporary);
        ana_json_kv_u64_or_null(j, "temporary_bytes", temp, hp->temporary_bytes);
        ana_json_end_object(j);
    }
    ana_json_end_array(j);
}
