/* SPDX-License-Identifier: MIT */
/* memscribe timeline: heap in use, bytes allocated so far, live blocks and
 * RSS over time, one row per interval and process. docs/timeline.md. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_attach.h"
#include "analysis/core/ana_sample.h"
#include "analysis/core/ana_time.h"
#include "analysis/model/ana_timeline.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"
#include "cli/cli_getopt.h"
#include "util/util_duration.h"

enum { OPT_INTERVAL = CLI_ANA_OPT_FIRST_OWN };

static void usage(FILE *out)
{
    fprintf(out, "usage: memscribe timeline [options] FILE\n\n"
                 "Use over time, one row per interval: heap in use at the interval's end\n"
                 "(heap) and its maximum inside the interval (heap_max), bytes and blocks\n"
                 "allocated so far (the cumulative total), live blocks, and the latest RSS\n"
                 "sample, committed memory (mapped with access) and reserved memory\n"
                 "(mapped without access; memscribe vmem).\n"
                 "One table per process.\n\n"
                 "options:\n"
                 "  --interval D    row spacing: 10ms, 1s, ... (default: a hundredth of\n"
                 "                  the trace)\n" CLI_ANA_USAGE);
}

static const struct ana_column cols[] = {
    {"pid", "pid", ANA_CELL_U64},
    {"time", "time", ANA_CELL_STR},
    {"time_ns", "time_ns", ANA_CELL_U64},
    {"heap", "heap_bytes", ANA_CELL_U64 | ANA_CELL_EST},
    {"heap_max", "heap_max_bytes", ANA_CELL_U64 | ANA_CELL_EST},
    {"allocated", "allocated_bytes", ANA_CELL_U64 | ANA_CELL_EST},
    {"allocations", "allocations", ANA_CELL_U64 | ANA_CELL_EST},
    {"live_blocks", "live_blocks", ANA_CELL_U64 | ANA_CELL_EST},
    {"rss", "rss_bytes", ANA_CELL_U64},
    {"committed", "committed_bytes", ANA_CELL_U64},
    {"reserved", "reserved_bytes", ANA_CELL_U64},
};
#define NR_COLS (sizeof(cols) / sizeof(cols[0]))

static void add_row(struct ana_table *t, const struct ana_timeline_row *r)
{
    char buf[64];

    ana_table_add_row(t);
    ana_table_set_u64(t, 0, r->pid);
    ana_table_set_str(t, 1, ana_time_format(r->t_ns, buf, sizeof(buf)));
    ana_table_set_u64(t, 2, r->t_ns);
    ana_table_set_u64(t, 3, r->heap);
    ana_table_set_u64(t, 4, r->heap_max);
    ana_table_set_u64(t, 5, r->allocated_bytes);
    ana_table_set_u64(t, 6, r->nr_allocs);
    ana_table_set_u64(t, 7, r->live_blocks);
    ana_table_set_u64(t, 8, r->rss);
    ana_table_set_u64(t, 9, r->committed);
    ana_table_set_u64(t, 10, r->reserved);
}

int cmd_timeline(int argc, char **argv)
{
    static const struct option own[] = {
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {.takes = CLI_TAKES_ANALYSIS, .own = own, .usage = usage};
    struct cli_ana a;
    uint64_t interval = 0;
    int c, rc;

    cli_ana_init(&a, "timeline", 0);
    while ((c = cli_getopt(&g, &a, argc, argv)) != -1) {
        switch (c) {
        case OPT_INTERVAL:
            if (util_duration_parse(optarg, &interval) || !interval)
                cli_usage_error("timeline: --interval wants a duration like 10ms or 1s, not '%s'",
                                optarg);
            break;
        }
    }
    cli_ana_open(&a, argc, argv, optind);

    struct ana_timeline tl;
    rc = ana_timeline_compute(&tl, a.r, &a.filter, interval, cli_ana_progress, &a);
    cli_ana_progress_done(&a);
    if (rc == -E2BIG)
        cli_usage_error("timeline: --interval is too small for this trace (more than %u rows)",
                        ANA_TIMELINE_MAX_ROWS);
    if (rc == -EOVERFLOW) /* not the interval's fault: it may not have been given */
        cli_die("timeline: %s: %u processes over %llu intervals would make %llu rows, more than "
                "%u; choose processes with --pid%s",
                a.path, tl.nr_images, (unsigned long long)tl.nr_intervals,
                (unsigned long long)tl.nr_rows_needed, ANA_TIMELINE_MAX_ROWS,
                interval ? " or a longer --interval" : "");
    if (rc)
        cli_ana_fail(&a, rc);
    if (tl.asked_ns && tl.asked_ns != tl.interval_ns) {
        char t1[64], t2[64], t3[64];
        cli_warn("timeline: %s: --interval %s is not a multiple of the aggregated trace's "
                 "intervals (%s): rows every %s",
                 a.path, ana_time_format(tl.asked_ns, t1, sizeof(t1)),
                 ana_time_format(tl.aggregate_ns, t2, sizeof(t2)),
                 ana_time_format(tl.interval_ns, t3, sizeof(t3)));
    }

    /* Rows come time-major; group them by image for sections. */
    uint32_t nr_images = 0;
    for (size_t i = 0; i < tl.nr_rows; i++)
        if (tl.rows[i].image + 1 > nr_images)
            nr_images = tl.rows[i].image + 1;
    char name[256], buf[64];
    struct ana_json j;
    bool csv_header_done = false;
    if (a.format == CLI_FMT_JSON) {
        cli_ana_json_begin(&a, &j);
        ana_json_kv_u64(&j, "interval_ns", tl.interval_ns);
        ana_json_key(&j, "processes");
        ana_json_begin_array(&j);
    } else if (a.format == CLI_FMT_TEXT) {
        printf("memscribe timeline: %s: every %s\n", a.path,
               ana_time_format(tl.interval_ns, buf, sizeof(buf)));
        if (tl.aggregate_ns)
            printf("(an aggregated trace: interval granularity, rows at its cuts, each with the "
                   "blocks of the intervals it ends)\n");
        printf("(rss includes memscribe's own ring buffers, up to 4 MiB per traced thread)\n");
    }
    for (uint32_t im = 0; im < nr_images; im++) {
        struct ana_table *t;
        if (ana_table_create(&t, cols, NR_COLS))
            cli_die("timeline: out of memory");
        for (size_t i = 0; i < tl.nr_rows; i++)
            if (tl.rows[i].image == im)
                add_row(t, &tl.rows[i]);
        if (!ana_table_nr_rows(t)) {
            ana_table_destroy(t);
            continue;
        }
        if (a.format == CLI_FMT_JSON) {
            ana_json_begin_object(&j);
            cli_ana_image_json(&a, &j, im);
            ana_json_key(&j, "rows");
            ana_table_write_json(t, &j);
            ana_json_end_object(&j);
        } else if (a.format == CLI_FMT_CSV) {
            cli_ana_table(&a, t, stdout, "", !csv_header_done);
            csv_header_done = true;
        } else {
            cli_ana_image_name(&a, im, name, sizeof(name));
            printf("\n%s\n", name);
            cli_ana_table(&a, t, stdout, "  ", true);
            if (!tl.vm_precise && ana_timeline_committed_flat(&tl, im))
                printf("  (committed does not change: recorded without --vm-precise, only the\n"
                       "  program's own mmap calls and the mappings at its start are seen, not\n"
                       "  malloc's arenas and large blocks, thread stacks or libraries loaded\n"
                       "  later; record with --vm-precise to follow them)\n");
        }
        ana_table_destroy(t);
    }
    if (a.format == CLI_FMT_JSON) {
        ana_json_end_array(&j);
        ana_json_end_object(&j);
        if (ana_json_finish(&j))
            cli_die("timeline: writing the output failed");
    }
    ana_timeline_release(&tl);
    return cli_ana_close(&a);
}
