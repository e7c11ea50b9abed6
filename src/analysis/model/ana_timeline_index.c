/* SPDX-License-Identifier: MIT */
/* A timeline from the trace's chunk totals and summaries (format 1.10;
 * timeline --index, the live view's first chart): a row per process image
 * at the end of each chunk, read without decoding an event. Each row is
 * the state after the chunk's last event (events of the next chunk at the
 * same time come after it): heap and live blocks (the chunks' changes so
 * far), heap_max the highest inside the chunk (its totals' peak from the
 * heap at its start, or that heap), allocations so far, the latest RSS
 * sample. Mappings are not in the totals: the rows have no committed or
 * reserved memory. The sites' series are their stacks' live bytes at the
 * same ends, from the summaries' deltas. Bounded to N points, the rows are
 * at every k-th chunk's end and the last's: heap_max then is the highest
 * of the chunks since the row before. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/model/ana_index.h"
#include "analysis/model/ana_site_series.h"
#include "analysis/model/ana_timeline.h"
#include "util/util_array.h"

const char *ana_timeline_index_refusal(struct fmt_reader *r, const struct ana_filter *f)
{
    const char *no = ana_index_no_totals(r);

    if (no)
        return no;
    if (!ana_filter_is_empty(f))
        return "a selection (--pid, --exe, --thread) is not in the totals";
    return ana_index_refusal(r, NULL);
}

/* One image's state after the chunks so far; in_chunk: it had events
 * since its latest row, whose highest heap is heap_max. */
struct img {
    bool seen, ended, has_rss, in_chunk;
    uint32_t pid;
    uint64_t end_ns;
    int64_t heap, blocks, heap_max;
    uint64_t allocs, alloc_bytes, rss;
};

struct walk {
    struct img *im;
    uint32_t nr_im;
    /* the followed sites: their stacks sorted (with their place), their
     * live bytes so far */
    uint64_t *sorted; /* stack << 32 | place */
    int64_t *live;
    uint32_t n;
};

static int on_image(void *arg, const struct fmt_image_totals *t)
{
    struct walk *w = arg;
    struct img *s = t->image < w->nr_im ? &w->im[t->image] : NULL;

    if (!s)
        return -EPROTO;
    int64_t top = t->has_peak && t->peak > 0 ? s->heap + t->peak : s->heap;

    s->heap_max = s->in_chunk && s->heap_max > top ? s->heap_max : top;
    s->seen = s->in_chunk = true;
    s->pid = t->pid;
    s->heap += t->heap;
    s->blocks += t->blocks;
    s->allocs += t->allocs;
    s->alloc_bytes += t->alloc_bytes;
    if (t->has_rss) {
        s->has_rss = true;
        s->rss = t->rss_last;
    }
    if (t->ended) {
        s->ended = true;
        s->end_ns = t->end_ns;
    }
    return 0;
}

static void on_delta(void *arg, uint32_t stack, int64_t bytes, int64_t blocks)
{
    struct walk *w = arg;
    uint64_t key = (uint64_t)stack << 32;
    uint32_t lo = 0, hi = w->n;

    (void)blocks;
    while (lo < hi) { /* the first at or above stack's */
        uint32_t mid = (lo + hi) / 2;
        if (w->sorted[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < w->n && w->sorted[lo] >> 32 == stack; lo++)
        w->live[(uint32_t)w->sorted[lo]] += bytes;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* The rows of time t_ns: one per image seen and not ended before it. */
static int emit(struct ana_timeline *tl, struct walk *w, uint64_t t_ns)
{
    for (uint32_t i = 0; i < w->nr_im; i++) {
        struct img *s = &w->im[i];
        if (!s->seen || (s->ended && s->end_ns < t_ns))
            continue;
        if (tl->nr_rows >= ANA_TIMELINE_MAX_ROWS)
            return -EOVERFLOW;
        if (UTIL_ARRAY_RESERVE(tl->rows, tl->cap_rows, tl->nr_rows + 1, 256))
            return -ENOMEM;
        tl->rows[tl->nr_rows++] = (struct ana_timeline_row){
            .t_ns = t_ns,
            .image = i,
            .pid = s->pid,
            .heap = (uint64_t)s->heap,
            .heap_max = (uint64_t)(s->in_chunk ? s->heap_max : s->heap),
            .allocated_bytes = s->alloc_bytes,
            .nr_allocs = s->allocs,
            .live_blocks = (uint64_t)s->blocks,
            .rss = s->rss,
            .has_rss = s->has_rss,
        };
        s->in_chunk = false;
    }
    return 0;
}

static int series_row(struct ana_site_series *se, const struct walk *w, uint64_t t_ns)
{
    if (UTIL_ARRAY_RESERVE(se->t_ns, se->cap_times, se->nr_times + 1, 64))
        return -ENOMEM;
    uint64_t *b =
        realloc(se->bytes, (se->nr_times + 1) * (se->nr_sites ? se->nr_sites : 1) * sizeof(*b));
    if (!b)
        return -ENOMEM;
    se->bytes = b;
    se->t_ns[se->nr_times] = t_ns;
    for (uint32_t k = 0; k < se->nr_sites; k++)
        b[se->nr_times * se->nr_sites + k] = w->live[k] > 0 ? (uint64_t)w->live[k] : 0;
    se->nr_times++;
    return 0;
}

/* The rows' chunks: where the range asks (the chunks that hold it, from
 * the first that ends at or after from_ns to the first that ends at or
 * after to_ns, or the last), each chunk's end at least interval_ns after
 * the row before (the last's always), then every stride-th of those and
 * the last, the stride the smallest that makes at most max_points. Sets
 * row[k] for the chunks with a row; returns how many chunks to read (the
 * last with a row + 1; 0 with *first the number of chunks when the
 * range starts after the last) and the first with a row in *first. */
static uint32_t pick_chunks(struct fmt_reader *r, const struct ana_timeline_range *range,
                            uint64_t max_points, bool *row, uint32_t *first, uint32_t *stride)
{
    uint32_t nr_chunks = fmt_reader_nr_chunks(r), lo = 0, hi, nr = 0, kept = 0;
    uint64_t last_ns = 0;

    while (lo < nr_chunks && fmt_reader_chunk(r, lo)->last_ts_ns < range->from_ns)
        lo++;
    *first = lo;
    if (lo == nr_chunks) /* no chunk (or the range starts after the last) */
        return 0;
    for (hi = lo; hi + 1 < nr_chunks && fmt_reader_chunk(r, hi)->last_ts_ns < range->to_ns; hi++)
        ;
    for (uint32_t k = lo; k <= hi; k++) {
        uint64_t t = fmt_reader_chunk(r, k)->last_ts_ns;
        row[k] = !nr || k == hi || t - last_ns >= range->interval_ns;
        if (row[k]) {
            last_ns = t;
            nr++;
        }
    }
    /* then every stride-th row and the last: ceil(nr / stride) <= max_points */
    *stride = max_points && nr > max_points ? (uint32_t)((nr + max_points - 1) / max_points) : 1;
    for (uint32_t k = lo; k <= hi; k++)
        if (row[k])
            row[k] = ++kept % *stride == 0 || kept == nr;
    return hi + 1;
}

int ana_timeline_from_totals(struct ana_timeline *tl, struct fmt_reader *r,
                             const struct ana_timeline_range *range, const uint32_t *stacks,
                             uint32_t n, struct ana_site_series *se, uint64_t max_points)
{
    static const struct ana_timeline_range whole = {0, 0, UINT64_MAX};
    struct walk w = {.nr_im = fmt_reader_nr_images(r), .n = n};
    uint32_t nr_chunks = fmt_reader_nr_chunks(r), first = 0, end;
    bool *row = calloc((size_t)nr_chunks + 1, sizeof(*row));
    int rc = 0;

    if (!range)
        range = &whole;
    memset(tl, 0, sizeof(*tl));
    tl->index = true;
    tl->from_ns = range->from_ns;
    tl->to_ns = range->to_ns;
    if (se)
        memset(se, 0, sizeof(*se));
    w.im = calloc((size_t)w.nr_im + 1, sizeof(*w.im));
    w.sorted = calloc((size_t)n + 1, sizeof(*w.sorted));
    w.live = calloc((size_t)n + 1, sizeof(*w.live));
    if (se && n && !(se->stacks = malloc(n * sizeof(*se->stacks))))
        rc = -ENOMEM;
    if (!row || !w.im || !w.sorted || !w.live || rc) {
        rc = -ENOMEM;
        goto out;
    }
    end = pick_chunks(r, range, max_points, row, &first, &tl->chunk_stride);
    if (!end && nr_chunks) {
        rc = -ERANGE;
        goto out;
    }
    if (end && tl->to_ns != UINT64_MAX && tl->to_ns > fmt_reader_chunk(r, end - 1)->last_ts_ns)
        tl->to_ns = fmt_reader_chunk(r, end - 1)->last_ts_ns;
    for (uint32_t k = 0; k < n; k++) {
        w.sorted[k] = (uint64_t)stacks[k] << 32 | k;
        if (se)
            se->stacks[k] = stacks[k];
    }
    qsort(w.sorted, n, sizeof(*w.sorted), cmp_u64);
    if (se)
        se->nr_sites = n;
    /* Every chunk up to the last row's is read (the heap is their sum); a
     * range's first row's heap_max is its own chunk's highest. */
    for (uint32_t k = 0; k < end && !rc; k++) {
        uint64_t t_ns = fmt_reader_chunk(r, k)->last_ts_ns;
        if (k == first)
            for (uint32_t i = 0; i < w.nr_im; i++)
                w.im[i].in_chunk = false;
        rc = fmt_reader_chunk_totals(r, k, on_image, NULL, &w);
        if (!rc && se && n)
            rc = fmt_reader_chunk_delta(r, k, on_delta, &w);
        if (rc || !row[k])
            continue;
        rc = emit(tl, &w, t_ns);
        if (!rc && se)
            rc = series_row(se, &w, t_ns);
    }
    tl->nr_images = 0;
    for (uint32_t i = 0; i < w.nr_im; i++)
        tl->nr_images += w.im[i].seen;
out:
    if (rc) {
        ana_timeline_release(tl);
        if (se)
            ana_site_series_release(se);
    }
    free(row);
    free(w.im);
    free(w.sorted);
    free(w.live);
    return rc;
}
