/* SPDX-License-Identifier: MIT */
/* memscribe frag: address-space fragmentation at a moment (--at, default
 * the end): holes between mappings, the largest free gap and how it shrank
 * since tracing began, mappings whose address or size is not a multiple of
 * the granularity with the stacks that made them and the space they
 * strand, what now fills the gap that was largest at the start, and an
 * address-space map as SVG (--svg). docs/frag.md. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_scan.h"
#include "analysis/core/ana_time.h"
#include "analysis/pictures/ana_frag_svg.h"
#include "analysis/plan/ana_plan_fold.h"
#include "analysis/vm/ana_frag.h"
#include "analysis/vm/ana_frag_scan.h"
#include "analysis/vm/ana_vm.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"
#include "cli/cli_fold.h"
#include "cli/cli_getopt.h"
#include "cli/cli_output.h"
#include "util/util_size.h"

enum {
    OPT_AT = CLI_ANA_OPT_FIRST_OWN,
    OPT_GRAN,
    OPT_SVG,
    OPT_INTERVALS,
};

static void usage(FILE *out)
{
    fprintf(out, "usage: memscribe frag [options] FILE\n\n"
                 "Address-space fragmentation of each process at a moment: the holes\n"
                 "between its mappings, the largest free gap and how it shrank over time,\n"
                 "the mappings whose address or size is not a multiple of the granularity\n"
                 "(grouped by the stack that made them, with the free space they strand:\n"
                 "the bytes beside them up to the next granularity boundary), and what\n"
                 "fills the gap that was largest when tracing began. A 32-bit program's\n"
                 "space is [64 KiB, 4 GiB); a 64-bit one's counts only holes between\n"
                 "mappings.\n\n"
                 "options:\n"
                 "  --at T            the moment (default end): 1.5s, 250ms, peak, end-1s\n"
                 "  --granularity N   alignment that counts, bytes with K, M or G\n"
                 "                    (default 64K)\n"
                 "  --svg FILE        write the address-space map at T as SVG (-: on\n"
                 "                    standard output, instead of the tables)\n"
                 "  --intervals N     rows of the largest-gap table (default 10)\n"
                 "  --top N           rows per table (default 20; 0: all)\n" CLI_ANA_USAGE
                     CLI_ANA_FRAMES_USAGE);
}

struct frag {
    struct cli_ana *a;
    unsigned nr_intervals;
    bool fold;     /* each process's stacks let go after its exit (frag_event) */
    uint64_t gran; /* --granularity */
    struct ana_frag_scan s;
};

static const struct ana_column gap_cols[] = {
    {"time", "time_ns", ANA_CELL_U64 | ANA_CELL_TIME},
    {"largest gap", "largest_gap_bytes", ANA_CELL_U64},
    {"gap start", "gap_start", ANA_CELL_STR},
    {"free", "free_bytes", ANA_CELL_U64},
    {"holes", "holes", ANA_CELL_U64},
    {"mappings", "mappings", ANA_CELL_U64},
};

static const struct ana_column site_cols[] = {
    {"count", "count", ANA_CELL_U64},
    {"size", "size", ANA_CELL_U64},
    {"stranded", "stranded_bytes", ANA_CELL_U64},
    {"origin", "origin", ANA_CELL_STR},
    {"stack", "stack", ANA_CELL_LIST | ANA_CELL_INTEREST},
};

static const struct ana_column occ_cols[] = {
    {"bytes", "bytes", ANA_CELL_U64},
    {"mappings", "mappings", ANA_CELL_U64},
    {"origin", "origin", ANA_CELL_STR},
    {"stack", "stack", ANA_CELL_LIST | ANA_CELL_INTEREST},
};

static struct ana_table *site_table(struct cli_ana *a, const struct ana_frag_site *v, long n,
                                    int occupants)
{
    struct ana_table *t;
    unsigned nr;

    if (ana_table_create(&t, occupants ? occ_cols : site_cols, occupants ? 4 : 5))
        cli_die("frag: out of memory");
    for (long i = 0; i < n && (!a->top || i < (long)a->top); i++) {
        const char *const *fr = cli_ana_stack(
            a, v[i].stack, false, a->format == CLI_FMT_TEXT ? CLI_ANA_TEXT_FRAMES : 0, &nr);
        const char *o = v[i].collector                 ? "memscribe"
                        : v[i].origin < FMT_NR_ORIGINS ? fmt_origin_name(v[i].origin)
                                                       : "?";

        ana_table_add_row(t);
        if (occupants) {
            ana_table_set_u64(t, 0, v[i].size);
            ana_table_set_u64(t, 1, v[i].count);
            ana_table_set_str(t, 2, o);
            ana_table_set_stack(t, 3, fr, nr, a->interest);
        } else {
            ana_table_set_u64(t, 0, v[i].count);
            ana_table_set_u64(t, 1, v[i].size);
            ana_table_set_u64(t, 2, v[i].stranded);
            ana_table_set_str(t, 3, o);
            ana_table_set_stack(t, 4, fr, nr, a->interest);
        }
    }
    return t;
}

/* An image's sites: its mappings not aligned to gran (*mis, *nm) and what
 * fills the gap that was largest at its first sample (*occ, *no; none
 * without one). Returns 0 or -ENOMEM; the caller frees both. */
static int image_sites(const struct ana_vm_image *im, uint64_t gran,
                       const struct ana_frag_sample *first, struct ana_frag_site **mis, long *nm,
                       struct ana_frag_site **occ, long *no)
{
    *mis = *occ = NULL;
    *no = 0;
    if ((*nm = ana_frag_misaligned(im, gran, mis)) < 0)
        return (int)*nm;
    if (first && first->st.largest_hi > first->st.largest_lo &&
        (*no = ana_frag_occupants(im, first->st.largest_lo, first->st.largest_hi, occ)) < 0)
        return (int)*no;
    return 0;
}

/* The largest free gap of image over time, a row per sample; *first: its
 * first sample (NULL: none). */
static struct ana_table *gap_table(const struct frag *f, uint32_t image,
                                   const struct ana_frag_sample **first)
{
    struct ana_table *gaps;
    char b1[64];

    if (ana_table_create(&gaps, gap_cols, 6))
        cli_die("frag: out of memory");
    for (size_t i = 0; i < f->s.nr; i++) {
        const struct ana_frag_sample *x = &f->s.v[i];

        if (x->image != image)
            continue;
        if (!*first)
            *first = x;
        ana_table_add_row(gaps);
        ana_table_set_u64(gaps, 0, x->ts);
        ana_table_set_u64(gaps, 1, x->st.largest_hi - x->st.largest_lo);
        snprintf(b1, sizeof(b1), "0x%" PRIx64, x->st.largest_lo);
        ana_table_set_str(gaps, 2, b1);
        ana_table_set_u64(gaps, 3, x->st.free);
        ana_table_set_u64(gaps, 4, x->st.nr_holes);
        ana_table_set_u64(gaps, 5, x->st.nr_mappings);
    }
    return gaps;
}

static void report_image(struct frag *f, uint32_t image, uint64_t gran, struct ana_json *j)
{
    struct cli_ana *a = f->a;
    const struct ana_vm_image *im = ana_vm_get(&f->s.replay.vm, image);
    const struct ana_frag_sample *first = NULL;
    struct ana_frag_stats st;
    struct ana_frag_site *mis = NULL, *occ = NULL;
    struct ana_table *gaps, *mt, *ot;
    long nm, no;
    char name[256], b1[64], b2[64];
    int rc;

    ana_frag_stats(im, &st);
    gaps = gap_table(f, image, &first);
    if ((rc = image_sites(im, gran, first, &mis, &nm, &occ, &no)))
        cli_ana_fail(a, rc);
    mt = site_table(a, mis, nm, 0);
    ot = site_table(a, occ, no, 1);

    if (j) {
        ana_json_begin_object(j);
        cli_ana_image_json(a, j, image);
        ana_json_kv_bool(j, "is_32bit", st.is_32);
        ana_json_kv_u64(j, "space_lo", st.space_lo);
        ana_json_kv_u64(j, "space_hi", st.space_hi);
        ana_json_kv_u64(j, "mappings", st.nr_mappings);
        ana_json_kv_u64(j, "mapped_bytes", st.mapped);
        ana_json_kv_u64(j, "collector_bytes", st.collector);
        ana_json_kv_u64(j, "holes", st.nr_holes);
        ana_json_kv_u64(j, "free_bytes", st.free);
        ana_json_kv_u64(j, "largest_gap_bytes", st.largest_hi - st.largest_lo);
        ana_json_kv_u64(j, "largest_gap_start", st.largest_lo);
        ana_json_key(j, "over_time");
        ana_table_write_json(gaps, j);
        ana_json_key(j, "misaligned");
        ana_table_write_json(mt, j);
        if (first) {
            ana_json_kv_u64(j, "initial_gap_start", first->st.largest_lo);
            ana_json_kv_u64(j, "initial_gap_end", first->st.largest_hi);
        }
        ana_json_key(j, "initial_gap_occupants");
        ana_table_write_json(ot, j);
        ana_json_end_object(j);
    } else if (a->format == CLI_FMT_CSV) {
        cli_ana_table(a, mt, stdout, "", image == 0);
    } else {
        cli_ana_image_name(a, image, name, sizeof(name));
        printf("%s: %s address space [0x%" PRIx64 ", 0x%" PRIx64 ")%s\n", name,
               st.is_32 ? "32-bit" : "64-bit", st.space_lo, st.space_hi,
               st.is_32 ? "" : " (holes between mappings only)");
        printf("  %" PRIu64 " mappings, %" PRIu64 " bytes mapped (%s); %" PRIu64 " holes, %" PRIu64
               " bytes free\n",
               st.nr_mappings, st.mapped, ana_bytes_format(st.mapped, b1, sizeof(b1)), st.nr_holes,
               st.free);
        if (st.collector)
            printf("  %" PRIu64 " bytes (%s) are memscribe's own rings and tables\n", st.collector,
                   ana_bytes_format(st.collector, b1, sizeof(b1)));
        printf("  largest free gap: %" PRIu64 " bytes (%s) at 0x%" PRIx64 "-0x%" PRIx64 "\n\n",
               st.largest_hi - st.largest_lo,
               ana_bytes_format(st.largest_hi - st.largest_lo, b2, sizeof(b2)), st.largest_lo,
               st.largest_hi);
        printf("  largest free gap over time (the first row: when tracing began):\n");
        cli_ana_table(a, gaps, stdout, "    ", true);
        printf("\n  mappings not aligned to %" PRIu64 " bytes, by stack:\n", gran);
        if (ana_table_nr_rows(mt))
            cli_ana_table(a, mt, stdout, "    ", true);
        else
            printf("    none\n");
        if (first) {
            printf("\n  what fills the gap that was largest when tracing began "
                   "(0x%" PRIx64 "-0x%" PRIx64 "):\n",
                   first->st.largest_lo, first->st.largest_hi);
            if (ana_table_nr_rows(ot))
                cli_ana_table(a, ot, stdout, "    ", true);
            else
                printf("    nothing\n");
        }
        putchar('\n');
    }
    ana_table_destroy(gaps);
    ana_table_destroy(mt);
    ana_table_destroy(ot);
    free(mis);
    free(occ);
}

/* An ended image's mappings stay as they were: the frames of the sites
 * its tables will show (the first --top of each) are kept for the end,
 * when its stacks are gone. */
static int keep_sites(struct frag *f, uint32_t image, const struct ana_vm_image *im)
{
    const struct ana_frag_sample *first = NULL;
    struct ana_frag_site *mis, *occ;
    unsigned top = f->a->top;
    long nm, no;
    int rc;

    for (size_t i = 0; i < f->s.nr && !first; i++)
        if (f->s.v[i].image == image)
            first = &f->s.v[i];
    rc = image_sites(im, f->gran, first, &mis, &nm, &occ, &no);
    for (long i = 0; !rc && i < nm && (!top || i < (long)top); i++)
        rc = cli_fold_keep_frames(f->a, mis[i].stack);
    for (long i = 0; !rc && i < no && (!top || i < (long)top); i++)
        rc = cli_fold_keep_frames(f->a, occ[i].stack);
    free(mis);
    free(occ);
    return rc;
}

/* The replay's event (ana_scan_fn), on a process tree: at a process's
 * exit (and at a mapping call that comes after it), the frames its tables
 * read are kept (keep_sites); its stacks go a second after the exit
 * (ana_letgo_image). */
static int frag_event(void *arg, const struct fmt_event *ev)
{
    struct frag *f = arg;
    int rc = ana_vm_replay_event(&f->s.replay, ev);
    const struct ana_vm_image *im = ana_vm_get(&f->s.replay.vm, ev->image);

    if (rc || !f->fold)
        return rc;
    if (im && im->ended && ana_vm_kind_applies(ev->kind) && (rc = keep_sites(f, ev->image, im)))
        return rc;
    return ev->kind == FMT_EV_PROCESS_EXIT ? ana_letgo_image(&f->a->letgo, ev->image, ev->ts_ns)
                                           : 0;
}

/* The address-space map of the first process shown (--pid for another)
 * to svg, stdout with svg_only. */
static void write_map(struct frag *f, const char *svg, bool svg_only)
{
    char buf[64];
    int rc;

    FILE *out = svg_only ? stdout : cli_output_stream("frag", svg);
    uint32_t img = UINT32_MAX;

    for (uint32_t i = 0; i < f->s.replay.vm.nr_images && img == UINT32_MAX; i++)
        if (f->s.replay.vm.images[i].nr &&
            ana_filter_image(&f->a->filter, i, fmt_reader_image(f->a->r, i)->pid))
            img = i;
    if (img == UINT32_MAX)
        cli_die("frag: %s: no mappings to draw", f->a->path);
    {
        char title[300], name[256];

        cli_ana_image_name(f->a, img, name, sizeof(name));
        snprintf(title, sizeof(title), "address space of %s at %s", name,
                 ana_time_format(f->s.replay.until, buf, sizeof(buf)));
        rc = ana_frag_svg(out, &f->s.replay.vm.images[img], title, 0);
    }
    if ((svg_only ? fflush(out) : fclose(out)) != 0 || rc)
        cli_die("frag: %s: cannot write the map", svg_only ? "stdout" : svg);
}

int cmd_frag(int argc, char **argv)
{
    static const struct option own[] = {
        {"at", required_argument, NULL, OPT_AT},
        {"granularity", required_argument, NULL, OPT_GRAN},
        {"svg", required_argument, NULL, OPT_SVG},
        {"intervals", required_argument, NULL, OPT_INTERVALS},
        {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {
        .takes = CLI_TAKES_ANALYSIS | CLI_TAKES_FRAMES, .own = own, .usage = usage};
    struct ana_time_point at = {.base = ANA_TIME_END};
    struct cli_ana a;
    struct frag f;
    uint64_t gran = 64 << 10;
    const char *svg = NULL;
    char buf[64];
    int c, rc;

    memset(&f, 0, sizeof(f));
    f.nr_intervals = 10;
    cli_ana_init(&a, "frag", 20);
    while ((c = cli_getopt(&g, &a, argc, argv)) != -1) {
        switch (c) {
        case OPT_AT:
            if (ana_time_parse_point(optarg, &at))
                cli_usage_error("frag: --at wants a time like 1.5s, 250ms, peak or end-1s, not "
                                "'%s'",
                                optarg);
            break;
        case OPT_GRAN:
            if (util_size_parse(optarg, &gran))
                cli_usage_error("frag: --granularity wants a size like 4096, 64K or 2M, not '%s'",
                                optarg);
            break;
        case OPT_SVG:
            svg = optarg;
            break;
        case OPT_INTERVALS:
            f.nr_intervals = (unsigned)cli_ana_number(&a, "intervals", optarg);
            if (!f.nr_intervals)
                cli_usage_error("frag: --intervals wants at least 1");
            break;
        }
    }
    /* A tree's processes' stacks are decoded as needed and go as they end
     * (docs/architecture.md, "Process trees"). */
    f.fold = a.stacks_later = ana_plan_fold_wanted();
    cli_ana_open(&a, argc, argv, optind);
    f.a = &a;
    f.gran = gran;
    f.s.replay.filter = &a.filter;
    f.s.replay.r = a.r;
    f.s.replay.until = cli_ana_time(&a, "--at", &at);
    f.s.replay.nr_intervals = f.nr_intervals;
    ana_frag_scan_init(&f.s);
    cli_ana_scan(&a, UINT64_MAX, frag_event, &f);
    if ((rc = ana_vm_replay_finish(&f.s.replay)))
        cli_ana_fail(&a, rc);
    /* The definitions no stack was read from yet: a corrupt one fails here,
     * as it does at open without a fold. */
    if (f.fold && (rc = fmt_reader_load_stacks(a.r)))
        cli_ana_fail(&a, rc);

    bool svg_only = svg && !strcmp(svg, "-"); /* the map on stdout, and nothing else */
    if (svg_only) {
        /* the report is left out below */
    } else if (a.format == CLI_FMT_JSON) {
        struct ana_json j;

        ana_json_init(&j, stdout, true);
        ana_json_begin_object(&j);
        ana_json_kv_u64(&j, "at_ns", f.s.replay.until);
        ana_json_kv_u64(&j, "granularity", gran);
        ana_json_key(&j, "processes");
        ana_json_begin_array(&j);
        for (uint32_t i = 0; i < f.s.replay.vm.nr_images; i++)
            if (f.s.replay.vm.images[i].nr &&
                ana_filter_image(&a.filter, i, fmt_reader_image(a.r, i)->pid))
                report_image(&f, i, gran, &j);
        ana_json_end_array(&j);
        ana_json_end_object(&j);
        if (ana_json_finish(&j))
            cli_die("frag: cannot write the output");
    } else {
        if (a.format == CLI_FMT_TEXT)
            printf("memscribe frag: %s: at %s, granularity %" PRIu64 " bytes\n\n", a.path,
                   ana_time_format(f.s.replay.until, buf, sizeof(buf)), gran);
        for (uint32_t i = 0; i < f.s.replay.vm.nr_images; i++)
            if (f.s.replay.vm.images[i].nr &&
                ana_filter_image(&a.filter, i, fmt_reader_image(a.r, i)->pid))
                report_image(&f, i, gran, NULL);
    }
    if (svg)
        write_map(&f, svg, svg_only);
    ana_frag_scan_release(&f.s);
    return cli_ana_close(&a);
}
