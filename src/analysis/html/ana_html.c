/* SPDX-License-Identifier: MIT */
/* The HTML report's driver: one pass feeds the heap model and the size
 * histogram; a second the window pre-aggregation of the sites the page
 * lists; the core's timeline makes a third, which also replays the
 * mappings for the address-space map; then stacks are symbolized and the
 * page is written. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "analysis/html/ana_html_internal.h"
#include "analysis/pictures/ana_flame.h"

/* Buckets for the window table: enough to select single spikes of the
 * demo (2 s in 5 ms steps), few enough that the page stays small. */
#define DEFAULT_BUCKETS 400

static int on_event(void *arg, const struct fmt_event *ev)
{
    struct ana_html_run *run = arg;
    struct ana_step st;
    int rc;

    /* Both with the page's filter: the model's step serves the histogram. */
    if ((rc = ana_model_event_step(run->model, ev, &st)))
        return rc;
    return ana_histogram_step(&run->hist, ev, &st);
}

static int on_event_wpa(void *arg, const struct fmt_event *ev)
{
    return ana_html_wpa_event(arg, ev);
}

static int build_flames(struct ana_html_run *run)
{
    int rc;

    if ((rc = ana_tree_init(&run->flame, ANA_FLAME_NR_COSTS, 0)))
        return rc;
    if ((rc = ana_tree_init(&run->flame_inv, ANA_FLAME_NR_COSTS, 0)))
        return rc;
    if ((rc = ana_flame_build(&run->flame, run->model, run->stacks, 0, run->keep)))
        return rc;
    if ((rc = ana_flame_build(&run->flame_inv, run->model, run->stacks, 1, run->keep)))
        return rc;
    if ((rc = ana_flame_sort(&run->flame, ana_flame_stacks_name, run->stacks)))
        return rc;
    return ana_flame_sort(&run->flame_inv, ana_flame_stacks_name, run->stacks);
}

static void make_nonce(char *buf, size_t size)
{
    unsigned char raw[16] = {0};
    size_t o = 0;

    /* A failed getrandom leaves zeros: the nonce is then predictable,
     * which only weakens the policy, never the escaping. */
    if (getrandom(raw, sizeof(raw), GRND_NONBLOCK) != (ssize_t)sizeof(raw))
        memset(raw, 0x5a, sizeof(raw));
    for (size_t i = 0; i < sizeof(raw) && o + 3 <= size; i++)
        o += (size_t)snprintf(buf + o, size - o, "%02x", raw[i]);
}

int ana_html_write(struct fmt_reader *r, const struct ana_html_options *o, FILE *out)
{
    struct ana_html_run run = {.r = r, .o = o};
    struct ana_model_options mo = {.filter = o->filter};
    struct ana_scan_options so;
    uint64_t end_ns;
    int rc;

    fmt_reader_counts(r, &run.counts);
    end_ns = run.counts.last_ts_ns;
    make_nonce(run.nonce, sizeof(run.nonce));
    run.replay.until = UINT64_MAX;
    ana_vm_replay_init(&run.replay, NULL, NULL);
    ana_histogram_init(&run.hist, o->filter, false);
    rc = ana_html_wpa_init(
        &run.wpa, ana_html_bucket_width(end_ns, o->nr_buckets ? o->nr_buckets : DEFAULT_BUCKETS),
        end_ns, o->filter);
    if (rc || (rc = ana_model_create(&run.model, &mo)))
        goto out;
    ana_scan_options_init(&so);
    so.progress = o->progress;
    so.progress_arg = o->progress_arg;
    if ((rc = ana_scan(r, &so, on_event, &run)))
        goto out;
    ana_model_finish(run.model);
    /* The sites the page lists, known from the model; a second pass
     * aggregates the window data for them and lumps the rest, so that its
     * memory and the page stay bounded however many stacks there are. */
    if ((rc = ana_stacks_create(&run.stacks, r, &o->sym)))
        goto out;
    long kept = ana_flame_top_sites(run.model, run.stacks, ANA_HTML_MAX_SITES, &run.keep);
    if (kept < 0) {
        rc = (int)kept;
        goto out;
    }
    run.wpa.keep = run.keep;
    run.wpa.nr_keep = ana_model_nr_sites(run.model);
    if ((rc = ana_scan(r, &so, on_event_wpa, &run.wpa)))
        goto out;
    /* About two timeline rows per pixel of the plot. */
    if ((rc = ana_timeline_compute_vm(&run.tl, &run.replay, r, o->filter,
                                      end_ns / 2000 ? end_ns / 2000 : 1, o->progress,
                                      o->progress_arg)))
        goto out;
    if ((rc = build_flames(&run)))
        goto out;
    rc = ana_html_write_page(&run, out);
out:
    if (run.stacks)
        ana_stacks_destroy(run.stacks);
    free(run.keep);
    ana_tree_release(&run.flame);
    ana_tree_release(&run.flame_inv);
    ana_timeline_release(&run.tl);
    ana_vm_replay_release(&run.replay);
    ana_html_wpa_release(&run.wpa);
    ana_histogram_release(&run.hist);
    ana_model_destroy(run.model);
    return rc;
}
