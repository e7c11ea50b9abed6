/* SPDX-License-Identifier: MIT */
/* Holes, the largest gap, misaligned mappings and what occupies a range,
 * from one image's sorted pieces. */
#include "analysis/vm/ana_frag.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_map.h"

static void frag_space(const struct ana_vm_image *im, struct ana_frag_stats *s)
{
    s->is_32 = im->nr && im->max_addr <= ANA_FRAG_TOP_32;
    if (s->is_32) {
        s->space_lo = ANA_FRAG_LOW_32;
        s->space_hi = im->windows && im->max_addr <= ANA_FRAG_TOP_32_WINDOWS
                          ? ANA_FRAG_TOP_32_WINDOWS
                          : ANA_FRAG_TOP_32;
    } else if (im->nr) {
        s->space_lo = im->v[0].lo;
        s->space_hi = im->v[im->nr - 1].hi;
    }
}

int ana_frag_holes(const struct ana_vm_image *im, uint64_t min_size, ana_frag_hole_fn *fn,
                   void *arg)
{
    struct ana_frag_stats s = {0};
    uint64_t at;
    int rc;

    frag_space(im, &s);
    at = s.space_lo;
    for (uint32_t i = 0; i <= im->nr; i++) {
        uint64_t next = i < im->nr ? im->v[i].lo : s.space_hi;

        if (next > s.space_hi)
            next = s.space_hi;
        if (next > at && next - at >= min_size && (rc = fn(arg, at, next)))
            return rc;
        if (i < im->nr && im->v[i].hi > at)
            at = im->v[i].hi;
    }
    return 0;
}

static int count_hole(void *arg, uint64_t lo, uint64_t hi)
{
    struct ana_frag_stats *s = arg;

    s->nr_holes++;
    s->free += hi - lo;
    if (hi - lo > s->largest_hi - s->largest_lo)
        s->largest_lo = lo, s->largest_hi = hi;
    return 0;
}

/* Pieces that one call made and that are still side by side. */
static uint32_t frag_mapping_end(const struct ana_vm_image *im, uint32_t i)
{
    uint32_t j = i + 1;

    while (j < im->nr && im->v[j].lo == im->v[j - 1].hi && im->v[j].map_ns == im->v[i].map_ns &&
           im->v[j].map_lo == im->v[i].map_lo && im->v[j].map_stack == im->v[i].map_stack)
        j++;
    return j;
}

void ana_frag_stats(const struct ana_vm_image *im, struct ana_frag_stats *s)
{
    memset(s, 0, sizeof(*s));
    frag_space(im, s);
    for (uint32_t i = 0; i < im->nr; i = frag_mapping_end(im, i))
        s->nr_mappings++;
    s->mapped = im->mapped;
    s->collector = im->collector;
    ana_frag_holes(im, 1, count_hole, s);
}

static int by_stranded(const void *x, const void *y)
{
    const struct ana_frag_site *a = x, *b = y;

    if (a->stranded != b->stranded)
        return a->stranded < b->stranded ? 1 : -1;
    if (a->size != b->size)
        return a->size < b->size ? 1 : -1;
    return a->stack < b->stack ? -1 : a->stack > b->stack;
}

static int by_size(const void *x, const void *y)
{
    const struct ana_frag_site *a = x, *b = y;

    if (a->size != b->size)
        return a->size < b->size ? 1 : -1;
    return a->stack < b->stack ? -1 : a->stack > b->stack;
}

/* Collect map entries into a sorted array. */
static long frag_collect(struct ana_map *m, struct ana_frag_site **out,
                         int (*cmp)(const void *, const void *))
{
    struct ana_frag_site *v = malloc((m->nr + 1) * sizeof(*v));
    long n = 0;

    if (!v) {
        ana_map_release(m);
        return -ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (ana_map_slot_key(m, i))
            v[n++] = *(const struct ana_frag_site *)ana_map_slot_val(m, i);
    ana_map_release(m);
    qsort(v, (size_t)n, sizeof(*v), cmp);
    *out = v;
    return n;
}

long ana_frag_misaligned(const struct ana_vm_image *im, uint64_t gran, struct ana_frag_site **out)
{
    struct ana_map m;

    ana_map_init(&m, sizeof(struct ana_frag_site));
    for (uint32_t i = 0, j; i < im->nr; i = j) {
        uint64_t lo = im->v[i].lo, hi, below, above, prev_hi, next_lo;
        struct ana_frag_site *s;

        j = frag_mapping_end(im, i);
        hi = im->v[j - 1].hi;
        if (im->v[i].collector || (lo % gran == 0 && (hi - lo) % gran == 0))
            continue;
        /* Free bytes between the mapping and the granule boundaries
         * around it: too small for an aligned mapping of gran. */
        prev_hi = i ? im->v[i - 1].hi : lo;
        next_lo = j < im->nr ? im->v[j].lo : hi;
        below = lo - (lo / gran * gran);
        below = lo - prev_hi < below ? lo - prev_hi : below;
        above = (hi + gran - 1) / gran * gran - hi;
        above = next_lo - hi < above ? next_lo - hi : above;
        if (!(s = ana_map_put(&m, (uint64_t)im->v[i].map_stack + 1, NULL))) {
            ana_map_release(&m);
            return -ENOMEM;
        }
        s->stack = im->v[i].map_stack;
        s->origin = im->v[i].origin;
        s->count++;
        s->size += hi - lo;
        s->stranded += below + above;
    }
    return frag_collect(&m, out, by_stranded);
}

long ana_frag_occupants(const struct ana_vm_image *im, uint64_t lo, uint64_t hi,
                        struct ana_frag_site **out)
{
    struct ana_map m;

    ana_map_init(&m, sizeof(struct ana_frag_site));
    for (uint32_t i = 0; i < im->nr; i++) {
        const struct ana_vm_piece *p = &im->v[i];
        uint64_t a = p->lo > lo ? p->lo : lo, b = p->hi < hi ? p->hi : hi;
        struct ana_frag_site *s;

        if (a >= b)
            continue;
        /* Key 1 + stack; memscribe's own mappings get a key of their own. */
        if (!(s = ana_map_put(&m, p->collector ? UINT64_MAX : (uint64_t)p->map_stack + 1, NULL))) {
            ana_map_release(&m);
            return -ENOMEM;
        }
        s->stack = p->map_stack;
        s->origin = p->origin;
        s->collector = p->collector;
        s->count++;
        s->size += b - a;
    }
    return frag_collect(&m, out, by_size);
}
