/* SPDX-License-Identifier: MIT */
/* Stack ids to interned frame strings, cached (see ana_stacks.h). */
#include "analysis/core/ana_stacks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_map.h"
#include "analysis/core/ana_names.h"
#include "analysis/core/ana_text.h"
#include "util/util_array.h"

#define NO_STACK "(no stack)"

struct ana_stacks {
    struct fmt_reader *r;
    struct ana_sym *sym;
    struct ana_sym_stack st;
    bool full_names; /* else labels are ana_name_short()'s */
    uint64_t *addrs;
    uint32_t cap_addrs;

    /* Interned strings: text[] by id, and an open-addressing index. */
    char **text;
    uint32_t nr_text, cap_text;
    uint32_t *index; /* id + 1, 0 empty */
    uint32_t cap_index;

    /* Per stack id: where its frames start in pool (UINT32_MAX: not yet). */
    uint32_t *start;
    uint32_t *count;
    uint32_t nr_stacks;
    struct ana_frame *pool;
    size_t nr_pool, cap_pool;

    /* The strings of each symbolized frame already seen, by the frame's
     * address: the symbolizer keeps one frame per address for its whole
     * life, and deep stacks share most of their frames, so each frame is
     * formatted and escaped once, not once per stack. */
    struct ana_map frames;

    /* Row keys (ana_stacks_key): each distinct sequence of frame string ids,
     * kept in key_ids at key_off[k - 1], key_len[k - 1], with an
     * open-addressing index of key + 1 (0 empty). Key 0 is "(no stack)". */
    uint32_t *key_ids;
    size_t nr_key_ids, cap_key_ids;
    uint32_t *key_off, *key_len;
    uint32_t nr_keys, cap_keys;
    uint32_t *key_index;
    uint32_t cap_key_index;
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static int intern(struct ana_stacks *s, const char *str, uint32_t *id)
{
    if ((s->nr_text + 1) * 2 > s->cap_index) {
        uint32_t cap = s->cap_index ? s->cap_index * 2 : 1024;
        uint32_t *idx = calloc(cap, sizeof(*idx));
        if (!idx)
            return -ENOMEM;
        for (uint32_t i = 0; i < s->nr_text; i++) {
            uint32_t j = (uint32_t)hash_str(s->text[i]) & (cap - 1);
            while (idx[j])
                j = (j + 1) & (cap - 1);
            idx[j] = i + 1;
        }
        free(s->index);
        s->index = idx;
        s->cap_index = cap;
    }
    uint32_t j = (uint32_t)hash_str(str) & (s->cap_index - 1);
    for (; s->index[j]; j = (j + 1) & (s->cap_index - 1))
        if (!strcmp(s->text[s->index[j] - 1], str)) {
            *id = s->index[j] - 1;
            return 0;
        }
    if (UTIL_ARRAY_RESERVE(s->text, s->cap_text, (size_t)s->nr_text + 1, 256))
        return -ENOMEM;
    char *copy = strdup(str);
    if (!copy)
        return -ENOMEM;
    s->text[s->nr_text] = copy;
    s->index[j] = s->nr_text + 1;
    *id = s->nr_text++;
    return 0;
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
    ana_map_init(&s->frames, sizeof(struct ana_frame));
    s->full_names = opt && opt->full_names;
    fmt_reader_counts(r, &c);
    s->nr_stacks = c.nr_stacks + 1;
    s->start = malloc(s->nr_stacks * sizeof(*s->start));
    s->count = calloc(s->nr_stacks, sizeof(*s->count));
    if (!s->start || !s->count) {
        rc = -ENOMEM;
        goto fail;
    }
    memset(s->start, 0xff, s->nr_stacks * sizeof(*s->start));
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
    if (s->sym) {
        ana_sym_stack_release(&s->st);
        ana_sym_destroy(s->sym);
    }
    for (uint32_t i = 0; i < s->nr_text; i++)
        free(s->text[i]);
    free(s->text);
    free(s->index);
    free(s->start);
    free(s->count);
    free(s->pool);
    free(s->addrs);
    free(s->key_ids);
    free(s->key_off);
    free(s->key_len);
    free(s->key_index);
    ana_map_release(&s->frames);
    free(s);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash ? slash + 1 : path;
}

/* The two strings of one symbolized frame. */
static int frame_strings(struct ana_stacks *s, const struct ana_sym_frame *f, struct ana_frame *out)
{
    char fn[512], place[1024];
    int rc;

    if (!f->module)
        snprintf(fn, sizeof(fn), "0x%" PRIx64, f->addr);
    else if (!f->function)
        snprintf(fn, sizeof(fn), "%s+0x%" PRIx64, base_name(f->module), f->module_offset);
    else if (s->full_names)
        snprintf(fn, sizeof(fn), "%s", f->function);
    else
        ana_name_short(fn, sizeof(fn), f->function);
    if (f->function && f->file && f->line)
        snprintf(place, sizeof(place), "%s (%s:%" PRIu32 ")", fn, base_name(f->file), f->line);
    else if (f->function && f->module)
        snprintf(place, sizeof(place), "%s (%s)", fn, base_name(f->module));
    else
        snprintf(place, sizeof(place), "%s", fn);
    /* Names and paths are the program's bytes: escape them once here, and
     * every output that shows a frame gets them safe (ana_text.h). */
    char safe[4 * sizeof(place)];
    ana_text_escape(safe, sizeof(safe), fn, strlen(fn));
    if ((rc = intern(s, safe, &out->function)))
        return rc;
    ana_text_escape(safe, sizeof(safe), place, strlen(place));
    return intern(s, safe, &out->place);
}

int ana_stacks_get(struct ana_stacks *s, uint32_t stack, const struct ana_frame **frames)
{
    uint32_t image;
    int depth, rc;

    if (stack >= s->nr_stacks || stack == 0) {
        *frames = NULL;
        return 0;
    }
    if (s->start[stack] != UINT32_MAX) {
        *frames = s->pool + s->start[stack];
        return (int)s->count[stack];
    }
    for (;;) {
        depth = fmt_reader_stack(s->r, stack, &image, s->addrs, s->cap_addrs);
        if (depth < 0)
            return depth;
        if ((uint32_t)depth <= s->cap_addrs)
            break;
        uint64_t *a = realloc(s->addrs, (size_t)depth * sizeof(*a));
        if (!a)
            return -ENOMEM;
        s->addrs = a;
        s->cap_addrs = (uint32_t)depth;
    }
    if ((rc = ana_sym_stack(s->sym, image, s->addrs, (uint32_t)depth, &s->st)))
        return rc;
    if (s->nr_pool + s->st.nr_lines > s->cap_pool) {
        size_t cap = s->cap_pool ? s->cap_pool : 1024;
        while (cap < s->nr_pool + s->st.nr_lines)
            cap *= 2;
        struct ana_frame *p = realloc(s->pool, cap * sizeof(*p));
        if (!p)
            return -ENOMEM;
        s->pool = p;
        s->cap_pool = cap;
    }
    for (uint32_t i = 0; i < s->st.nr_lines; i++) {
        const struct ana_sym_frame *f = s->st.lines[i].frame;
        int created;
        struct ana_frame *known = ana_map_put(&s->frames, (uint64_t)(uintptr_t)f, &created);

        if (!known)
            return -ENOMEM;
        if (created && (rc = frame_strings(s, f, known))) {
            ana_map_del(&s->frames, (uint64_t)(uintptr_t)f);
            return rc;
        }
        s->pool[s->nr_pool + i] = *known;
    }
    s->start[stack] = (uint32_t)s->nr_pool;
    s->count[stack] = s->st.nr_lines;
    s->nr_pool += s->st.nr_lines;
    *frames = s->pool + s->start[stack];
    return (int)s->count[stack];
}

const char *ana_stacks_str(const struct ana_stacks *s, uint32_t id)
{
    return id < s->nr_text ? s->text[id] : "?";
}

int ana_stacks_leaf(struct ana_stacks *s, uint32_t stack, uint32_t *function)
{
    const struct ana_frame *f;
    int n = ana_stacks_get(s, stack, &f);

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

static uint64_t hash_ids(const uint32_t *ids, uint32_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

    for (uint32_t i = 0; i < n; i++)
        h = (h ^ ids[i]) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 29);
}

/* The key of the sequence ids[0..n): found, or added. */
static int key_intern(struct ana_stacks *s, const uint32_t *ids, uint32_t n, uint32_t *key)
{
    if (((size_t)s->nr_keys + 1) * 2 > s->cap_key_index) {
        uint32_t cap = s->cap_key_index ? s->cap_key_index * 2 : 1024;
        uint32_t *idx = calloc(cap, sizeof(*idx));
        if (!idx)
            return -ENOMEM;
        for (uint32_t k = 0; k < s->nr_keys; k++) {
            uint32_t j = (uint32_t)hash_ids(s->key_ids + s->key_off[k], s->key_len[k]) & (cap - 1);
            while (idx[j])
                j = (j + 1) & (cap - 1);
            idx[j] = k + 1;
        }
        free(s->key_index);
        s->key_index = idx;
        s->cap_key_index = cap;
    }
    uint32_t j = (uint32_t)hash_ids(ids, n) & (s->cap_key_index - 1);
    for (; s->key_index[j]; j = (j + 1) & (s->cap_key_index - 1)) {
        uint32_t k = s->key_index[j] - 1;
        if (s->key_len[k] == n && !memcmp(s->key_ids + s->key_off[k], ids, n * sizeof(*ids))) {
            *key = k + 1;
            return 0;
        }
    }
    if (UTIL_ARRAY_RESERVE(s->key_ids, s->cap_key_ids, s->nr_key_ids + n, 1024) ||
        UTIL_ARRAY_RESERVE(s->key_off, s->cap_keys, (size_t)s->nr_keys + 1, 256))
        return -ENOMEM;
    /* key_len grows with key_off: same count, same capacity. */
    uint32_t *len = realloc(s->key_len, s->cap_keys * sizeof(*len));
    if (!len)
        return -ENOMEM;
    s->key_len = len;
    memcpy(s->key_ids + s->nr_key_ids, ids, n * sizeof(*ids));
    s->key_off[s->nr_keys] = (uint32_t)s->nr_key_ids;
    s->key_len[s->nr_keys] = n;
    s->nr_key_ids += n;
    s->key_index[j] = s->nr_keys + 1;
    *key = ++s->nr_keys;
    return 0;
}

int ana_stacks_key(struct ana_stacks *s, uint32_t stack, int by_place, uint32_t *key)
{
    const struct ana_frame *f;
    int n = ana_stacks_get(s, stack, &f), rc;

    if (n <= 0) {
        *key = 0; /* "(no stack)" */
        return n;
    }
    /* The frames' string ids in a sequence of their own, hashed and
     * compared as words: this runs for every site of a report, and
     * interning the ids as text showed. */
    uint32_t *ids = malloc((size_t)n * sizeof(*ids));
    if (!ids)
        return -ENOMEM;
    for (int i = 0; i < n; i++)
        ids[i] = by_place ? f[i].place : f[i].function;
    rc = key_intern(s, ids, (uint32_t)n, key);
    free(ids);
    return rc;
}
