/* SPDX-License-Identifier: MIT */
/* The HTML report's commit lifetimes: cells per commit stack, fed by the
 * page's address-space replay (see ana_html_vm.h). */
#include "analysis/html/ana_html_vm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/vm/ana_vm_replay.h"
#include "analysis/vm/ana_vm_window.h"
#include "util/util_array.h"

int ana_html_vm_init(struct ana_html_vm *v, struct fmt_reader *r, const struct ana_filter *filter,
                     uint64_t bucket_ns, uint64_t end_ns)
{
    memset(v, 0, sizeof(*v));
    v->r = r;
    v->filter = filter;
    v->origins = ANA_VM_WINDOW_ORIGINS;
    ana_map_init(&v->index, sizeof(uint32_t));
    return ana_html_wpa_init(&v->cells, bucket_ns, end_ns);
}

/* The index of the key of (image, stack), made on first use. */
static int key_of(struct ana_html_vm *v, uint32_t image, uint32_t stack, uint32_t *out)
{
    int created;
    uint32_t *k = ana_map_put(&v->index, ((uint64_t)image << 32 | stack) + 1, &created);

    if (!k)
        return -ENOMEM;
    if (created) {
        /* Three arrays of one capacity: each grows from a copy of it. */
        uint32_t c1 = v->cap_keys, c2 = v->cap_keys, c3 = v->cap_keys;

        if (UTIL_ARRAY_RESERVE(v->image, c1, (size_t)v->nr_keys + 1, 64) ||
            UTIL_ARRAY_RESERVE(v->stack, c2, (size_t)v->nr_keys + 1, 64) ||
            UTIL_ARRAY_RESERVE(v->bytes, c3, (size_t)v->nr_keys + 1, 64))
            return -ENOMEM;
        v->cap_keys = c1;
        v->image[v->nr_keys] = image;
        v->stack[v->nr_keys] = stack;
        v->bytes[v->nr_keys] = 0;
        *k = v->nr_keys++;
    }
    *out = *k;
    return 0;
}

/* A lifetime ended (or is open at the end): counted as vmem counts it. */
static int on_lifetime(void *arg, const struct ana_vm_lifetime *l)
{
    struct ana_html_vm *v = arg;
    const struct fmt_image_info *ii = fmt_reader_image(v->r, l->image);
    uint32_t k;
    int rc;

    if (!(v->origins & (1u << l->origin)) ||
        !ana_filter_image(v->filter, l->image, ii ? ii->pid : 0))
        return 0;
    if ((rc = key_of(v, l->image, l->commit_stack, &k)))
        return rc;
    v->bytes[k] += l->hi - l->lo;
    return ana_html_wpa_add(&v->cells, k, l->commit_ns, l->decommit_ns, l->open, 1, l->hi - l->lo);
}

void ana_html_vm_subscribe(struct ana_html_vm *v, struct ana_vm_replay *p)
{
    static const struct ana_vm_replay_ops ops = {.lifetime = on_lifetime};

    ana_vm_replay_init(p, &ops, v);
}

struct ranked {
    uint64_t bytes;
    uint32_t k;
};

static int by_bytes(const void *x, const void *y)
{
    const struct ranked *a = x, *b = y;

    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? 1 : -1;
    return a->k < b->k ? -1 : a->k > b->k;
}

/* Past ANA_HTML_MAX_SITES keys, the largest by bytes committed are listed
 * and the others lumped into one, so that the page stays bounded. */
static int pick_keys(struct ana_html_vm *v)
{
    struct ranked *r;
    int rc;

    if (v->nr_keys <= ANA_HTML_MAX_SITES)
        return 0;
    if (!(r = malloc(v->nr_keys * sizeof(*r))) || !(v->keep = calloc(v->nr_keys, 1))) {
        free(r);
        return -ENOMEM;
    }
    for (uint32_t k = 0; k < v->nr_keys; k++)
        r[k] = (struct ranked){v->bytes[k], k};
    qsort(r, v->nr_keys, sizeof(*r), by_bytes);
    for (uint32_t i = 0; i < ANA_HTML_MAX_SITES; i++)
        v->keep[r[i].k] = 1;
    v->nr_other = v->nr_keys - ANA_HTML_MAX_SITES;
    free(r);
    if ((rc = ana_html_wpa_lump(&v->cells, v->keep, v->nr_keys)))
        return rc;
    return 0;
}

int ana_html_vm_finish(struct ana_html_vm *v, struct ana_vm_replay *p, struct ana_html_wpa *heap)
{
    int rc;

    if ((rc = ana_vm_replay_finish(p)) || (rc = ana_html_wpa_align(heap, &v->cells)))
        return rc;
    return pick_keys(v);
}

/* One column of the cells. */
static void write_cells(struct ana_json *j, const struct ana_html_vm *v, const char *key,
                        unsigned col)
{
    const struct ana_map *cells = &v->cells.cells;

    ana_json_key(j, key);
    ana_json_begin_array(j);
    for (size_t i = 0; i < cells->cap; i++) {
        const struct ana_html_cell *c = ana_map_slot_val(cells, i);
        uint32_t k, a, f;

        if (!ana_map_slot_key(cells, i) || !c->nr)
            continue;
        ana_html_wpa_key(ana_map_slot_key(cells, i), &k, &a, &f);
        if (col == 0) /* the lumped keys are the one after the others */
            ana_json_u64(j, k == ANA_HTML_OTHER_STACK ? v->nr_keys : k);
        else if (col == 1)
            ana_json_u64(j, a);
        else if (col == 2)
            ana_json_i64(j, f == ANA_HTML_NEVER ? -1 : (int64_t)f);
        else
            ana_json_u64(j, col == 3 ? c->nr : c->bytes);
    }
    ana_json_end_array(j);
}

void ana_html_vm_write(struct ana_json *j, const struct ana_html_vm *v, const uint32_t *node)
{
    static const char *const cols[5] = {"k", "a", "f", "n", "b"};
    uint32_t nr = v->nr_keys + (v->nr_other ? 1 : 0);

    ana_json_key(j, "vm");
    ana_json_begin_object(j);
    ana_json_kv_u64(j, "bucketNs", v->cells.bucket_ns);
    ana_json_kv_u64(j, "nrBuckets", v->cells.nr_buckets);
    /* A Windows program's: VirtualAlloc's commits (docs/windows.md). */
    ana_json_kv_bool(j, "windows", fmt_reader_pe(v->r));
    ana_json_key(j, "stack");
    ana_json_begin_array(j);
    for (uint32_t k = 0; k < nr; k++)
        ana_json_u64(j, k < v->nr_keys ? v->stack[k] : 0);
    ana_json_end_array(j);
    ana_json_key(j, "node");
    ana_json_begin_array(j);
    for (uint32_t k = 0; k < nr; k++)
        ana_json_u64(j, node[k]);
    ana_json_end_array(j);
    ana_json_key(j, "pid");
    ana_json_begin_array(j);
    for (uint32_t k = 0; k < nr; k++) {
        const struct fmt_image_info *ii =
            k < v->nr_keys ? fmt_reader_image(v->r, v->image[k]) : NULL;

        ana_json_u64(j, ii ? ii->pid : 0);
    }
    ana_json_end_array(j);
    for (unsigned c = 0; c < 5; c++)
        write_cells(j, v, cols[c], c);
    ana_json_end_object(j);
}

void ana_html_vm_release(struct ana_html_vm *v)
{
    ana_html_wpa_release(&v->cells);
    ana_map_release(&v->index);
    free(v->image);
    free(v->stack);
    free(v->bytes);
    free(v->keep);
    memset(v, 0, sizeof(*v));
}
