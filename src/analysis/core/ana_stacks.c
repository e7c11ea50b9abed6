/* SPDX-License-Identifier: MIT */
/* Stack ids to interned frame strings, cached (see ana_stacks.h); row
 * keys are in ana_stacks_key.c. */
#include "analysis/core/ana_stacks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_map.h"
#include "analysis/core/ana_names.h"
#include "analysis/core/ana_stacks_internal.h"
#include "analysis/core/ana_text.h"
#include "util/util_array.h"

#define NO_STACK "(no stack)"

int ana_stacks_index_room(const struct ana_stacks *s, uint32_t **index, uint32_t *cap, uint32_t n,
                          ana_stacks_slot_fn *slot_of)
{
    if (((size_t)n + 1) * 2 <= *cap)
        return 0;
    uint32_t c = *cap ? *cap * 2 : 1024;
    uint32_t *idx = calloc(c, sizeof(*idx));
    if (!idx)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = slot_of(s, i, c);
        while (idx[j])
            j = (j + 1) & (c - 1);
        idx[j] = i + 1;
    }
    free(*index);
    *index = idx;
    *cap = c;
    return 0;
}

static int intern(struct ana_stacks *s, const char *str, uint32_t *id)
{
    int rc = ana_strtab_intern(&s->text, str, id);

    return rc < 0 ? rc : 0;
}

int ana_stacks_create(struct ana_stacks **out, struct fmt_reader *r,
                      const struct ana_sym_options *opt)
{
    struct ana_sym_options def = {0};
    struct fmt_trace_counts c;
    struct ana_stacks *s = calloc(1, sizeof(*s));
    uint32_t id;
    int rc;

    if (!s)
        return -ENOMEM;
    s->r = r;
    ana_map_init(&s->read_of, sizeof(struct addr_read));
    ana_map_init(&s->got, sizeof(struct got));
    ana_map_init(&s->same, sizeof(struct got));
    ana_map_init(&s->files, sizeof(struct place_file));
    ana_map_init(&s->wheres, sizeof(struct function_where));
    s->full_names = opt && opt->full_names;
    fmt_reader_counts(r, &c);
    s->nr_stacks = c.nr_stacks + 1;
    s->nr_pages = (s->nr_stacks + ANA_STACKS_PAGE - 1) >> ANA_STACKS_PAGE_BITS;
    if (!(s->pages = calloc(s->nr_pages, sizeof(*s->pages)))) {
        rc = -ENOMEM;
        goto fail;
    }
    if ((rc = intern(s, NO_STACK, &id)))
        goto fail;
    if ((rc = ana_sym_create(&s->sym, opt ? opt : &def)))
        goto fail;
    if ((rc = ana_sym_add_trace_modules(s->sym, r)))
        goto fail;
    *out = s;
    return 0;
fail:
    ana_stacks_destroy(s);
    return rc;
}

void ana_stacks_destroy(struct ana_stacks *s)
{
    if (!s)
        return;
    ana_sym_destroy(s->sym);
    ana_strtab_release(&s->text);
    free(s->cls);
    ana_stacks_drop_nodes(s);
    free(s->pages);
    free(s->pool);
    free(s->spans);
    free(s->walked);
    free(s->ids);
    ana_stacks_keys_release(s);
    ana_map_release(&s->read_of);
    ana_map_release(&s->got);
    ana_map_release(&s->same);
    ana_map_release(&s->files);
    ana_map_release(&s->wheres);
    free(s);
}

/* Set the class of string id to c (ana_stacks_class), unless a frame
 * already gave it one other than user. Returns 0 or -ENOMEM. */
static int set_class(struct ana_stacks *s, uint32_t id, enum ana_frame_class c)
{
    if (c == ANA_FRAME_USER)
        return 0;
    if (id >= s->nr_cls) {
        size_t cap = s->nr_cls;
        if (UTIL_ARRAY_RESERVE_ZERO(s->cls, cap, (size_t)id + 1, 1024))
            return -ENOMEM;
        s->nr_cls = cap;
    }
    if (s->cls[id] == ANA_FRAME_USER)
        s->cls[id] = (uint8_t)c;
    return 0;
}

enum ana_frame_class ana_stacks_class(const struct ana_stacks *s, uint32_t id)
{
    return id < s->nr_cls ? (enum ana_frame_class)s->cls[id] : ANA_FRAME_USER;
}

void ana_stacks_classes(const struct ana_stacks *s, const struct ana_frame *f, uint32_t n,
                        uint8_t *cls)
{
    for (uint32_t k = 0; k < n; k++)
        cls[k] = (uint8_t)ana_stacks_class(s, f[k].place);
}

/* The two strings of one symbolized frame, and their class. */
static int frame_strings(struct ana_stacks *s, const struct ana_sym_frame *f, struct ana_frame *out)
{
    const struct ana_sym_options *o = ana_sym_options_of(s->sym);
    enum ana_frame_class c = ana_interest_class(f, o->alloc_fns, o->nr_alloc_fns);
    char fn[512], place[1024];
    int rc;

    if (!f->module)
        snprintf(fn, sizeof(fn), "0x%" PRIx64, f->addr);
    else if (!f->function)
        snprintf(fn, sizeof(fn), "%s+0x%" PRIx64, ana_sym_base_name(f->module), f->module_offset);
    else if (s->full_names)
        snprintf(fn, sizeof(fn), "%s", f->function);
    else
        ana_name_short(fn, sizeof(fn), f->function);
    if (f->function && f->file && f->line)
        snprintf(place, sizeof(place), "%s (%s:%" PRIu32 ")", fn, ana_sym_base_name(f->file),
                 f->line);
    else if (f->function && f->module)
        snprintf(place, sizeof(place), "%s (%s)", fn, ana_sym_base_name(f->module));
    else
        snprintf(place, sizeof(place), "%s", fn);
    /* Names and paths are the program's bytes: escape them once here, and
     * every output that shows a frame gets them safe (ana_text.h). */
    char safe[4 * sizeof(place)];
    ana_text_escape(safe, sizeof(safe), fn, strlen(fn));
    if ((rc = intern(s, safe, &out->function)) || (rc = set_class(s, out->function, c)))
        return rc;
    ana_text_escape(safe, sizeof(safe), place, strlen(place));
    if ((rc = intern(s, safe, &out->place)))
        return rc;
    if ((s->want_files || s->want_where) && (rc = ana_stacks_note_where(s, out, f)))
        return rc;
    return set_class(s, out->place, c);
}

/* What the address of node n (of image) reads as, read as kind, from the
 * symbolizer: the frames' strings are made once per address. A return
 * address's reading is kept as the node's. Returns 0 or -errno. */
int ana_stacks_read_node(struct ana_stacks *s, uint32_t n, uint32_t image,
                         enum ana_sym_addr_kind kind, struct addr_read *out)
{
    const struct ana_sym_frame *f;
    uint64_t addr;
    int nr, created, rc;

    if ((rc = fmt_reader_stack_node(s->r, n, NULL, &addr, NULL)))
        return rc;
    /* Deep stacks repeat few return addresses over many nodes: the last
     * reading of an address is kept in a small table before the
     * symbolizer's lookup and the strings' map. */
    struct recent_read *recent =
        &s->recent[ana_map_mix(addr ^ (uint64_t)image << 48) & (ANA_STACKS_RECENT - 1)];
    struct node_page *pg = ana_stacks_page(s, n);
    if (!pg)
        return -ENOMEM;
    if (kind == ANA_SYM_RETURN && recent->rd.nr && recent->addr == addr && recent->image == image) {
        *out = pg->reads[ANA_STACKS_AT(n)] = recent->rd;
        return 0;
    }
    /* Shared by the images of one module: a tree's processes read its
     * addresses once (frames' addr is used only where no module is). */
    if ((nr = ana_sym_resolve_shared(s->sym, image, addr, kind, &f)) < 0)
        return nr;
    struct addr_read *rd = ana_map_put(&s->read_of, (uint64_t)(uintptr_t)f, &created);
    if (!rd)
        return -ENOMEM;
    if (created) {
        rc = UTIL_ARRAY_RESERVE(s->spans, s->cap_spans, s->nr_spans + (size_t)nr, 1024);
        for (int k = 0; !rc && k < nr; k++)
            rc = frame_strings(s, &f[k], &s->spans[s->nr_spans + (size_t)k]);
        if (rc) {
            ana_map_del(&s->read_of, (uint64_t)(uintptr_t)f);
            return rc;
        }
        *rd = (struct addr_read){.off = (uint32_t)s->nr_spans,
                                 .nr = (uint16_t)nr,
                                 .internal = ana_sym_frame_is_internal(&f[nr - 1]),
                                 .signal_frame = f[nr - 1].signal_frame};
        s->nr_spans += (size_t)nr;
    }
    *out = *rd;
    if (kind == ANA_SYM_RETURN) {
        pg->reads[ANA_STACKS_AT(n)] = *rd;
        *recent = (struct recent_read){.addr = addr, .image = image, .rd = *rd};
    }
    return 0;
}

struct node_page *ana_stacks_page_make(struct ana_stacks *s, uint32_t n)
{
    uint32_t first = n & ~(ANA_STACKS_PAGE - 1);
    struct node_page *p = calloc(1, sizeof(*p));

    if (!p)
        return NULL;
    /* A node the reader cannot give (a process's the reader let go, or a
     * corrupt definition) keeps parent 0: no walk reaches it but one of
     * its own stacks, whose reading (fmt_reader_stack) fails first. */
    for (uint32_t k = first ? 0 : 1; k < ANA_STACKS_PAGE && first + k < s->nr_stacks; k++)
        if (fmt_reader_stack_node(s->r, first + k, &p->parent[k], NULL, NULL))
            p->parent[k] = 0;
    s->pages[n >> ANA_STACKS_PAGE_BITS] = p;
    return p;
}

void ana_stacks_drop_nodes(struct ana_stacks *s)
{
    for (uint32_t i = 0; s->pages && i < s->nr_pages; i++) {
        if (s->pages[i])
            free(s->pages[i]->sums);
        free(s->pages[i]);
        s->pages[i] = NULL;
    }
}

int ana_stacks_walk(struct ana_stacks *s, uint32_t stack, enum ana_walk_out out)
{
    struct ana_sym_clean c = ana_sym_clean_start(s->sym);
    uint32_t image, n = stack;
    size_t nr = 0;
    int depth, rc;

    if ((depth = fmt_reader_stack(s->r, stack, &image, NULL, 0)) < 0)
        return depth;
    for (uint32_t i = 0; i < (uint32_t)depth; i++) {
        const struct node_page *pg = ana_stacks_page(s, n);
        if (!pg)
            return -ENOMEM;
        struct addr_read rd = pg->reads[ANA_STACKS_AT(n)];
        uint32_t parent = pg->parent[ANA_STACKS_AT(n)];

        if ((c.precise || !rd.nr) &&
            (rc = ana_stacks_read_node(s, n, image, ana_sym_clean_kind(&c), &rd)))
            return rc;
        n = parent;
        if (ana_sym_clean_next(&c, i, (uint32_t)depth, rd.internal, rd.signal_frame))
            continue;
        const struct ana_frame *f = s->spans + rd.off;
        if (out == ANA_WALK_FRAMES) {
            if (UTIL_ARRAY_RESERVE(s->walked, s->cap_walked, nr + rd.nr, 256))
                return -ENOMEM;
            memcpy(s->walked + nr, f, rd.nr * sizeof(*f));
        } else {
            if (UTIL_ARRAY_RESERVE(s->ids, s->cap_ids, nr + rd.nr, 256))
                return -ENOMEM;
            for (uint32_t k = 0; k < rd.nr; k++)
                s->ids[nr + k] = out == ANA_WALK_PLACES ? f[k].place : f[k].function;
        }
        nr += rd.nr;
    }
    return (int)nr;
}

int ana_stacks_frames(struct ana_stacks *s, uint32_t stack, const struct ana_frame **frames)
{
    int n;

    *frames = NULL;
    if (stack >= s->nr_stacks || stack == 0)
        return 0;
    const struct got *g = ana_map_get(&s->got, (uint64_t)stack + 1);
    if (g) {
        *frames = s->pool + g->start;
        return (int)g->count;
    }
    if ((n = ana_stacks_walk(s, stack, ANA_WALK_FRAMES)) >= 0)
        *frames = s->walked;
    return n;
}

/* Where in pool the n frames just walked are: the place of an earlier
 * stack of the same frames, else appended. */
static int pool_place(struct ana_stacks *s, uint32_t n, struct got *out)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    int created;

    for (uint32_t i = 0; i < n; i++)
        h = ana_map_mix(h ^ ((uint64_t)s->walked[i].function << 32 | s->walked[i].place));
    struct got *same = ana_map_put(&s->same, h | 1, &created);
    if (!same)
        return -ENOMEM;
    if (!created && same->count == n &&
        !memcmp(s->pool + same->start, s->walked, (size_t)n * sizeof(*s->walked))) {
        *out = *same;
        return 0;
    }
    if (UTIL_ARRAY_RESERVE(s->pool, s->cap_pool, s->nr_pool + (size_t)n, 1024))
        return -ENOMEM;
    memcpy(s->pool + s->nr_pool, s->walked, (size_t)n * sizeof(*s->walked));
    *out = (struct got){(uint32_t)s->nr_pool, n};
    if (created)
        *same = *out; /* else a collision: the first keeps the slot */
    s->nr_pool += n;
    return 0;
}

int ana_stacks_get(struct ana_stacks *s, uint32_t stack, const struct ana_frame **frames)
{
    int n = ana_stacks_frames(s, stack, frames);
    struct got place;

    if (n <= 0 || *frames != s->walked)
        return n; /* none, failed, or kept already */
    if (pool_place(s, (uint32_t)n, &place))
        return -ENOMEM;
    struct got *g = ana_map_put(&s->got, (uint64_t)stack + 1, NULL);
    if (!g)
        return -ENOMEM;
    *g = place;
    *frames = s->pool + place.start;
    return n;
}

const char *ana_stacks_str(const struct ana_stacks *s, uint32_t id)
{
    return id < s->text.nr ? s->text.strs[id] : "?";
}

const char *ana_stacks_str_fn(void *arg, uint32_t id)
{
    return ana_stacks_str(arg, id);
}

int ana_stacks_leaf(struct ana_stacks *s, uint32_t stack, uint32_t *function)
{
    const struct ana_frame *f;
    int n = ana_stacks_frames(s, stack, &f); /* a leaf keeps no frames */

    if (n < 0)
        return n;
    *function = n ? f[0].function : 0; /* id 0 is "(no stack)" */
    return 0;
}

int ana_stacks_intern(struct ana_stacks *s, const char *str, uint32_t *id)
{
    return intern(s, str, id);
}

struct ana_sym *ana_stacks_sym(struct ana_stacks *s)
{
    return s->sym;
}
