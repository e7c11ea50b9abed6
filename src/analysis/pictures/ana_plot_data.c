/* SPDX-License-Identifier: MIT */
/* The plots' inputs from the analysis core: timeline rows (summed over
 * process images: heap, RSS, cumulative, committed and reserved) and the
 * model's peak; histogram bins per size class. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/ana_histogram.h"
#include "analysis/model/ana_model.h"
#include "analysis/model/ana_timeline.h"
#include "analysis/pictures/ana_plot_data.h"
#include "memscribe/event.h"

void ana_plot_series_release(struct ana_plot_series *s)
{
    free(s->ts);
    free(s->heap);
    free(s->cum);
    free(s->rss_ts);
    free(s->rss);
    free(s->vm_ts);
    free(s->committed);
    free(s->reserved);
    memset(s, 0, sizeof(*s));
}

bool ana_plot_timeline_address_space(struct ana_plot_timeline *p, const struct ana_plot_series *s)
{
    for (size_t i = 0; i < s->nr_vm; i++)
        if (s->committed[i] || s->reserved[i]) {
            p->vm_ts_ns = s->vm_ts;
            p->committed = s->committed;
            p->reserved = s->reserved;
            p->nr_vm = s->nr_vm;
            return true;
        }
    return false;
}

int ana_plot_timeline_from(struct ana_plot_timeline *p, struct ana_plot_series *s,
                           const struct ana_timeline *tl, const struct ana_scope *total,
                           uint64_t end_ns)
{
    /* Two points per time: the interval's maximum, then its end value. */
    size_t cap = 2 * tl->nr_rows + 1;
    /* Each image's bytes allocated so far: an image that has ended has no
     * rows, but what it allocated stays allocated (the tree's cumulative
     * total never falls). */
    uint64_t *cum_of, cum = 0;
    uint32_t nr_images = 0;

    for (size_t i = 0; i < tl->nr_rows; i++)
        nr_images = tl->rows[i].image + 1 > nr_images ? tl->rows[i].image + 1 : nr_images;
    cum_of = calloc(nr_images ? nr_images : 1, sizeof(*cum_of));
    if (!cum_of)
        return -ENOMEM;
    memset(s, 0, sizeof(*s));
    s->ts = malloc(cap * sizeof(*s->ts));
    s->heap = malloc(cap * sizeof(*s->heap));
    s->cum = malloc(cap * sizeof(*s->cum));
    s->rss_ts = malloc(cap * sizeof(*s->rss_ts));
    s->rss = malloc(cap * sizeof(*s->rss));
    s->vm_ts = malloc(cap * sizeof(*s->vm_ts));
    s->committed = malloc(cap * sizeof(*s->committed));
    s->reserved = malloc(cap * sizeof(*s->reserved));
    if (!s->ts || !s->heap || !s->cum || !s->rss_ts || !s->rss || !s->vm_ts || !s->committed ||
        !s->reserved) {
        ana_plot_series_release(s);
        free(cum_of);
        return -ENOMEM;
    }
    s->ts[0] = 0, s->heap[0] = 0, s->cum[0] = 0;
    s->n = 1;
    s->vm_ts[0] = 0, s->committed[0] = 0, s->reserved[0] = 0;
    s->nr_vm = 1;
    for (size_t i = 0; i < tl->nr_rows;) {
        uint64_t t = tl->rows[i].t_ns, heap = 0, max = 0, rss = 0, com = 0, res = 0;
        int has_rss = 0;

        /* Rows of one time are consecutive, one per image. */
        for (; i < tl->nr_rows && tl->rows[i].t_ns == t; i++) {
            const struct ana_timeline_row *row = &tl->rows[i];

            heap += row->heap;
            max += row->heap_max;
            cum += row->allocated_bytes - cum_of[row->image];
            cum_of[row->image] = row->allocated_bytes;
            rss += row->rss;
            has_rss |= row->has_rss;
            com += row->committed;
            res += row->reserved;
        }
        s->vm_ts[s->nr_vm] = t;
        s->committed[s->nr_vm] = com;
        s->reserved[s->nr_vm++] = res;
        uint64_t start = t > tl->interval_ns ? t - tl->interval_ns : 0;
        if (max > heap && start + 1 < t) {
            s->ts[s->n] = start + 1;
            s->heap[s->n] = max;
            s->cum[s->n] = s->cum[s->n - 1];
            s->n++;
        }
        s->ts[s->n] = t, s->heap[s->n] = heap, s->cum[s->n] = cum;
        s->n++;
        if (has_rss) {
            s->rss_ts[s->nr_rss] = t;
            s->rss[s->nr_rss++] = rss;
        }
    }
    free(cum_of);
    memset(p, 0, sizeof(*p));
    p->ts_ns = s->ts;
    p->heap = s->heap;
    p->cumulative = s->cum;
    p->nr_points = s->n;
    p->rss_ts_ns = s->rss_ts;
    p->rss = s->rss;
    p->nr_rss = s->nr_rss;
    p->end_ns = end_ns;
    p->peak_ns = total->peak_ns;
    p->peak_bytes = total->peak;
    return 0;
}

size_t ana_plot_buckets_from(struct ana_plot_bucket out[ANA_NR_SIZE_CLASSES],
                             const struct ana_histogram *h)
{
    size_t n = 0;

    for (unsigned cls = 0; cls < ANA_NR_SIZE_CLASSES; cls++) {
        struct ana_plot_bucket b = {0};

        for (uint32_t im = 0; im < h->nr_images; im++) {
            const struct ana_hist_bin *bins = ana_histogram_image(h, im);

            if (bins) {
                b.count += bins[cls].nr;
                b.bytes += bins[cls].bytes;
            }
        }
        if (!b.count)
            continue;
        ana_size_class_bounds(cls, &b.lo, &b.hi);
        out[n++] = b;
    }
    return n;
}

char *ana_plot_command_line(const struct fmt_trace_info *info, char *buf, size_t size)
{
    size_t o = 0;

    if (!size)
        return buf;
    for (uint32_t i = 0; info && info->command && i < info->command_len && o + 1 < size; i++) {
        char c = info->command[i];

        if (c == 0 && i + 1 == info->command_len)
            break;
        buf[o++] = c ? c : ' ';
    }
    buf[o] = 0;
    return buf;
}
