/* SPDX-License-Identifier: MIT */
/* Valgrind massif's output format (read by ms_print and
 * massif-visualizer): evenly spaced snapshots of heap in use, every Nth of
 * them detailed as valgrind's --detailed-freq makes them (default 10:
 * snapshots 9, 19, ...; each stack's bytes of the running processes then),
 * a detailed snapshot at memscribe's peak (heap_tree=peak, each stack's
 * live bytes at that instant) and a detailed last snapshot (what is live
 * at the end). massif-visualizer draws a band per call site through the
 * detailed snapshots alone, a straight line between two: with the peak
 * and the end only, a site's band stood far above the total in between
 * (docs/export.md, "massif"). So the regular snapshots just before and after the peak
 * are detailed too: the bands rise to the peak and fall from it as the
 * total does. A detailed snapshot's sites add up to its heap. An
 * aggregated trace's regular snapshots are at its cuts, where its heap is
 * exact; its peak's is where the model's is (a transient group's).
 * Heap trees follow massif's rules: one space of indent per depth,
 * children by decreasing bytes, children below the threshold folded into
 * one "in K places" node. ms_print reads '#' as a comment, so a '#' in a
 * name becomes '_'.
 *
 * On a process tree (ana_export_options.image_done) memory follows the
 * processes running: pass 0 keeps no model (ana_xmodel_subscribe_times:
 * the peak's step, the times, the heap at the end), the peak's snapshot is
 * made of the running processes' stacks as the regular ones are, and a
 * second after a process's exit what it left goes to a scratch file,
 * from which the last snapshot's tree is made only as deep as it is shown
 * (ana_xtree_later). Siblings of equal bytes come in the order of their
 * lowest stack (ana_xtree_order), so a tree prints the same whatever the
 * order its stacks were added in. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_aggregate.h"
#include "analysis/core/ana_text.h"
#include "analysis/export/ana_export_internal.h"
#include "analysis/export/ana_export_tree.h"
#include "util/util_array.h"

#define MASSIF_DEFAULT_SNAPSHOTS 50
#define MASSIF_DEFAULT_THRESHOLD 1.0
#define MASSIF_DEFAULT_DETAILED_FREQ 10

/* An image's state in pass 1 (massif.ended). */
enum {
    IMAGE_RUNNING,
    IMAGE_ENDED,  /* exited: its blocks left heap in use */
    IMAGE_FOLDED, /* on a tree, what it left added to the end's tree, its stacks let go */
};

struct massif {
    struct fmt_reader *r;
    struct ana_xout *out;
    struct ana_xsym *sym;
    const struct ana_xmodel *m; /* pass 0's: the peak's step, the times */
    const struct ana_heap_replay *pass;
    struct ana_strtab labels;
    double threshold;
    const struct ana_export_options *o;
    uint32_t nr_stacks;
    uint32_t nr_snapshots; /* written so far */
    char *indent;          /* spaces, as deep as the deepest tree */
    uint32_t indent_len;
    /* Pass 1: the regular snapshots, nr_regular of them, the next one to
     * write, and heap in use after the latest heap event. */
    uint32_t nr_regular, next;
    uint64_t live;
    /* Pass 1: every detailed_freq-th regular snapshot is detailed, from
     * each stack's bytes in running processes: sites maps (image, stack)
     * to its live bytes, ended[image] is set at the image's exit (its
     * blocks leave heap in use, as ana_step.h says). */
    uint32_t detailed_freq;
    struct ana_map sites;
    uint8_t *ended;
    uint32_t cap_ended;
    bool after_peak; /* the next regular snapshot is detailed too */
    /* A process tree (ana_export_options.image_done): pass 0 keeps no
     * model (times); the peak's tree is made of the sites as the regular
     * ones are; a second after an image's exit (an event of it may come
     * that late) what it left goes from sites into the end's tree, and
     * its stacks are let go. due: the images ended, not yet folded. */
    bool fold;
    struct ana_xmodel times;
    struct ana_xtree_later end;
    struct ana_ended due;
    uint64_t *keys; /* scratch: an image's keys in sites */
    size_t cap_keys;
};

static void clean(char *s)
{
    for (; *s; s++)
        if (*s == '#' || *s == '\n' || *s == '\r')
            *s = '_';
}

/* "0xADDR: function (file:line)" or "0xADDR: function (in module)", as
 * massif writes them, escaped (valid UTF-8, no control characters). */
static const char *massif_label(const struct ana_sym_frame *f, char *buf, size_t size)
{
    char name[64], raw[8192];
    const char *fn = ana_xsym_name(f, name, sizeof(name));
    int n;

    if (f->file && f->line)
        n = snprintf(raw, sizeof(raw), "0x%" PRIX64 ": %s (%s:%u)", f->addr, fn, f->file, f->line);
    else if (f->module)
        n = snprintf(raw, sizeof(raw), "0x%" PRIX64 ": %s (in %s)", f->addr, fn, f->module);
    else
        n = snprintf(raw, sizeof(raw), "0x%" PRIX64 ": %s", f->addr, fn);
    ana_text_escape(buf, size, raw,
                    n < 0                     ? 0
                    : (size_t)n < sizeof(raw) ? (size_t)n
                                              : sizeof(raw) - 1);
    clean(buf);
    return buf;
}

static double ms_of(uint64_t ns)
{
    return (double)ns / 1e6;
}

static void header(struct massif *x, uint64_t ts_ns, uint64_t heap, const char *tree)
{
    ana_xout_printf(x->out,
                    "#-----------\nsnapshot=%u\n#-----------\ntime=%.3f\nmem_heap_B=%" PRIu64
                    "\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=%s\n",
                    x->nr_snapshots++, ms_of(ts_ns), heap, tree);
}

/* Whether a node of bytes bytes of a snapshot of total bytes is shown:
 * at least the threshold, else one of the "places below massif's
 * threshold". */
static bool shown(const struct massif *x, uint64_t bytes, uint64_t total)
{
    return total && (double)bytes * 100.0 / (double)total >= x->threshold;
}

static int print_node(struct massif *x, const struct ana_xtree *t, uint32_t id, uint32_t depth,
                      uint64_t total)
{
    const struct ana_xtree_node *n = &t->nodes[id];
    uint32_t *kids = NULL, nr_sig = 0, nr_insig = 0;
    uint64_t insig_bytes = 0;
    int rc = 0;

    if (n->first_child) {
        uint32_t k = 0;

        for (uint32_t c = n->first_child; c; c = t->nodes[c].next_sibling)
            k++;
        if (!(kids = malloc(k * sizeof(*kids))))
            return -ENOMEM;
        k = 0;
        for (uint32_t c = n->first_child; c; c = t->nodes[c].next_sibling)
            kids[k++] = c;
        qsort_r(kids, k, sizeof(*kids), ana_xtree_order, t->nodes);
        for (uint32_t i = 0; i < k; i++) {
            if (shown(x, t->nodes[kids[i]].bytes, total))
                nr_sig++;
            else
                nr_insig++, insig_bytes += t->nodes[kids[i]].bytes;
        }
    }
    if (depth >= x->indent_len) {
        char *p = realloc(x->indent, depth * 2 + 2);
        if (!p) {
            free(kids);
            return -ENOMEM;
        }
        memset(p, ' ', depth * 2 + 1);
        p[depth * 2 + 1] = 0;
        x->indent = p;
        x->indent_len = depth * 2 + 1;
    }
    ana_xout_printf(x->out, "%.*sn%u: %" PRIu64 " %s\n", (int)depth, x->indent,
                    nr_sig + (nr_insig ? 1 : 0), n->bytes,
                    id ? t->labels->strs[n->label]
                       : "(heap allocation functions) malloc/new/new[], --alloc-fns, etc.");
    for (uint32_t i = 0; i < nr_sig && !rc; i++)
        rc = print_node(x, t, kids[i], depth + 1, total);
    if (!rc && nr_insig)
        ana_xout_printf(x->out,
                        "%.*sn0: %" PRIu64 " in %u place%s, %sbelow massif's threshold (%.2f%%)\n",
                        (int)depth + 1, x->indent, insig_bytes, nr_insig, nr_insig > 1 ? "s" : "",
                        nr_insig > 1 ? "all " : "", x->threshold);
    free(kids);
    return rc;
}

/* Stack's bytes into t, or (NULL) on a tree into the end's (none:
 * nothing). */
static int tree_add(struct massif *x, struct ana_xtree *t, uint32_t stack, uint64_t bytes)
{
    const struct ana_sym_stack *st;
    int rc;

    if (!bytes)
        return 0;
    if ((rc = ana_xsym_stack(x->sym, stack, &st, NULL)))
        return rc;
    return t ? ana_xtree_add(t, st, stack, bytes, massif_label)
             : ana_xtree_later_add(&x->end, st, stack, bytes, massif_label);
}

/* A detailed snapshot: tree t. */
static int detailed(struct massif *x, const struct ana_xtree *t, uint64_t ts_ns, uint64_t heap,
                    const char *kind)
{
    header(x, ts_ns, heap, kind);
    return print_node(x, t, 0, 0, heap);
}

/* The model's per-stack bytes: at the peak, or live at the end. */
static int detailed_model(struct massif *x, uint64_t ts_ns, uint64_t heap, bool peak)
{
    struct ana_xtree t;
    int rc = ana_xtree_init(&t, &x->labels);

    for (uint32_t id = 0; id <= x->m->nr_stacks && !rc; id++)
        rc = tree_add(x, &t, id, peak ? x->m->stacks[id].peak_bytes : x->m->stacks[id].live_bytes);
    if (!rc)
        rc = detailed(x, &t, ts_ns, heap, peak ? "peak" : "detailed");
    ana_xtree_release(&t);
    return rc;
}

static uint64_t site_key(uint32_t image, uint32_t stack)
{
    return ((uint64_t)image << 32 | stack) + 1;
}

static uint32_t site_image(uint64_t key)
{
    return (uint32_t)((key - 1) >> 32);
}

/* A site's stack: one beyond the trace's table counts as no stack. */
static uint32_t site_stack(const struct massif *x, uint64_t key)
{
    uint32_t stack = (uint32_t)(key - 1);

    return stack <= x->nr_stacks ? stack : 0;
}

static unsigned image_state(const struct massif *x, uint32_t image)
{
    return image < x->cap_ended ? x->ended[image] : IMAGE_RUNNING;
}

/* Pass 1's per-stack bytes of the running processes, as ana_step.h counts
 * heap in use: a block's bytes in the image of the event that starts or
 * ends it (saturating, as the stepper does). */
static int site_step(struct massif *x, const struct fmt_event *ev, const struct ana_step *st)
{
    uint64_t *v;

    if (st->ends && (v = ana_map_get(&x->sites, site_key(ev->image, ev->ref_stack))))
        *v = *v >= ev->ref_size ? *v - ev->ref_size : 0;
    if (st->transient < 0 && (v = ana_map_get(&x->sites, site_key(ev->image, ev->stack))))
        *v = *v >= ev->size ? *v - ev->size : 0;
    if (st->starts || st->transient > 0) {
        if (!(v = ana_map_put(&x->sites, site_key(ev->image, ev->stack), NULL)))
            return -ENOMEM;
        *v += ev->size;
    }
    return 0;
}

/* A detailed snapshot of each stack's bytes in running processes: a
 * regular one, or on a tree the peak's. */
static int detailed_now(struct massif *x, uint64_t ts_ns, const char *kind)
{
    struct ana_xtree t;
    int rc = ana_xtree_init(&t, &x->labels);

    for (size_t i = 0; i < x->sites.cap && !rc; i++) {
        uint64_t key = ana_map_slot_key(&x->sites, i);

        if (key && image_state(x, site_image(key)) == IMAGE_RUNNING)
            rc = tree_add(x, &t, site_stack(x, key), *(uint64_t *)ana_map_slot_val(&x->sites, i));
    }
    if (!rc)
        rc = detailed(x, &t, ts_ns, x->live, kind);
    ana_xtree_release(&t);
    return rc;
}

/* ---- A process tree: what ended processes left, in the end's tree. */

/* Image's sites (UINT32_MAX: every image's) into the end's tree; an
 * image's then leave sites. */
static int fold_sites(struct massif *x, uint32_t image)
{
    size_t n = 0;
    int rc = 0;

    for (size_t i = 0; i < x->sites.cap && !rc; i++) {
        uint64_t key = ana_map_slot_key(&x->sites, i);

        if (!key || (image != UINT32_MAX && site_image(key) != image))
            continue;
        rc = tree_add(x, NULL, site_stack(x, key), *(uint64_t *)ana_map_slot_val(&x->sites, i));
        if (!rc && image != UINT32_MAX && UTIL_ARRAY_RESERVE(x->keys, x->cap_keys, n + 1, 256))
            rc = -ENOMEM;
        if (!rc && image != UINT32_MAX)
            x->keys[n++] = key;
    }
    for (size_t i = 0; i < n; i++)
        ana_map_del(&x->sites, x->keys[i]);
    return rc;
}

/* The images that ended over a second before now_ns (UINT64_MAX: every
 * image that ended): what they left into the end's tree, their stacks let
 * go. */
static int fold_due(struct massif *x, uint64_t now_ns)
{
    uint32_t image;
    uint64_t end_ns;
    int rc = 0;

    while (!rc && ana_ended_due(&x->due, now_ns, &image, &end_ns)) {
        x->ended[image] = IMAGE_FOLDED;
        if (!(rc = fold_sites(x, image)))
            rc = x->o->image_done(x->o->image_arg, image, end_ns);
    }
    return rc;
}

/* shown for the end's snapshot. */
static bool shown_at_end(void *arg, uint64_t bytes)
{
    const struct massif *x = arg;

    return shown(x, bytes, x->m->live_bytes);
}

/* The last snapshot on a tree: what every process left, the end's tree
 * made as deep as it is shown. */
static int detailed_end(struct massif *x)
{
    struct ana_xtree t;
    int rc;

    if ((rc = fold_due(x, UINT64_MAX)) || (rc = fold_sites(x, UINT32_MAX)))
        return rc;
    if (!(rc = ana_xtree_later_make(&x->end, &t, shown_at_end, x)))
        rc = detailed(x, &t, x->m->end_ts_ns, x->m->live_bytes, "detailed");
    ana_xtree_release(&t);
    return rc;
}

/* Image exited at end_ns: its blocks left heap in use; on a tree, what it
 * left is folded a second later. */
static int image_ends(struct massif *x, uint32_t image, uint64_t end_ns)
{
    if (UTIL_ARRAY_RESERVE_ZERO(x->ended, x->cap_ended, (size_t)image + 1, 16))
        return -ENOMEM;
    if (x->ended[image] != IMAGE_RUNNING)
        return 0;
    x->ended[image] = IMAGE_ENDED;
    if (!x->fold)
        return 0;
    return ana_ended_push(&x->due, image, end_ns);
}

/* The time of regular snapshot k, evenly over the selected events; in
 * an aggregated trace the cut at or before it, where the heap is known
 * (docs/aggregate.md). */
static uint64_t regular_at(const struct massif *x, uint32_t k)
{
    uint64_t first = x->m->first_ts_ns, span = x->m->end_ts_ns - first;
    uint64_t t = first + (x->nr_regular > 1 ? span * k / (x->nr_regular - 1) : 0);

    return ana_aggregate_cut(fmt_reader_info(x->r), x->m->end_ts_ns, t, false);
}

/* Pass 1: regular snapshots show the heap just before the first event
 * after their time; the peak's detailed one comes at its heap event. */
/* Regular snapshot x->next, detailed if its number says so, or if it is
 * the last one before the peak's or the first after it. */
static int regular(struct massif *x)
{
    uint64_t ts_ns = regular_at(x, x->next++), peak_ns = x->m->peak_ts_ns;
    bool before_peak = x->m->peak_step && ts_ns < peak_ns &&
                       (x->next == x->nr_regular || regular_at(x, x->next) >= peak_ns);

    if (x->next % x->detailed_freq == 0 || x->after_peak || before_peak) {
        x->after_peak = false;
        return detailed_now(x, ts_ns, "detailed");
    }
    header(x, ts_ns, x->live, "empty");
    return 0;
}

static int on_step(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    struct massif *x = arg;
    int rc;

    if (x->fold && (rc = fold_due(x, ev->ts_ns)))
        return rc;
    while (x->next < x->nr_regular && ev->ts_ns > regular_at(x, x->next))
        if ((rc = regular(x)))
            return rc;
    if (ev->kind == FMT_EV_PROCESS_EXIT && st->selected &&
        (rc = image_ends(x, ev->image, ev->ts_ns)))
        return rc;
    if (!st->ends && !st->starts && !st->transient)
        return 0;
    if (image_state(x, ev->image) == IMAGE_FOLDED)
        return -ESTALE; /* what its process left is written: too late */
    if ((rc = site_step(x, ev, st)))
        return rc;
    x->live = st->heap; /* of running processes: an exited one's blocks left it */
    if (x->pass->nr_steps != x->m->peak_step)
        return 0;
    x->after_peak = true;
    return x->fold ? detailed_now(x, ev->ts_ns, "peak")
                   : detailed_model(x, ev->ts_ns, x->live, true);
}

/* After pass 1: the snapshots at or after the last event; the final one
 * is detailed: what every process left (its tree is the leaks). */
static int write_massif(struct ana_export_job *job)
{
    struct massif *x = job->state;
    int rc;

    while (x->next + 1 < x->nr_regular)
        if ((rc = regular(x)))
            return rc;
    if (!x->fold)
        return detailed_model(x, x->m->end_ts_ns, x->m->live_bytes, false);
    return detailed_end(x);
}

/* After pass 0: the header, before pass 1's snapshots. */
static int begin(struct ana_export_job *job)
{
    struct massif *x = job->state;
    const struct fmt_trace_info *info = fmt_reader_info(x->r);
    char label[ANA_SAMPLE_LABEL_SIZE];
    int rc = 0;

    if (!(x->sym = ana_xjob_sym(job, &rc)))
        return rc;
    /* desc: ms_print shows it; a sampled trace's says its figures are
     * estimates. cmd: the recorded command line, words separated by
     * spaces, escaped (valid UTF-8, no control characters: ms_print
     * prints it as is). */
    char agg[ANA_AGGREGATE_NOTE_SIZE];
    ana_sample_label(label, sizeof(label), fmt_reader_sample_bytes(x->r));
    ana_aggregate_label(agg, sizeof(agg), info);
    ana_xout_printf(x->out, "desc: memscribe export --to massif%s%s%s%s\ncmd: ", *label ? "; " : "",
                    label, *agg ? "; " : "", agg);
    if (info->command && info->command_len) {
        char *cmd = ana_xtext(info->command, info->command_len, true);

        if (!cmd)
            return -ENOMEM;
        clean(cmd);
        ana_xout_write(x->out, cmd, strlen(cmd));
        free(cmd);
    } else {
        ana_xout_printf(x->out, "(unknown)");
    }
    return ana_xout_printf(x->out, "\ntime_unit: ms\n");
}

static void release_massif(struct ana_export_job *job)
{
    struct massif *x = job->state;

    free(x->indent);
    free(x->ended);
    ana_ended_release(&x->due);
    free(x->keys);
    ana_xtree_later_release(&x->end);
    ana_map_release(&x->sites);
    ana_strtab_release(&x->labels);
}

bool ana_export_massif_streams(const struct fmt_reader *r)
{
    /* One process: nothing to let go. Aggregated: its rows of a process
     * can come after its end (ana_plan_fold_trace). */
    return fmt_reader_nr_images(r) > 1 && !fmt_reader_info(r)->aggregate_ns;
}

int ana_export_massif(struct ana_export_job *job)
{
    static const struct ana_heap_replay_ops ops = {.step = on_step};
    const struct ana_export_options *o = job->o;
    static const struct ana_xjob_hooks hooks = {
        .model_ready = begin, .write = write_massif, .release = release_massif};
    struct massif *x = ana_xjob_state(job, sizeof(*x), &hooks);
    struct fmt_trace_counts c;
    int rc;

    if (!x)
        return -ENOMEM;
    *x = (struct massif){.r = job->r, .out = job->out, .o = o, .pass = job->pass[1]};
    x->threshold = o->massif_threshold >= 0 ? o->massif_threshold : MASSIF_DEFAULT_THRESHOLD;
    x->nr_regular = o->massif_snapshots ? o->massif_snapshots : MASSIF_DEFAULT_SNAPSHOTS;
    x->detailed_freq =
        o->massif_detailed_freq ? o->massif_detailed_freq : MASSIF_DEFAULT_DETAILED_FREQ;
    fmt_reader_counts(job->r, &c);
    x->nr_stacks = c.nr_stacks;
    ana_map_init(&x->sites, sizeof(uint64_t));
    /* image_done is set when the output streams (ana_export_streams). */
    if ((x->fold = o->image_done && ana_export_massif_streams(job->r))) {
        x->m = &x->times;
        if ((rc = ana_xtree_later_open(&x->end, &x->labels)) ||
            (rc = ana_xmodel_subscribe_times(&x->times, job->pass[0])))
            return rc;
    } else if (!(x->m = ana_xjob_model(job))) {
        return -ENOMEM;
    }
    return ana_xjob_subscribe(job, 1, &ops, x);
}
