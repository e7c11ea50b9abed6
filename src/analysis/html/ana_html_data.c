/* SPDX-License-Identifier: MIT */
/* The report's data: one JSON object the page's script reads (the schema
 * is described at the top of html/report.js). Arrays are columnar, so a
 * trace with many stacks and buckets stays compact and fast to parse. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_aggregate.h"
#include "analysis/core/ana_json.h"
#include "analysis/core/ana_sample.h"
#include "analysis/core/ana_segment.h"
#include "analysis/html/ana_html_base.h"
#include "analysis/html/ana_html_internal.h"
#include "analysis/model/ana_exact.h"
#include "analysis/model/ana_scope_json.h"
#include "analysis/model/ana_site_se.h"
#include "analysis/pictures/ana_flame.h"
#include "util/util_array.h"

#define NO_SITE UINT32_MAX
#define OTHER_SITE (UINT32_MAX - 1) /* lumped into "(N other call sites)" */

enum site_col {
    COL_ALLOCS,
    COL_BYTES,
    COL_LEAKED,
    COL_LEAKED_BLOCKS,
    COL_PEAK,
    COL_TEMP,
    COL_TEMP_BYTES,
    NR_COLS
};

/* A site the page lists: the lowest stack id of its stacks (shown), one
 * whose frames it draws, its image (its pid and program) and its numbers,
 * its stacks' added up. */
struct page_site {
    uint32_t stack, frames, image;
    int64_t v[NR_COLS];
    struct ana_site sum; /* its stacks' counters added up: the standard errors' variances */
};

struct data_run {
    struct ana_html_run *run;
    struct ana_json j;
    /* ana_stacks string id + 1 -> index in the page's string table. */
    struct ana_map str_index;
    uint32_t nr_strings;
    uint32_t *str_order; /* page index -> ana_stacks string id */
    uint32_t cap_order;
    /* Window cells' key (a stack id, or a folded row's id: run->keep)
     * -> site index in the page (NO_SITE: not listed, OTHER_SITE: in the
     * one site after the listed ones). */
    uint32_t *site_of;
    struct page_site *sites; /* nr_sites, then the lumped ones' */
    uint32_t nr_sites;
    uint32_t nr_other;                  /* stacks lumped together */
    uint64_t other_allocs, other_bytes; /* their allocations, bytes allocated */
    uint32_t *prog_pos;                 /* program -> its index in "programs" */
    uint32_t *vm_node; /* the commit lifetimes' keys' leaves in frames (ana_html_vm.h) */
    int rc;
};

/* The page's index of a stack's site. */
static uint32_t site_index(const struct data_run *d, uint32_t stack)
{
    return d->site_of[stack] == OTHER_SITE ? d->nr_sites : d->site_of[stack];
}

/* The page index of a string, added on first use. */
static uint32_t str_ref(struct data_run *d, uint32_t id)
{
    int created;
    uint32_t *v = ana_map_put(&d->str_index, (uint64_t)id + 1, &created);

    if (!v) {
        d->rc = -ENOMEM;
        return 0;
    }
    if (created) {
        if (UTIL_ARRAY_RESERVE(d->str_order, d->cap_order, (size_t)d->nr_strings + 1, 1024)) {
            d->rc = -ENOMEM;
            return 0;
        }
        d->str_order[d->nr_strings] = id;
        *v = d->nr_strings++;
    }
    return *v;
}

uint64_t ana_html_stacks_used(const struct ana_model *m)
{
    uint64_t nr_used = 0;

    for (uint32_t id = 0; id < ana_model_nr_sites(m); id++) {
        const struct ana_site *s = ana_model_site(m, id);
        nr_used += s && (s->nr_allocs || s->live_blocks);
    }
    return nr_used;
}

void ana_html_write_summary(struct ana_json *j, const struct ana_model *m,
                            const struct fmt_trace_counts *c, uint64_t sample_bytes,
                            uint64_t nr_stacks_used)
{
    const struct ana_scope *t = ana_model_total(m);

    ana_json_key(j, "summary");
    ana_json_begin_object(j);
    ana_scope_write_json(j, t, sample_bytes);
    ana_json_kv_u64(j, "freed_bytes", t->freed_bytes);
    ana_json_kv_u64(j, "events", c->nr_events);
    ana_json_kv_u64(j, "process_count", ana_model_nr_seen(m));
    ana_json_kv_u64(j, "thread_count", c->nr_threads);
    /* Stacks the heap events use, not the trace's stack nodes (every
     * prefix of every stack, VM and module-load stacks too). */
    ana_json_kv_u64(j, "stack_count", nr_stacks_used);
    if (sample_bytes) { /* a sampled trace's counted totals (null: none) */
        struct ana_exact x;
        ana_exact_of(m, t, &x);
        ana_exact_json(j, &x);
    }
    ana_json_end_object(j);
}

static void write_header(struct data_run *d)
{
    struct ana_json *j = &d->j;
    const struct fmt_trace_info *info = fmt_reader_info(d->run->r);

    ana_json_kv_u64(j, "version", 1);
    ana_json_kv_str(j, "trace", d->run->o->trace_name);
    ana_json_key(j, "command");
    ana_json_begin_array(j);
    for (uint32_t i = 0; info && info->command && i < info->command_len;) {
        size_t len = strnlen(info->command + i, info->command_len - i);

        ana_json_strn(j, info->command + i, len);
        i += (uint32_t)len + 1;
    }
    ana_json_end_array(j);
    ana_json_kv_str(j, "host", info ? info->hostname : NULL);
    /* Wall-clock ns exceed 2^53: a string, so JavaScript keeps every digit. */
    char start[32];
    snprintf(start, sizeof(start), "%llu",
             (unsigned long long)(info ? info->start_realtime_ns : 0));
    ana_json_kv_str(j, "startRealtimeNs", start);
    ana_json_kv_bool(j, "incomplete", fmt_reader_incomplete(d->run->r));
    /* Every selected process ended in the trace: what it left is leaked;
     * else (record -p detached, a trace cut short) only live at the end. */
    ana_json_kv_bool(j, "ended", ana_model_all_ended(d->run->model));
    ana_sample_json(j, fmt_reader_sample_bytes(d->run->r));
    if (info && info->aggregate_ns) {
        /* The page says it as the commands do (ana_aggregate.h). */
        char note[ANA_AGGREGATE_NOTE_SIZE];
        ana_aggregate_json(j, info);
        ana_json_kv_str(j, "aggregateNote", ana_aggregate_note(note, sizeof(note), info));
    }
    if (info && info->keep_last_ns) {
        /* record --keep-last: the whole run's trace or one of its segments */
        char note[ANA_SEGMENT_NOTE_SIZE];
        ana_segment_json(j, info);
        ana_json_kv_str(j, "segmentNote", ana_segment_note(note, sizeof(note), info));
    }
    /* Threads and their names, as the trace recorded them. */
    ana_json_key(j, "threads");
    ana_json_begin_array(j);
    for (uint32_t i = 0; i < fmt_reader_nr_threads(d->run->r); i++) {
        const struct fmt_thread_info *t = fmt_reader_thread(d->run->r, i);

        ana_json_begin_object(j);
        ana_json_kv_u64(j, "pid", t->pid);
        ana_json_kv_u64(j, "tid", t->tid);
        ana_json_key(j, "name");
        if (t->name)
            ana_json_strn(j, t->name, t->name_len);
        else
            ana_json_null(j);
        ana_json_end_object(j);
    }
    ana_json_end_array(j);
    ana_json_kv_u64(j, "endNs", d->run->counts.last_ts_ns);
    ana_json_kv_u64(j, "top_rows", d->run->o->nr_top); /* 0: all rows */
}

static int64_t site_value(const struct ana_site *s, enum site_col c)
{
    switch (c) {
    case COL_ALLOCS:
        return (int64_t)s->nr_allocs;
    case COL_BYTES:
        return (int64_t)s->alloc_bytes;
    case COL_LEAKED:
        return s->live_bytes;
    case COL_LEAKED_BLOCKS:
        return s->live_blocks;
    case COL_PEAK:
        return (int64_t)s->peak_all_bytes;
    case COL_TEMP:
        return (int64_t)s->nr_temporary;
    default:
        return (int64_t)s->temporary_bytes;
    }
}

static void add_values(struct page_site *p, const struct ana_site *s)
{
    for (unsigned c = 0; c < NR_COLS; c++)
        p->v[c] += site_value(s, (enum site_col)c);
#define ADD(type, name) p->sum.name += s->name;
    ANA_SITE_COUNTERS(ADD)
#undef ADD
}

/* A new page site (its index in *out); NULL when out of memory. */
static struct page_site *new_site(struct data_run *d, uint32_t stack, uint32_t frames,
                                  uint32_t image, uint32_t *out)
{
    struct page_site *p = &d->sites[d->nr_sites];

    *p = (struct page_site){.stack = stack, .frames = frames, .image = image};
    *out = d->nr_sites++;
    return p;
}

/* Something not listed: lumped into the one site after the listed ones. */
static void lump(struct data_run *d, struct page_site *other, const struct ana_site *s,
                 uint32_t nr_stacks)
{
    d->nr_other += nr_stacks;
    d->other_allocs += s->nr_allocs;
    d->other_bytes += s->alloc_bytes;
    add_values(other, s);
}

/* The page's sites from the whole model: the stacks run->keep keeps (the
 * flame graph's: every one that allocated, unless there are more than
 * ANA_HTML_MAX_SITES), stacks whose frames read the same (function, file,
 * line) in one image (one program in the per-program view) one site, as in
 * `memscribe report` and `window`: the page's window table adds up cells
 * by site. The rest are lumped into one site so that every total stays
 * exact. */
static int pick_stacks(struct data_run *d, struct page_site *other)
{
    uint32_t n = ana_model_nr_sites(d->run->model);
    const uint8_t *keep = d->run->keep;
    const struct ana_programs *pg = d->run->o->programs;
    struct ana_map by_row;
    int rc = 0;

    ana_map_init(&by_row, sizeof(uint32_t));
    for (uint32_t id = 0; id < n && !rc; id++) {
        const struct ana_site *s = ana_model_site(d->run->model, id);
        uint32_t key, *site;
        int created;

        if (!s || !(s->nr_allocs || s->live_bytes))
            continue;
        if (!keep[id]) {
            d->site_of[id] = OTHER_SITE;
            lump(d, other, s, 1);
            continue;
        }
        if ((rc = ana_stacks_key(d->run->stacks, id, 1, &key)))
            break;
        uint64_t group =
            pg && s->image < pg->nr_images ? pg->of_image[s->image] : (uint64_t)s->image;
        if (!(site = ana_map_put(&by_row, (group << 32 | key) + 1, &created))) {
            rc = -ENOMEM;
            break;
        }
        if (created)
            new_site(d, id, id, s->image, site);
        d->site_of[id] = *site;
        add_values(&d->sites[*site], s);
    }
    ana_map_release(&by_row);
    return rc;
}

/* The page's sites from the rows folded at each process's end
 * (ana_html_fold.h): a row by (program, places) of a row id run->keep
 * keeps is listed, the others lumped. */
static int pick_rows(struct data_run *d, struct page_site *other)
{
    const struct ana_html_fold *h = d->run->fold;
    uint32_t n;
    const struct ana_fold_row *rows = ana_fold_rows(&h->rows, ANA_FOLD_BY_PROGRAM, &n);

    for (uint32_t i = 0; i < n; i++) {
        const struct ana_fold_row *r = &rows[i];
        uint32_t id = ana_html_fold_row_id(h, r), site;

        if (id >= d->run->nr_keys || !d->run->keep[id]) {
            if (id < d->run->nr_keys)
                d->site_of[id] = OTHER_SITE;
            lump(d, other, &r->s, r->nr_sites);
            continue;
        }
        add_values(new_site(d, r->stack, r->made_stack, r->s.image, &site), &r->s);
        d->site_of[id] = site;
    }
    return 0;
}

/* Which sites the page lists (pick_stacks, pick_rows), and the lumped
 * site last, which cells of keys no listed site has join too. */
static int pick_sites(struct data_run *d)
{
    uint32_t n = d->run->nr_keys;
    const struct ana_map *cells = &d->run->wpa.cells;
    struct page_site other = {0};
    int rc;

    d->site_of = malloc((n ? n : 1) * sizeof(*d->site_of));
    d->sites = calloc((size_t)n + 1, sizeof(*d->sites));
    if (!d->site_of || !d->sites)
        return -ENOMEM;
    for (uint32_t k = 0; k < n; k++)
        d->site_of[k] = NO_SITE;
    if ((rc = d->run->fold ? pick_rows(d, &other) : pick_stacks(d, &other)))
        return rc;
    for (size_t i = 0; i < cells->cap; i++) {
        uint32_t key, a, f;

        if (!ana_map_slot_key(cells, i))
            continue;
        ana_html_wpa_key(ana_map_slot_key(cells, i), &key, &a, &f);
        if (key == ANA_HTML_OTHER_STACK) {
            d->nr_other += !d->nr_other; /* (cannot be 0: a lumped site allocated) */
            continue;
        }
        if (key >= n)
            return -EPROTO; /* a block of a stack the model never saw */
        if (d->site_of[key] != NO_SITE)
            continue;
        d->site_of[key] = OTHER_SITE;
        d->nr_other++;
        /* A stack that only freed blocks made before tracing. */
        const struct ana_site *s = d->run->fold ? NULL : ana_model_site(d->run->model, key);
        if (s)
            add_values(&other, s);
    }
    memcpy(d->sites[d->nr_sites].v, other.v, sizeof(other.v));
    d->sites[d->nr_sites].sum = other.sum;
    return 0;
}

/* Stacks share their outer frames: the page gets them as one prefix tree
 * of frames (node 0 the root) and each site as its leaf node, so a trace
 * with many deep stacks still makes a small page. */
struct frame_trie {
    struct ana_map index; /* mix((parent << 32 | place) + 1) -> node */
    uint32_t *parent, *fn, *place;
    uint32_t nr, cap;
};

static int trie_push(struct frame_trie *t, uint32_t parent, uint32_t fn, uint32_t place)
{
    /* Three arrays of one capacity: each grows from a copy of it. */
    uint32_t c1 = t->cap, c2 = t->cap, c3 = t->cap;

    if (UTIL_ARRAY_RESERVE(t->parent, c1, (size_t)t->nr + 1, 1024) ||
        UTIL_ARRAY_RESERVE(t->fn, c2, (size_t)t->nr + 1, 1024) ||
        UTIL_ARRAY_RESERVE(t->place, c3, (size_t)t->nr + 1, 1024))
        return -ENOMEM;
    t->cap = c1;
    t->parent[t->nr] = parent;
    t->fn[t->nr] = fn;
    t->place[t->nr] = place;
    t->nr++;
    return 0;
}

/* The child of parent at place, made on first use. */
static int trie_node(struct frame_trie *t, uint32_t parent, uint32_t fn, uint32_t place,
                     uint32_t *out)
{
    int created, rc;
    uint32_t *v =
        ana_map_put(&t->index, ana_html_mix(((uint64_t)parent << 32 | place) + 1), &created);

    if (!v)
        return -ENOMEM;
    if (created) {
        if ((rc = trie_push(t, parent, fn, place)))
            return rc;
        *v = t->nr - 1;
    }
    *out = *v;
    return 0;
}

/* The leaf node of a site's stack, its frames added to the trie. */
static int site_node(struct data_run *d, struct frame_trie *t, uint32_t stack, uint32_t *out)
{
    const struct ana_frame *f;
    int n = ana_stacks_get(d->run->stacks, stack, &f), rc;
    uint32_t at = 0, none;

    if (n < 0)
        return n;
    if (n == 0) {
        if ((rc = ana_stacks_leaf(d->run->stacks, stack, &none)))
            return rc;
        return trie_node(t, 0, str_ref(d, none), str_ref(d, none), out);
    }
    for (int k = n - 1; k >= 0; k--) /* outermost first */
        if ((rc = trie_node(t, at, str_ref(d, f[k].function), str_ref(d, f[k].place), &at)))
            return rc;
    *out = at;
    return d->rc;
}

/* The frame-of-interest rule (ana_interest.h) of every node of t, for the
 * page to lay rows out as the text does without a rule of its own:
 * out[0] the node's frame class, out[1] and out[2] of a stack whose leaf
 * it is, the frame of interest's index and how many frames precede the
 * entry chain (counted from the node). Fresh arrays of t->nr; 0, or
 * -ENOMEM with none. */
static int trie_rule(struct data_run *d, const struct frame_trie *t, uint32_t *out[3])
{
    uint8_t *chain = NULL;
    size_t cap = 0;
    int rc = 0;

    for (unsigned c = 0; c < 3; c++)
        out[c] = calloc((size_t)t->nr + 1, sizeof(*out[c]));
    for (uint32_t n = 1; n < t->nr && out[0] && out[1] && out[2]; n++) {
        uint32_t depth = 0;

        for (uint32_t k = n; k > 0 && k < t->nr; k = t->parent[k]) {
            if (UTIL_ARRAY_RESERVE(chain, cap, (size_t)depth + 1, 64)) {
                rc = -ENOMEM;
                break;
            }
            chain[depth++] = (uint8_t)ana_stacks_class(d->run->stacks, d->str_order[t->place[k]]);
        }
        if (rc)
            break;
        out[0][n] = chain[0];
        out[1][n] = ana_interest_find(chain, depth);
        out[2][n] = ana_interest_entry(chain, depth);
    }
    free(chain);
    if (rc || !out[0] || !out[1] || !out[2]) {
        for (unsigned c = 0; c < 3; c++) {
            free(out[c]);
            out[c] = NULL;
        }
        return -ENOMEM;
    }
    return 0;
}

/* The leaf nodes of the commit lifetimes' stacks (ana_html_vm.h), in the
 * one tree of frames: the listed keys', then the lumped ones'. */
static int vm_nodes(struct data_run *d, struct frame_trie *t)
{
    const struct ana_html_vm *v = &d->run->vm;
    char name[64];
    uint32_t id;
    int rc;

    if (!(d->vm_node = calloc((size_t)v->nr_keys + 1, sizeof(*d->vm_node))))
        return -ENOMEM;
    for (uint32_t k = 0; k < v->nr_keys; k++)
        if (ana_html_vm_listed(v, k) && (rc = site_node(d, t, v->stack[k], &d->vm_node[k])))
            return rc;
    if (!v->nr_other)
        return 0;
    snprintf(name, sizeof(name), "(%u other commit stacks)", v->nr_other);
    if ((rc = ana_stacks_intern(d->run->stacks, name, &id)))
        return rc;
    rc = trie_node(t, 0, str_ref(d, id), str_ref(d, id), &d->vm_node[v->nr_keys]);
    return rc ? rc : d->rc;
}

/* With leak classes (record --reach): per site, the bytes and blocks of
 * each class, "definitely_lost_bytes", ... (ana_reach_key), added up as
 * the sites' other numbers. Returns 0 or -ENOMEM. */
static int write_site_classes(struct data_run *d)
{
    const struct ana_reach *rc = &d->run->reach;
    uint32_t n = d->nr_sites + (d->nr_other ? 1 : 0);
    struct ana_reach_sum *sum = calloc((size_t)n + 1, sizeof(*sum));
    char key[64];

    if (!sum)
        return -ENOMEM;
    for (uint32_t id = 0; id < rc->nr_sites && id < ana_model_nr_sites(d->run->model); id++)
        if (d->site_of[id] != NO_SITE)
            for (unsigned c = 0; c < FMT_NR_REACH; c++) {
                sum[site_index(d, id)].bytes[c] += rc->site[id].bytes[c];
                sum[site_index(d, id)].blocks[c] += rc->site[id].blocks[c];
            }
    for (unsigned k = 0; k < 4; k++)
        for (int blocks = 0; blocks < 2; blocks++) {
            unsigned c = ana_reach_order[k];
            snprintf(key, sizeof(key), "%s_%s", ana_reach_key(c), blocks ? "blocks" : "bytes");
            ana_json_key(&d->j, key);
            ana_json_begin_array(&d->j);
            for (uint32_t i = 0; i < n; i++)
                ana_json_u64(&d->j, blocks ? sum[i].blocks[c] : sum[i].bytes[c]);
            ana_json_end_array(&d->j);
        }
    free(sum);
    return 0;
}

/* The trace's leak classes in all, and what they mean: "classes", null
 * without them. */
static void write_classes(struct data_run *d)
{
    struct ana_json *j = &d->j;
    const struct ana_reach_sum *t = &d->run->reach.total;
    char key[64];

    ana_json_key(j, "classes");
    if (!d->run->classes) {
        ana_json_null(j);
        return;
    }
    ana_json_begin_object(j);
    ana_json_kv_str(j, "legend", ana_reach_legend);
    ana_json_kv_u64(j, "lost_bytes", ana_reach_lost_bytes(t));
    ana_json_kv_u64(j, "lost_blocks", ana_reach_lost_blocks(t));
    for (unsigned c = 0; c < FMT_NR_REACH; c++) {
        snprintf(key, sizeof(key), "%s_bytes", ana_reach_key(c));
        ana_json_kv_u64(j, key, t->bytes[c]);
        snprintf(key, sizeof(key), "%s_blocks", ana_reach_key(c));
        ana_json_kv_u64(j, key, t->blocks[c]);
    }
    ana_json_end_object(j);
}

/* A sampled trace's standard errors of the sites' estimates (ana_site_se.h),
 * each an array beside its figure's, named as it with "_se" after it
 * (docs/json.md); an exact trace has none. */
static void write_site_se(struct data_run *d)
{
    static const char *const keys[] = {"allocations_se", "allocated_bytes_se", "leaked_bytes_se",
                                       "leaked_blocks_se", "peak_bytes_se"};
    struct ana_json *j = &d->j;
    uint32_t n = d->nr_sites + (d->nr_other ? 1 : 0);

    if (fmt_reader_sample_bytes(d->run->r) <= 1)
        return;
    for (unsigned c = 0; c < sizeof(keys) / sizeof(keys[0]); c++) {
        ana_json_key(j, keys[c]);
        ana_json_begin_array(j);
        for (uint32_t i = 0; i < n; i++) {
            const struct page_site *p = &d->sites[i];
            struct ana_site_se se;
            ana_site_se(&p->sum, p->v[COL_PEAK] > 0 ? (uint64_t)p->v[COL_PEAK] : 0, &se);
            const double v[] = {se.allocs, se.bytes, se.leaked, se.blocks, se.peak};
            ana_json_u64(j, (uint64_t)llround(v[c]));
        }
        ana_json_end_array(j);
    }
}

static void write_sites(struct data_run *d)
{
    static const char *const keys[NR_COLS] = {"allocations",    "allocated_bytes", "leaked_bytes",
                                              "leaked_blocks",  "peak_bytes",      "temporary",
                                              "temporary_bytes"};
    struct ana_json *j = &d->j;
    struct frame_trie t = {0};
    uint32_t *node = malloc((d->nr_sites ? d->nr_sites : 1) * sizeof(*node));
    uint32_t other_node = 0;

    ana_map_init(&t.index, sizeof(uint32_t));
    /* The root, node 0: no frame. */
    if (!node || (d->rc = trie_push(&t, UINT32_MAX, UINT32_MAX, UINT32_MAX))) {
        d->rc = d->rc ? d->rc : -ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < d->nr_sites && !d->rc; i++)
        d->rc = site_node(d, &t, d->sites[i].frames, &node[i]);
    if (!d->rc)
        d->rc = vm_nodes(d, &t);
    if (!d->rc && d->nr_other) {
        char name[160];
        uint32_t id;
        const struct ana_scope *total = ana_model_total(d->run->model);

        /* Say how much is lumped (at most 1 % of each total unless the
         * picture's limit was reached, ana_flame_top_sites). */
        snprintf(
            name, sizeof(name), "(%u other call sites: %.1f %% of allocations, %.1f %% of bytes)",
            d->nr_other,
            total->nr_allocs ? 100.0 * (double)d->other_allocs / (double)total->nr_allocs : 0.0,
            total->alloc_bytes ? 100.0 * (double)d->other_bytes / (double)total->alloc_bytes : 0.0);
        if (!(d->rc = ana_stacks_intern(d->run->stacks, name, &id)))
            d->rc = trie_node(&t, 0, str_ref(d, id), str_ref(d, id), &other_node);
    }
    if (d->rc)
        goto out;

    uint32_t *rule[3];
    if ((d->rc = trie_rule(d, &t, rule)))
        goto out;
    ana_json_key(j, "frames");
    ana_json_begin_object(j);
    const char *const cols[6] = {"parent", "fn", "place", "kind", "interest", "shown"};
    const uint32_t *vals[6] = {t.parent, t.fn, t.place, rule[0], rule[1], rule[2]};
    for (unsigned c = 0; c < 6; c++) {
        ana_json_key(j, cols[c]);
        ana_json_begin_array(j);
        for (uint32_t k = 0; k < t.nr; k++)
            ana_json_i64(j, vals[c][k] == UINT32_MAX ? -1 : (int64_t)vals[c][k]);
        ana_json_end_array(j);
    }
    ana_json_end_object(j);
    for (unsigned c = 0; c < 3; c++)
        free(rule[c]);

    ana_json_key(j, "sites");
    ana_json_begin_object(j);
    ana_json_key(j, "stack");
    ana_json_begin_array(j);
    for (uint32_t i = 0; i < d->nr_sites; i++)
        ana_json_u64(j, d->sites[i].stack);
    if (d->nr_other)
        ana_json_u64(j, 0); /* many stacks */
    ana_json_end_array(j);
    ana_json_key(j, "node");
    ana_json_begin_array(j);
    for (uint32_t i = 0; i < d->nr_sites; i++)
        ana_json_u64(j, node[i]);
    if (d->nr_other)
        ana_json_u64(j, other_node);
    ana_json_end_array(j);
    /* The process of each site, which tells apart rows whose stacks read
     * the same (one call site in several processes). */
    ana_json_key(j, "pid");
    ana_json_begin_array(j);
    for (uint32_t i = 0; i < d->nr_sites; i++) {
        const struct fmt_image_info *ii = fmt_reader_image(d->run->r, d->sites[i].image);
        ana_json_u64(j, ii ? ii->pid : 0);
    }
    if (d->nr_other)
        ana_json_u64(j, 0); /* many processes */
    ana_json_end_array(j);
    /* The per-program view: each site's program, an index in "programs". */
    const struct ana_programs *pg = d->run->o->programs;
    if (pg) {
        ana_json_key(j, "program");
        ana_json_begin_array(j);
        for (uint32_t i = 0; i < d->nr_sites; i++) {
            uint32_t image = d->sites[i].image;
            ana_json_u64(j, image < pg->nr_images ? d->prog_pos[pg->of_image[image]] : 0);
        }
        if (d->nr_other)
            ana_json_u64(j, 0); /* many programs */
        ana_json_end_array(j);
    }
    for (unsigned c = 0; c < NR_COLS; c++) {
        /* A sampled trace's temporary figures are left out (ana_sample.h). */
        if ((c == COL_TEMP || c == COL_TEMP_BYTES) &&
            !ana_sample_has_temporary(fmt_reader_sample_bytes(d->run->r)))
            continue;
        ana_json_key(j, keys[c]);
        ana_json_begin_array(j);
        /* A site's numbers add up its stacks' (the lumped ones last). */
        for (uint32_t i = 0; i < d->nr_sites + (d->nr_other ? 1 : 0); i++)
            ana_json_i64(j, d->sites[i].v[c]);
        ana_json_end_array(j);
    }
    write_site_se(d);
    if (d->run->classes)
        d->rc = write_site_classes(d);
    ana_json_end_object(j);
out:
    free(node);
    free(t.parent);
    free(t.fn);
    free(t.place);
    ana_map_release(&t.index);
}

static void write_wpa(struct data_run *d)
{
    static const char *const keys[5] = {"site", "a", "f", "n", "b"};
    const struct ana_html_wpa *w = &d->run->wpa;
    struct ana_json *j = &d->j;

    ana_json_key(j, "wpa");
    ana_json_begin_object(j);
    ana_json_kv_u64(j, "bucketNs", w->bucket_ns);
    ana_json_kv_u64(j, "nrBuckets", w->nr_buckets);
    for (unsigned col = 0; col < 5; col++) {
        ana_json_key(j, keys[col]);
        ana_json_begin_array(j);
        for (size_t i = 0; i < w->cells.cap; i++) {
            const struct ana_html_cell *c = ana_map_slot_val(&w->cells, i);
            uint32_t stack, a, f;

            if (!ana_map_slot_key(&w->cells, i) || !c->nr)
                continue;
            ana_html_wpa_key(ana_map_slot_key(&w->cells, i), &stack, &a, &f);
            switch (col) {
            case 0:
                /* The lumped sites are the one after the listed ones. */
                ana_json_u64(j, stack == ANA_HTML_OTHER_STACK ? d->nr_sites : site_index(d, stack));
                break;
            case 1:
                ana_json_u64(j, a);
                break;
            case 2:
                ana_json_i64(j, f == ANA_HTML_NEVER ? -1 : (int64_t)f);
                break;
            case 3:
                ana_json_u64(j, c->nr);
                break;
            default:
                ana_json_u64(j, c->bytes);
                break;
            }
        }
        ana_json_end_array(j);
    }
    ana_json_end_object(j);
}

/* Frames under 1/FLAME_MIN_SHARE of every total are narrower than half a
 * pixel until zoomed into; leaving them out keeps the page small for
 * programs with millions of distinct paths (`memscribe flamegraph` keeps
 * everything down to a tenth of a pixel). */
#define FLAME_MIN_SHARE 2000

static int flame_visible(const struct ana_tree *t, uint32_t id)
{
    for (unsigned c = 0; c < ANA_FLAME_NR_COSTS; c++) {
        int64_t v = t->nodes[id].incl[c], total = t->nodes[0].incl[c];

        if (v > 0 && (double)v * FLAME_MIN_SHARE >= (double)total)
            return 1;
    }
    return 0;
}

/* A flame tree in depth-first order with children by name, so the page
 * lays it out in one pass: parent indexes point backwards. */
static void write_flame(struct data_run *d, const char *key, const struct ana_tree *t)
{
    struct ana_json *j = &d->j;
    uint32_t *order = malloc((t->nr_nodes ? t->nr_nodes : 1) * sizeof(*order));
    uint32_t *index = malloc((t->nr_nodes ? t->nr_nodes : 1) * sizeof(*index));
    uint32_t *stack = malloc((t->nr_nodes ? t->nr_nodes : 1) * sizeof(*stack));
    uint32_t n = 0, top = 0;

    if (!order || !index || !stack) {
        d->rc = -ENOMEM;
        goto out;
    }
    stack[top++] = 0;
    while (top) {
        uint32_t id = stack[--top], first = top;

        if (id && !flame_visible(t, id))
            continue; /* and so is everything above it */
        index[id] = n;
        order[n++] = id;
        for (uint32_t c = t->nodes[id].first_child; c != ANA_TREE_NONE;
             c = t->nodes[c].next_sibling)
            stack[top++] = c;
        for (uint32_t a = first, b = top; a + 1 < b; a++, b--) {
            uint32_t x = stack[a];

            stack[a] = stack[b - 1];
            stack[b - 1] = x;
        }
    }
    ana_json_key(j, key);
    ana_json_begin_object(j);
    ana_json_key(j, "name");
    ana_json_begin_array(j);
    for (uint32_t i = 0; i < n; i++)
        ana_json_i64(j, order[i] ? (int64_t)str_ref(d, t->nodes[order[i]].label) : -1);
    ana_json_end_array(j);
    ana_json_key(j, "parent");
    ana_json_begin_array(j);
    for (uint32_t i = 0; i < n; i++)
        ana_json_i64(j, order[i] ? (int64_t)index[t->nodes[order[i]].parent] : -1);
    ana_json_end_array(j);
    ana_json_key(j, "cost");
    ana_json_begin_array(j);
    for (unsigned c = 0; c < ANA_FLAME_NR_COSTS; c++) {
        if (c == ANA_FLAME_TEMPORARY &&
            !ana_sample_has_temporary(fmt_reader_sample_bytes(d->run->r))) {
            ana_json_null(j); /* not estimated (ana_sample.h) */
            continue;
        }
        ana_json_begin_array(j);
        for (uint32_t i = 0; i < n; i++)
            ana_json_i64(j, t->nodes[order[i]].incl[c]);
        ana_json_end_array(j);
    }
    ana_json_end_array(j);
    ana_json_end_object(j);
out:
    free(order);
    free(index);
    free(stack);
}

/* "programs" of the per-program view: each program's executable, how
 * many processes ran it, its peak (the largest sum of their heaps at one
 * moment), leaked bytes and allocations, as report's programs table. */
static void write_programs(struct data_run *d)
{
    const struct ana_programs *pg = d->run->o->programs;
    struct ana_json *j = &d->j;

    if (!(d->prog_pos = calloc((size_t)pg->nr + 1, sizeof(*d->prog_pos)))) {
        d->rc = -ENOMEM;
        return;
    }
    ana_json_key(j, "programs");
    ana_json_begin_array(j);
    for (uint32_t k = 0, pos = 0; k < pg->nr; k++) {
        const struct ana_scope *s = ana_model_program(d->run->model, k);
        if (!s || !s->seen)
            continue;
        d->prog_pos[k] = pos++;
        ana_json_begin_object(j);
        ana_json_key(j, "exe");
        if (pg->v[k].exe)
            ana_json_strn(j, pg->v[k].exe, pg->v[k].exe_len);
        else
            ana_json_null(j);
        ana_json_kv_u64(j, "processes", pg->v[k].nr_images);
        ana_json_kv_u64(j, "peak_bytes", s->peak);
        ana_json_kv_u64(j, "leaked_bytes", s->heap);
        ana_json_kv_u64(j, "allocations", s->nr_allocs);
        ana_json_end_object(j);
    }
    ana_json_end_array(j);
}

/* The summary's stack_count: the folded rows count the sites they add. */
static uint64_t stacks_used(const struct ana_html_run *run)
{
    uint32_t n;
    uint64_t nr_used = 0;

    if (!run->fold)
        return ana_html_stacks_used(run->model);
    const struct ana_fold_row *rows = ana_fold_rows(&run->fold->rows, ANA_FOLD_BY_ALL, &n);
    for (uint32_t i = 0; i < n; i++)
        nr_used += rows[i].nr_sites;
    return nr_used;
}

int ana_html_write_data(struct ana_html_run *run, FILE *out)
{
    struct data_run d = {.run = run};
    FILE *f = ana_html_script_open(out);
    int rc;

    if (!f)
        return -ENOMEM;
    ana_map_init(&d.str_index, sizeof(uint32_t));
    ana_json_init(&d.j, f, false);
    ana_json_begin_object(&d.j);
    write_header(&d);
    ana_html_write_summary(&d.j, d.run->model, &d.run->counts, fmt_reader_sample_bytes(run->r),
                           stacks_used(run));
    write_classes(&d);
    if (d.run->o->base)
        d.rc = ana_html_base_write(&d.j, d.run->o->base);
    if (run->o->programs)
        write_programs(&d);
    if (!d.rc)
        d.rc = pick_sites(&d);
    if (!d.rc)
        write_sites(&d);
    if (!d.rc)
        write_wpa(&d);
    if (!d.rc)
        ana_html_vm_write(&d.j, &run->vm, d.vm_node);
    if (!d.rc)
        write_flame(&d, "flame", &run->flame);
    if (!d.rc)
        write_flame(&d, "flameInv", &run->flame_inv);
    /* Strings last: the sections above decided which ones are used. */
    ana_json_key(&d.j, "strings");
    ana_json_begin_array(&d.j);
    for (uint32_t i = 0; i < d.nr_strings; i++)
        ana_json_str(&d.j, ana_stacks_str(run->stacks, d.str_order[i]));
    ana_json_end_array(&d.j);
    ana_json_end_object(&d.j);
    rc = ana_json_finish(&d.j);
    if (fclose(f) && !rc)
        rc = -EIO;
    ana_map_release(&d.str_index);
    free(d.str_order);
    free(d.site_of);
    free(d.sites);
    free(d.prog_pos);
    free(d.vm_node);
    return d.rc ? d.rc : rc;
}
