/* SPDX-License-Identifier: MIT */
/* Symbolized stacks for the exporters: one symbolizer fed with every
 * module of the trace, and short frame names for formats that want one
 * word per frame. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_text.h"
#include "analysis/export/ana_export_internal.h"
#include "util/util_array.h"

int ana_xsym_open(struct ana_xsym *x, struct fmt_reader *r, const struct ana_export_options *o)
{
    int rc;

    memset(x, 0, sizeof(*x));
    x->r = r;
    x->o = o;
    ana_map_init(&x->escaped, sizeof(const char *));
    if ((rc = ana_sym_create(&x->sym, &o->sym)))
        return rc;
    /* The trace's modules as every report feeds them (ana_stacks.c). */
    if ((rc = ana_sym_add_trace_modules(x->sym, r))) {
        ana_xsym_close(x);
        return rc;
    }
    return 0;
}

static void free_owned(struct ana_xsym *x)
{
    for (uint32_t i = 0; i < x->nr_owned; i++)
        free(x->owned[i]);
    x->nr_owned = 0;
}

void ana_xsym_close(struct ana_xsym *x)
{
    if (x->sym && x->o && x->o->note)
        for (size_t i = 0; i < ana_sym_nr_notes(x->sym); i++)
            x->o->note(x->o->note_arg, ana_sym_note(x->sym, i));
    ana_sym_stack_release(&x->raw);
    free(x->st.lines);
    free(x->frames);
    free_owned(x);
    free(x->owned);
    ana_map_release(&x->escaped);
    ana_sym_destroy(x->sym);
    free(x->addrs);
    memset(x, 0, sizeof(*x));
}

char *ana_xtext(const char *s, size_t len, bool words)
{
    size_t n = words ? ana_text_escape_words(NULL, 0, s, len) : ana_text_escape(NULL, 0, s, len);
    char *out = malloc(n + 1);

    if (!out)
        return NULL;
    if (words)
        ana_text_escape_words(out, n + 1, s, len);
    else
        ana_text_escape(out, n + 1, s, len);
    return out;
}

/* *s escaped: unchanged when it needs nothing (escaping always lengthens),
 * else its copy, made the first time the string is seen: a deep stack's
 * frames repeat in every stack that shares them. */
static int escape_str(struct ana_xsym *x, const char **s)
{
    const char **known, *out = *s;
    size_t len;

    if (!*s)
        return 0;
    if ((known = ana_map_get(&x->escaped, (uint64_t)(uintptr_t)*s))) {
        *s = *known;
        return 0;
    }
    len = strlen(*s);
    if (ana_text_escape(NULL, 0, *s, len) != len) {
        char *e;

        if (UTIL_ARRAY_RESERVE(x->owned, x->cap_owned, (size_t)x->nr_owned + 1, 16) ||
            !(e = ana_xtext(*s, len, false)))
            return -ENOMEM;
        x->owned[x->nr_owned++] = e;
        out = e;
    }
    /* Cached only once made: a failure above leaves nothing behind. */
    if (!(known = ana_map_put(&x->escaped, (uint64_t)(uintptr_t)*s, NULL)))
        return -ENOMEM;
    *known = out;
    *s = out;
    return 0;
}

/* x->st: x->raw with copies of its frames whose strings are escaped, and
 * each frame's addr the one recorded (ana_sym_stack_shared's frames are
 * shared with other images, which map the module elsewhere). */
static int escape_stack(struct ana_xsym *x)
{
    uint32_t n = x->raw.nr_lines;

    if (n > x->cap_frames) {
        struct ana_sym_frame *f = realloc(x->frames, n * sizeof(*f));
        struct ana_sym_line *l;
        if (!f)
            return -ENOMEM;
        x->frames = f;
        if (!(l = realloc(x->st.lines, n * sizeof(*l))))
            return -ENOMEM;
        x->st.lines = l;
        x->cap_frames = x->st.cap_lines = n;
    }
    x->st.nr_lines = n;
    x->st.nr_cut = x->raw.nr_cut;
    for (uint32_t i = 0; i < n; i++) {
        struct ana_sym_frame *f = &x->frames[i];
        int rc;

        *f = *x->raw.lines[i].frame;
        f->addr = x->addrs[x->raw.nr_cut + x->raw.lines[i].index];
        if ((rc = escape_str(x, &f->function)) || (rc = escape_str(x, &f->file)) ||
            (rc = escape_str(x, &f->module)))
            return rc;
        x->st.lines[i] = (struct ana_sym_line){.frame = f, .index = x->raw.lines[i].index};
    }
    return 0;
}

int ana_xsym_stack(struct ana_xsym *x, uint32_t id, const struct ana_sym_stack **out,
                   uint32_t *image)
{
    uint32_t img = 0;
    int depth = 0;

    *out = &x->st;
    if (id) {
        depth = fmt_reader_stack(x->r, id, &img, x->addrs, x->cap_addrs);
        if (depth == -ESTALE)
            return depth; /* its process's stacks were let go (image_done) */
        if (depth < 0)
            depth = 0; /* an unknown id: show it as an empty stack */
        if ((uint32_t)depth > x->cap_addrs) {
            uint64_t *a = realloc(x->addrs, (size_t)depth * sizeof(*a));
            if (!a)
                return -ENOMEM;
            x->addrs = a;
            x->cap_addrs = (uint32_t)depth;
            depth = fmt_reader_stack(x->r, id, &img, x->addrs, x->cap_addrs);
        }
    }
    if (image)
        *image = img;
    /* A tree's frames cached by (module, offset): its thousand processes,
     * each mapping its program elsewhere, read each address once. One
     * process's by address: no module is looked up for a cached one. */
    int rc = fmt_reader_nr_images(x->r) > 1
                 ? ana_sym_stack_shared(x->sym, img, x->addrs, (uint32_t)depth, &x->raw)
                 : ana_sym_stack(x->sym, img, x->addrs, (uint32_t)depth, &x->raw);
    return rc ? rc : escape_stack(x);
}

const char *ana_xsym_basename(const char *path)
{
    const char *b;

    if (!path || !*path)
        return "???";
    b = strrchr(path, '/');
    return b ? b + 1 : path;
}

const char *ana_xsym_name(const struct ana_sym_frame *f, char *buf, size_t size)
{
    if (f->function)
        return f->function;
    if (f->module)
        snprintf(buf, size, "%s+0x%" PRIx64, ana_xsym_basename(f->module), f->module_offset);
    else
        snprintf(buf, size, "0x%" PRIx64, f->addr);
    return buf;
}
