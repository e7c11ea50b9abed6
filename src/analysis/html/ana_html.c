/* SPDX-License-Identifier: MIT */
/* The HTML report's driver: one pass of the heap replay feeds the heap
 * model, the size histogram, the window pre-aggregation, the timeline and
 * the address-space replay (for the map, and the commit lifetimes' cells);
 * then the sites the page lists
 * are picked from the model (the window cells of the others lumped), the
 * stacks symbolized and the page written. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "analysis/html/ana_html_internal.h"
#include "analysis/model/ana_heap_replay.h"
#include "analysis/pictures/ana_flame.h"

/* Buckets for the window table: enough to select single spikes of the
 * demo (2 s in 5 ms steps), few enough that the page stays small. */
#define DEFAULT_BUCKETS 400

static int build_flames(struct ana_html_run *run)
{
    struct ana_fold *f = run->fold ? &run->fold->flame : NULL;
    int rc;

    if ((rc = ana_tree_init(&run->flame, ANA_FLAME_NR_COSTS, 0)))
        return rc;
    if ((rc = ana_tree_init(&run->flame_inv, ANA_FLAME_NR_COSTS, 0)))
        return rc;
    if ((rc = f ? ana_flame_build_folded(&run->flame, f, run->stacks, 0, ANA_HTML_MAX_SITES, NULL)
                : ana_flame_build(&run->flame, run->model, run->stacks, 0, run->keep)))
        return rc;
    if ((rc = f ? ana_flame_build_folded(&run->flame_inv, f, run->stacks, 1, ANA_HTML_MAX_SITES,
                                         NULL)
                : ana_flame_build(&run->flame_inv, run->model, run->stacks, 1, run->keep)))
        return rc;
    if ((rc = ana_flame_sort(&run->flame, ana_stacks_str_fn, run->stacks)))
        return rc;
    return ana_flame_sort(&run->flame_inv, ana_stacks_str_fn, run->stacks);
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

/* Subscribe every part of the page to the one pass p. */
static int subscribe(struct ana_html_run *run, struct ana_heap_replay *p)
{
    uint64_t end_ns = run->counts.last_ts_ns;
    int rc;

    if ((rc = ana_model_subscribe(run->model, p)) ||
        (rc = ana_histogram_subscribe(&run->hist, p)) ||
        (rc = ana_html_wpa_subscribe(&run->wpa, p)) ||
        (rc = ana_heap_replay_add_vm(p, &run->replay)))
        return rc;
    /* About two timeline rows per pixel of the plot. */
    return ana_timeline_subscribe(&run->tl, p, run->r, end_ns / 2000 ? end_ns / 2000 : 1,
                                  run->model, &run->replay);
}

/* A process the page leaves out ended (ana_model_retire.left_out). */
static int left_out(void *arg, uint32_t image, uint64_t end_ns)
{
    const struct ana_html_options *o = arg;

    return o->let_go(o->let_go_arg, image, end_ns);
}

/* The pass: everything the page shows of the events. */
static int replay(struct ana_html_run *run)
{
    const struct ana_html_options *o = run->o;
    /* Leak classes need the blocks live at the end (ana_reach_build). */
    struct ana_model_options mo = {
        .filter = o->filter, .programs = o->programs, .keep_blocks = run->classes};
    struct ana_step_options step = ana_model_step_options(&mo);
    uint64_t end_ns = run->counts.last_ts_ns;
    struct ana_heap_replay p;
    struct ana_scan_options so;
    int rc;

    /* The address space of every process (the map picks one); the commit
     * lifetimes of the selected ones, in cells as the window's. */
    run->replay.until = UINT64_MAX;
    ana_histogram_init(&run->hist, false);
    uint64_t width = ana_html_bucket_width(end_ns, o->nr_buckets ? o->nr_buckets : DEFAULT_BUCKETS);
    /* An aggregated trace's blocks born and freed inside an interval are
     * known by interval: a bucket holds whole intervals. */
    uint64_t per = fmt_reader_info(run->r)->aggregate_ns;
    if (per && width % per)
        width = width / per + 1 <= UINT64_MAX / per ? (width / per + 1) * per : UINT64_MAX;
    rc = ana_html_wpa_init(&run->wpa, width, end_ns);
    if (rc || (rc = ana_html_vm_init(&run->vm, run->r, o->filter, run->wpa.bucket_ns, end_ns)))
        return rc;
    ana_html_vm_subscribe(&run->vm, &run->replay);
    ana_heap_replay_init(&p, &step);
    if (run->fold) {
        /* Cells by row, sites handed over at each image's end. */
        run->wpa.key_of = ana_html_fold_cell_key;
        run->wpa.key_arg = run->fold;
        rc = ana_html_fold_subscribe(run->fold, &mo, &p);
    } else if (o->let_go && !ana_filter_is_empty(o->filter)) {
        /* The processes left out: their stacks go as they end. */
        mo.retire = (struct ana_model_retire){.arg = (void *)o, .left_out = left_out};
    }
    ana_scan_options_init(&so);
    so.progress = o->progress;
    so.progress_arg = o->progress_arg;
    if (!rc && !(rc = ana_model_create(&run->model, &mo)) && !(rc = subscribe(run, &p)) &&
        !(rc = ana_heap_replay_run(&p, run->r, &so)))
        rc = ana_html_vm_finish(&run->vm, &run->replay, &run->wpa);
    if (!rc && run->fold)
        rc = ana_html_fold_finish(run->fold, run->model);
    ana_heap_replay_release(&p);
    return rc;
}

/* Which cells' keys the page lists (run->keep): with a fold, the row ids
 * whose chain of functions the flame fold's ranking keeps; else the
 * stacks ana_flame_top_sites keeps. Returns 0 or -errno. */
static int pick_kept(struct ana_html_run *run)
{
    struct ana_html_fold *h = run->fold;
    struct ana_map kept;
    int rc;

    if (!h) {
        long n = ana_flame_top_sites(run->model, run->stacks, ANA_HTML_MAX_SITES, &run->keep);
        run->nr_keys = ana_model_nr_sites(run->model);
        return n < 0 ? (int)n : 0;
    }
    run->nr_keys = h->nr_ids;
    if (!(run->keep = calloc(h->nr_ids ? h->nr_ids : 1, 1)))
        return -ENOMEM;
    ana_map_init(&kept, 1);
    rc = ana_flame_fold_kept(&h->flame, ANA_HTML_MAX_SITES, &kept);
    for (uint32_t id = 0; id < h->nr_ids && !rc; id++)
        run->keep[id] = ana_map_get(&kept, (uint64_t)h->function[id] + 1) != NULL;
    ana_map_release(&kept);
    return rc;
}

int ana_html_write(struct fmt_reader *r, const struct ana_html_options *o, FILE *out)
{
    struct ana_html_run run = {.r = r, .o = o};
    int rc;

    fmt_reader_counts(r, &run.counts);
    make_nonce(run.nonce, sizeof(run.nonce));
    run.classes = ana_reach_present(r);
    /* The stacks are read during the pass when it folds (its rows' keys). */
    if ((rc = ana_stacks_create(&run.stacks, r, &o->sym)))
        goto out;
    if (o->fold && o->programs && !o->base && !run.classes) {
        if (!(run.fold = malloc(sizeof(*run.fold)))) {
            rc = -ENOMEM;
            goto out;
        }
        ana_html_fold_init(run.fold, run.stacks, o);
    }
    if ((rc = replay(&run)) || (run.classes && (rc = ana_reach_build(&run.reach, r, run.model))))
        goto out;
    /* The sites the page lists: the window cells of the rest are lumped
     * into one site, so that the page stays bounded however many stacks
     * there are. */
    if ((rc = pick_kept(&run)) || (rc = ana_html_wpa_lump(&run.wpa, run.keep, run.nr_keys)) ||
        (rc = build_flames(&run)))
        goto out;
    rc = ana_html_write_page(&run, out);
out:
    if (run.fold)
        ana_html_fold_release(run.fold);
    free(run.fold);
    if (run.stacks)
        ana_stacks_destroy(run.stacks);
    free(run.keep);
    ana_tree_release(&run.flame);
    ana_tree_release(&run.flame_inv);
    ana_timeline_release(&run.tl);
    ana_vm_replay_release(&run.replay);
    ana_html_vm_release(&run.vm);
    ana_html_wpa_release(&run.wpa);
    ana_histogram_release(&run.hist);
    ana_reach_release(&run.reach);
    ana_model_destroy(run.model);
    return rc;
}
