/* SPDX-License-Identifier: MIT */
/* pprof's profile.proto (github.com/google/pprof, proto/profile.proto),
 * gzipped by the sink. A small hand-written protobuf encoder: every field
 * is a varint or length-delimited. Repeated fields may come in any order
 * and interleave, so samples, locations, functions, mappings and strings
 * are written as they are first met: only the dedup tables stay in
 * memory. One sample per stack: alloc_objects, alloc_space (the whole
 * trace) and inuse_objects, inuse_space (live at the end). With the
 * reachability classes of record --reach, a stack's blocks live at the end
 * that the scan classed are samples of their own, one per class, with
 * label leak_class (definitely_lost, ...) and only inuse values: pprof
 * adds them up as one stack, and -tagfocus=leak_class=... picks a class.
 *
 * On a process tree (ana_export_options.image_done) the samples of each
 * process image are written at its end, from a model of pprof's own that
 * hands the image's sites over then (ana_model_options.retire), and its
 * locations dropped: memory follows the processes running, not every
 * process the trace holds. A trace with leak classes is written at the
 * end (record --reach traces one program; its classes are known at the
 * end of the trace).
 *
 * A window (ana_export_options.window) is a delta, as Go's ?seconds=N:
 * per stack, alloc_* what was allocated inside it and inuse_* the change
 * of what is in use (AIFO - AOFI: negative where more was freed), from
 * the window's own classes (ana_window.h), so that its sums are
 * `memscribe window`'s. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_aggregate.h"
#include "analysis/core/ana_strtab.h"
#include "analysis/core/ana_text.h"
#include "analysis/core/ana_time.h"
#include "analysis/export/ana_export_internal.h"
#include "analysis/export/ana_export_map.h"
#include "analysis/model/ana_heap_replay.h"
#include "analysis/model/ana_heaps.h"
#include "analysis/model/ana_reach.h"
#include "analysis/model/ana_window.h"
#include "util/util_array.h"

/* profile.proto field numbers. */
enum {
    PROFILE_SAMPLE_TYPE = 1,
    PROFILE_SAMPLE = 2,
    PROFILE_MAPPING = 3,
    PROFILE_LOCATION = 4,
    PROFILE_FUNCTION = 5,
    PROFILE_STRING_TABLE = 6,
    PROFILE_TIME_NANOS = 9,
    PROFILE_DURATION_NANOS = 10,
    PROFILE_PERIOD_TYPE = 11,
    PROFILE_PERIOD = 12,
    PROFILE_COMMENT = 13,
    PROFILE_DEFAULT_SAMPLE_TYPE = 14,
    VALUETYPE_TYPE = 1,
    VALUETYPE_UNIT = 2,
    SAMPLE_LOCATION_ID = 1,
    SAMPLE_VALUE = 2,
    SAMPLE_LABEL = 3,
    LABEL_KEY = 1,
    LABEL_STR = 2,
    MAPPING_ID = 1,
    MAPPING_START = 2,
    MAPPING_LIMIT = 3,
    MAPPING_OFFSET = 4,
    MAPPING_FILENAME = 5,
    MAPPING_BUILD_ID = 6,
    MAPPING_HAS_FUNCTIONS = 7,
    MAPPING_HAS_FILENAMES = 8,
    MAPPING_HAS_LINE_NUMBERS = 9,
    MAPPING_HAS_INLINE_FRAMES = 10,
    LOCATION_ID = 1,
    LOCATION_MAPPING_ID = 2,
    LOCATION_ADDRESS = 3,
    LOCATION_LINE = 4,
    LINE_FUNCTION_ID = 1,
    LINE_LINE = 2,
    FUNCTION_ID = 1,
    FUNCTION_NAME = 2,
    FUNCTION_SYSTEM_NAME = 3,
    FUNCTION_FILENAME = 4,
};

#define WIRE_VARINT 0
#define WIRE_LEN 2

/* A growable message buffer. */
struct pb {
    uint8_t *p;
    size_t len, cap;
    int err;
};

static void pb_reserve(struct pb *b, size_t n)
{
    if (b->err || b->len + n <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n)
        cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        b->err = -ENOMEM;
        return;
    }
    b->p = p;
    b->cap = cap;
}

static void pb_varint(struct pb *b, uint64_t v)
{
    pb_reserve(b, 10);
    if (b->err)
        return;
    while (v >= 0x80) {
        b->p[b->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->p[b->len++] = (uint8_t)v;
}

static void pb_uint(struct pb *b, unsigned field, uint64_t v)
{
    pb_varint(b, (uint64_t)field << 3 | WIRE_VARINT);
    pb_varint(b, v);
}

static void pb_bytes(struct pb *b, unsigned field, const void *p, size_t n)
{
    pb_varint(b, (uint64_t)field << 3 | WIRE_LEN);
    pb_varint(b, n);
    pb_reserve(b, n);
    if (!b->err) {
        memcpy(b->p + b->len, p, n);
        b->len += n;
    }
}

struct pprof {
    struct fmt_reader *r;
    struct ana_xout *out;
    struct ana_xsym *sym;
    const struct ana_xmodel *m;
    struct ana_strtab strs;
    struct ana_map locations; /* (image, addr) -> location id */
    struct ana_map functions; /* (name, file) string indexes -> function id */
    /* The modules of image mods_image - 1 (0: none yet), by index in the
     * trace's table, in load order (mapping_id). */
    uint32_t *mods;
    size_t nr_mods, cap_mods;
    uint32_t mods_image;
    uint32_t nr_locations;
    uint32_t nr_functions;
    struct pb msg;  /* the message being built */
    struct pb body; /* a top-level field's payload */
    /* A trace with pools: the heap each stack allocated in (ana_heaps.h),
     * given as a sample label "heap" when it is one pool. */
    struct ana_heaps heaps;
    struct ana_heaps_by_stack by_stack; /* of[]: by stack, heap id + 1 */
    /* A trace with classes at exit (ana_reach.h): the blocks live at the
     * end (live), and their classes summed per stack after the pass
     * (reach, nr_stacks + 1 entries, NULL without classes). */
    struct ana_xlive live;
    struct ana_reach_sum *reach;
    uint32_t nr_stacks; /* the trace's: ids 1..nr_stacks */
    /* Written at each image's end (ana_export_pprof_streams): the model
     * that hands its sites over, the image's samples (by stack), the
     * samples of no stack (id 0, and ids past the table), which every
     * image adds to and which are written last. NULL model: every sample
     * is written at the end from the export's model (m). */
    struct ana_model *model;
    struct xsample *img;
    size_t nr_img, cap_img;
    int64_t none[4];
    /* A window's delta (o->window): its classes per stack. */
    struct ana_window win;
    bool win_on;
};

/* A sample's stack and values: alloc_objects, alloc_space, inuse_objects,
 * inuse_space (signed: the sites of no stack add up across images). */
struct xsample {
    uint32_t stack;
    int64_t v[4];
};

/* Write one top-level field of the Profile message from p->body. */
static int emit(struct pprof *p, unsigned field)
{
    struct pb *b = &p->body;

    if (b->err)
        return b->err;
    p->msg.len = 0;
    pb_bytes(&p->msg, field, b->p, b->len);
    b->len = 0;
    if (p->msg.err)
        return p->msg.err;
    return ana_xout_write(p->out, p->msg.p, p->msg.len);
}

/* The index of s in string_table, writing it out the first time. */
static int str(struct pprof *p, const char *s, uint32_t *index)
{
    int rc = ana_strtab_intern(&p->strs, s, index);

    if (rc <= 0)
        return rc;
    p->msg.len = 0;
    pb_bytes(&p->msg, PROFILE_STRING_TABLE, s, strlen(s));
    return p->msg.err ? p->msg.err : ana_xout_write(p->out, p->msg.p, p->msg.len);
}

static int value_type(struct pprof *p, unsigned field, const char *type, const char *unit)
{
    uint32_t t, u;
    int rc;

    if ((rc = str(p, type, &t)) || (rc = str(p, unit, &u)))
        return rc;
    pb_uint(&p->body, VALUETYPE_TYPE, t);
    pb_uint(&p->body, VALUETYPE_UNIT, u);
    return emit(p, field);
}

static int mappings(struct pprof *p)
{
    int rc = 0;

    for (uint32_t i = 0; i < fmt_reader_nr_modules(p->r) && !rc; i++) {
        const struct fmt_module_info *mi = fmt_reader_module(p->r, i);
        const struct fmt_module *m = &mi->m;
        uint64_t lo = UINT64_MAX, hi = 0, off = 0;
        char path[4096], build_id[2 * FMT_MAX_BUILD_ID + 1];
        uint32_t fname, bid;

        for (uint32_t k = 0; k < m->nr_segments && k < FMT_MAX_SEGMENTS; k++) {
            if (m->segments[k].vaddr < lo)
                lo = m->segments[k].vaddr, off = m->segments[k].offset;
            if (m->segments[k].vaddr + m->segments[k].memsz > hi)
                hi = m->segments[k].vaddr + m->segments[k].memsz;
        }
        if (lo > hi)
            lo = hi = 0;
        /* Escaped as the frames' strings are (ana_xsym_stack). */
        ana_text_escape(path, sizeof(path), m->path ? m->path : "", m->path ? m->path_len : 0);
        for (uint32_t k = 0; k < m->build_id_len && k < FMT_MAX_BUILD_ID; k++)
            snprintf(build_id + 2 * k, 3, "%02x", m->build_id[k]);
        build_id[2 * (m->build_id_len < FMT_MAX_BUILD_ID ? m->build_id_len : FMT_MAX_BUILD_ID)] = 0;
        if ((rc = str(p, path, &fname)) || (rc = str(p, build_id, &bid)))
            break;
        pb_uint(&p->body, MAPPING_ID, i + 1);
        pb_uint(&p->body, MAPPING_START, m->base + lo);
        pb_uint(&p->body, MAPPING_LIMIT, m->base + hi);
        pb_uint(&p->body, MAPPING_OFFSET, off);
        pb_uint(&p->body, MAPPING_FILENAME, fname);
        pb_uint(&p->body, MAPPING_BUILD_ID, bid);
        /* Names are in the profile already: pprof must not symbolize. */
        pb_uint(&p->body, MAPPING_HAS_FUNCTIONS, 1);
        pb_uint(&p->body, MAPPING_HAS_FILENAMES, 1);
        pb_uint(&p->body, MAPPING_HAS_LINE_NUMBERS, 1);
        pb_uint(&p->body, MAPPING_HAS_INLINE_FRAMES, 1);
        rc = emit(p, PROFILE_MAPPING);
    }
    return rc;
}

static int function_id(struct pprof *p, const struct ana_sym_frame *f, uint32_t *id)
{
    char buf[64];
    uint32_t name, file;
    int rc;

    if ((rc = str(p, ana_xsym_name(f, buf, sizeof(buf)), &name)) ||
        (rc = str(p, f->file ? f->file : "", &file)))
        return rc;
    uint64_t key = ((uint64_t)name << 32 | file) + 1;
    if (ana_xmap_get(&p->functions, key, id))
        return 0;
    *id = ++p->nr_functions;
    if ((rc = ana_xmap_put(&p->functions, key, *id)))
        return rc;
    pb_uint(&p->body, FUNCTION_ID, *id);
    pb_uint(&p->body, FUNCTION_NAME, name);
    pb_uint(&p->body, FUNCTION_SYSTEM_NAME, name);
    pb_uint(&p->body, FUNCTION_FILENAME, file);
    return emit(p, PROFILE_FUNCTION);
}

/* The mapping of image's module whose segments hold addr, the latest
 * loaded if several did (fmt_reader_find_module), or 0. The image's
 * modules are listed when it is first asked: a tree's trace holds every
 * process's, and searching them all for each location took most of an
 * export's time. *rc: 0 or -ENOMEM. */
static uint32_t mapping_id(struct pprof *p, uint32_t image, uint64_t addr, int *rc)
{
    if (p->mods_image != image + 1) {
        p->nr_mods = 0;
        for (uint32_t i = 0; i < fmt_reader_nr_modules(p->r); i++) {
            if (fmt_reader_module(p->r, i)->image != image)
                continue;
            if (UTIL_ARRAY_RESERVE(p->mods, p->cap_mods, p->nr_mods + 1, 64)) {
                *rc = -ENOMEM;
                return 0;
            }
            p->mods[p->nr_mods++] = i;
        }
        p->mods_image = image + 1;
    }
    for (size_t k = p->nr_mods; k-- > 0;) {
        const struct fmt_module *m = &fmt_reader_module(p->r, p->mods[k])->m;
        for (uint32_t s = 0; s < m->nr_segments; s++) {
            uint64_t lo = m->base + m->segments[s].vaddr;
            if (addr >= lo && addr - lo < m->segments[s].memsz)
                return p->mods[k] + 1;
        }
    }
    return 0;
}

/* The location of lines[0..n) (one recorded address: inlined frames
 * first, the physical one last, as pprof's Location.line wants). */
static int location_id(struct pprof *p, uint32_t image, const struct ana_sym_line *lines,
                       uint32_t n, uint32_t *id)
{
    const struct ana_sym_frame *phys = lines[n - 1].frame;
    uint64_t key = ((uint64_t)image << 48 | (phys->addr & 0xffffffffffffull)) + 1;
    uint32_t fids[64];
    int rc;

    if (ana_xmap_get(&p->locations, key, id))
        return 0;
    if (n > 64)
        n = 64;
    for (uint32_t i = 0; i < n; i++)
        if ((rc = function_id(p, lines[i].frame, &fids[i])))
            return rc;
    *id = ++p->nr_locations;
    if ((rc = ana_xmap_put(&p->locations, key, *id)))
        return rc;
    struct pb line = {0};
    pb_uint(&p->body, LOCATION_ID, *id);
    uint32_t mapping = phys->module ? mapping_id(p, image, phys->addr, &rc) : 0;
    if (rc)
        return rc;
    if (mapping)
        pb_uint(&p->body, LOCATION_MAPPING_ID, mapping);
    pb_uint(&p->body, LOCATION_ADDRESS, phys->addr);
    for (uint32_t i = 0; i < n; i++) {
        line.len = 0;
        pb_uint(&line, LINE_FUNCTION_ID, fids[i]);
        pb_uint(&line, LINE_LINE, lines[i].frame->line);
        if (line.err) {
            p->body.err = line.err;
            break;
        }
        pb_bytes(&p->body, LOCATION_LINE, line.p, line.len);
    }
    free(line.p);
    return emit(p, PROFILE_LOCATION);
}

/* The label of a sample: the heap of a stack that allocated in one pool
 * of the program's own (heap = its name), or a leak class (leak_class =
 * its key; cls FMT_REACH_UNKNOWN: none). */
static int sample_label(struct pprof *p, uint32_t id, unsigned cls, struct pb *label)
{
    uint32_t h = p->by_stack.of ? p->by_stack.of[id] : 0;
    uint32_t key, val;
    int rc = 0;

    if (cls != FMT_REACH_UNKNOWN) {
        if ((rc = str(p, "leak_class", &key)) >= 0 && (rc = str(p, ana_reach_key(cls), &val)) >= 0)
            rc = 0;
    } else if (h && h != ANA_HEAPS_MIXED && p->heaps.v[h - 1].handle) {
        char name[300];
        const struct ana_heap *hp = &p->heaps.v[h - 1];
        if ((rc = str(p, "heap", &key)) >= 0 &&
            (rc = str(p, ana_heap_name(p->r, hp->image, hp->handle, name, sizeof(name)), &val)) >=
                0)
            rc = 0;
    } else {
        return 0;
    }
    if (rc)
        return rc;
    pb_uint(label, LABEL_KEY, key);
    pb_uint(label, LABEL_STR, val);
    return label->err;
}

/* One sample of stack id (its location ids in ids): values v, label as
 * sample_label(). */
static int sample_one(struct pprof *p, uint32_t id, const struct pb *ids, const uint64_t v[4],
                      unsigned cls)
{
    struct pb vals = {0}, label = {0};
    int rc;

    for (int i = 0; i < 4; i++)
        pb_varint(&vals, v[i]);
    if (!(rc = vals.err) && !(rc = sample_label(p, id, cls, &label))) {
        /* Packed repeated fields. An empty stack has no location_id field. */
        if (ids->len)
            pb_bytes(&p->body, SAMPLE_LOCATION_ID, ids->p, ids->len);
        pb_bytes(&p->body, SAMPLE_VALUE, vals.p, vals.len);
        if (label.len)
            pb_bytes(&p->body, SAMPLE_LABEL, label.p, label.len);
        rc = emit(p, PROFILE_SAMPLE);
    }
    free(vals.p);
    free(label.p);
    return rc;
}

/* Stack id's location ids into ids (packed), leaf first: one per recorded
 * address. The stack must still be readable (fmt_reader_stack). */
static int stack_ids(struct pprof *p, uint32_t id, struct pb *ids)
{
    const struct ana_sym_stack *st;
    uint32_t image;
    int rc;

    if ((rc = ana_xsym_stack(p->sym, id, &st, &image)))
        return rc;
    for (uint32_t i = 0; i < st->nr_lines && !rc;) {
        uint32_t j = i, loc = 0;
        while (j < st->nr_lines && st->lines[j].index == st->lines[i].index)
            j++;
        if ((rc = location_id(p, image, &st->lines[i], j - i, &loc)))
            break;
        pb_varint(ids, loc);
        i = j;
    }
    return rc ? rc : ids->err;
}

/* Stack id's samples (values v, as struct xsample's, each at least 0). */
static int sample(struct pprof *p, uint32_t id, const int64_t v_in[4])
{
    struct pb ids = {0};
    int rc = stack_ids(p, id, &ids);

    /* The classed blocks apart: the stack's own sample keeps the rest. */
    uint64_t v[4];
    for (int i = 0; i < 4; i++)
        v[i] = v_in[i] > 0 ? (uint64_t)v_in[i] : 0;
    const struct ana_reach_sum *cs = p->reach ? &p->reach[id] : NULL;
    for (unsigned c = 1; cs && c < FMT_NR_REACH; c++) {
        v[2] -= cs->blocks[c];
        v[3] -= cs->bytes[c];
    }
    if (!rc && (v[0] || v[2] || !cs))
        rc = sample_one(p, id, &ids, v, FMT_REACH_UNKNOWN);
    for (unsigned k = 0; cs && k < 4 && !rc; k++) {
        unsigned c = ana_reach_order[k];
        uint64_t w[4] = {0, 0, cs->blocks[c], cs->bytes[c]};
        if (w[2])
            rc = sample_one(p, id, &ids, w, c);
    }
    free(ids.p);
    return rc;
}

/* A block live at the end: its class added to its stack's. */
static int add_class(void *arg, const struct fmt_event *ev)
{
    struct pprof *p = arg;
    unsigned c = ana_reach_class_of(p->r, ev->image, ev->serial, UINT64_MAX);

    if (c != FMT_REACH_UNKNOWN && ev->stack <= p->m->nr_stacks) {
        p->reach[ev->stack].bytes[c] += ev->size;
        p->reach[ev->stack].blocks[c]++;
    }
    return 0;
}

static int live_step(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    struct pprof *p = arg;
    uint32_t kind;

    return st->ends || st->starts ? ana_xlive_step(&p->live, ev, st, &kind) : 0;
}

/* The comment of a window's profile: its bounds from the trace's start,
 * and what its values are. 0 or -ENOMEM; *index its string. */
static int window_comment(struct pprof *p, uint32_t *index)
{
    char t0[32], t1[32], text[256];
    int rc;

    snprintf(text, sizeof(text),
             "memscribe: the window %s to %s of the trace: alloc_* allocated inside it, "
             "inuse_* the change of the heap in use over it (a delta)",
             ana_time_format(p->win.t0_ns, t0, sizeof(t0)),
             ana_time_format(p->win.t1_ns, t1, sizeof(t1)));
    return (rc = str(p, text, index)) < 0 ? rc : 0;
}

/* What comes before the samples: the sample types, mappings, comments,
 * time, and the duration (NULL: written after the samples, which a
 * profile allows: it is a plain field, the last one read wins). */
static int header(struct ana_export_job *job, const uint64_t *duration_ns)
{
    struct pprof *p = job->state;
    struct ana_xout *out = job->out;
    uint32_t idx, space, comment = 0;
    uint64_t rate = fmt_reader_sample_bytes(p->r);
    char label[ANA_SAMPLE_LABEL_SIZE];
    int rc = 0;

    if (!(p->sym = ana_xjob_sym(job, &rc)))
        return rc;
    /* string_table[0] must be "". */
    if ((rc = str(p, "", &idx)) < 0)
        return rc;
    if ((rc = value_type(p, PROFILE_SAMPLE_TYPE, "alloc_objects", "count")) ||
        (rc = value_type(p, PROFILE_SAMPLE_TYPE, "alloc_space", "bytes")) ||
        (rc = value_type(p, PROFILE_SAMPLE_TYPE, "inuse_objects", "count")) ||
        (rc = value_type(p, PROFILE_SAMPLE_TYPE, "inuse_space", "bytes")) ||
        (rc = value_type(p, PROFILE_PERIOD_TYPE, "space", "bytes")) ||
        (rc = str(p, job->o->pprof_default ? job->o->pprof_default : "inuse_space", &space)) < 0 ||
        (rc = mappings(p)))
        return rc;
    /* A sampled trace: a comment says its values are estimates (pprof
     * -raw, go tool pprof -comments), and the period is the rate, as Go's
     * heap profiles give theirs (values already scaled). */
    if (rate && (rc = str(p, ana_sample_label(label, sizeof(label), rate), &comment)) < 0)
        return rc;
    const struct fmt_trace_info *info = fmt_reader_info(p->r);
    /* An aggregated trace: a comment says so (its values are exact). */
    uint32_t agg_comment = 0;
    char agg[ANA_AGGREGATE_NOTE_SIZE];
    if (*ana_aggregate_label(agg, sizeof(agg), info) && (rc = str(p, agg, &agg_comment)) < 0)
        return rc;
    /* A window: a comment says what its values are, and its time is its
     * start's (pprof -raw prints both). */
    uint32_t win_comment = 0;
    if (p->win_on && (rc = window_comment(p, &win_comment)) < 0)
        return rc;
    pb_uint(&p->body, PROFILE_TIME_NANOS, info->start_realtime_ns + (p->win_on ? p->win.t0_ns : 0));
    if (duration_ns)
        pb_uint(&p->body, PROFILE_DURATION_NANOS, *duration_ns);
    pb_uint(&p->body, PROFILE_PERIOD, rate ? rate : 1);
    if (rate)
        pb_uint(&p->body, PROFILE_COMMENT, comment);
    if (agg_comment)
        pb_uint(&p->body, PROFILE_COMMENT, agg_comment);
    if (win_comment)
        pb_uint(&p->body, PROFILE_COMMENT, win_comment);
    pb_uint(&p->body, PROFILE_DEFAULT_SAMPLE_TYPE, space);
    /* Plain varint fields: write the body as it is, not length-delimited. */
    if ((rc = p->body.err ? p->body.err : ana_xout_write(out, p->body.p, p->body.len)))
        return rc;
    p->body.len = 0;
    return 0;
}

/* After the last pass: the profile, from the export's model. */
static int write_pprof(struct ana_export_job *job)
{
    struct pprof *p = job->state;
    const struct ana_xmodel *m = p->m;
    int rc;

    if ((rc = header(job, &m->end_ts_ns)))
        return rc;
    if (ana_reach_present(p->r)) {
        if (!(p->reach = calloc((size_t)m->nr_stacks + 1, sizeof(*p->reach))))
            return -ENOMEM;
        if ((rc = ana_xlive_each(&p->live, add_class, p)))
            return rc;
    }
    for (uint32_t id = 0; id <= m->nr_stacks && !rc; id++) {
        const struct ana_xstack *x = &m->stacks[id];
        /* Each at most INT64_MAX: counts and sizes of one trace. */
        const int64_t v[4] = {(int64_t)x->nr_allocs, (int64_t)x->alloc_bytes,
                              (int64_t)x->live_blocks, (int64_t)x->live_bytes};
        if (v[0] || v[2])
            rc = sample(p, id, v);
    }
    return rc;
}

/* ---- A window's delta. */

/* After the pass: one sample per key of the window (a stack of an image;
 * the keys of one stack add up in pprof), values signed. */
static int write_window(struct ana_export_job *job)
{
    struct pprof *p = job->state;
    const struct ana_window *w = &p->win;
    struct ana_window_key *keys = NULL;
    uint64_t duration = w->t1_ns - w->t0_ns;
    long n = ana_window_keys(w, &keys);
    int rc = n < 0 ? (int)n : header(job, &duration);

    for (long i = 0; i < n && !rc; i++) {
        const struct ana_wpa *c = &keys[i].c;
        uint32_t id = keys[i].key <= p->nr_stacks ? (uint32_t)keys[i].key : 0;
        /* int64 values as protobuf writes them: two's complement varints */
        const uint64_t v[4] = {
            c->nr[ANA_AIFI] + c->nr[ANA_AIFO], c->bytes[ANA_AIFI] + c->bytes[ANA_AIFO],
            c->nr[ANA_AIFO] - c->nr[ANA_AOFI], c->bytes[ANA_AIFO] - c->bytes[ANA_AOFI]};
        struct pb ids = {0};

        if (!v[0] && !v[2] && !v[3])
            continue;
        if (!(rc = stack_ids(p, id, &ids)))
            rc = sample_one(p, id, &ids, v, FMT_REACH_UNKNOWN);
        free(ids.p);
    }
    free(keys);
    return rc;
}

/* ---- Written at each image's end. */

/* One of the image's sites into its samples (p->img), or, of no stack,
 * into p->none. */
static int add_site(void *arg, uint32_t stack, const struct ana_site *s)
{
    struct pprof *p = arg;
    const int64_t v[4] = {(int64_t)s->nr_allocs, (int64_t)s->alloc_bytes, s->live_blocks,
                          s->live_bytes};

    if (!stack || stack > p->nr_stacks) {
        for (int i = 0; i < 4; i++)
            p->none[i] += v[i];
        return 0;
    }
    if (!v[0] && v[2] <= 0)
        return 0; /* as the whole model's: nothing allocated, nothing live */
    if (UTIL_ARRAY_RESERVE(p->img, p->cap_img, p->nr_img + 1, 256))
        return -ENOMEM;
    p->img[p->nr_img++] = (struct xsample){stack, {v[0], v[1], v[2], v[3]}};
    return 0;
}

static int by_stack(const void *a, const void *b)
{
    uint32_t x = ((const struct xsample *)a)->stack, y = ((const struct xsample *)b)->stack;

    return (x > y) - (x < y);
}

/* The model's retire callback: image's samples, in stack order, while its
 * stacks are readable; then its locations go (their keys hold the image),
 * and an image that ended is done. */
static int retire(void *arg, const struct ana_model *m, uint32_t image)
{
    struct ana_export_job *job = arg;
    struct pprof *p = job->state;
    const struct ana_scope *sc = ana_model_image(m, image);
    int rc;

    p->nr_img = 0;
    if ((rc = ana_model_each_site_of(m, image, add_site, p)))
        return rc;
    qsort(p->img, p->nr_img, sizeof(*p->img), by_stack);
    for (size_t i = 0; i < p->nr_img && !rc; i++)
        rc = sample(p, p->img[i].stack, p->img[i].v);
    ana_map_release(&p->locations);
    if (rc || !sc->ended)
        return rc; /* still running at the end: nothing more to read */
    return job->o->image_done(job->o->image_arg, image, sc->end_ns);
}

/* After the pass (the model handed every image over): the samples of no
 * stack, and the duration: the last selected event's time, as the export's
 * model's end_ts_ns. */
static int write_stream(struct ana_export_job *job)
{
    struct pprof *p = job->state;
    int rc = 0;

    if (p->none[0] || p->none[2] > 0)
        rc = sample(p, 0, p->none);
    if (rc)
        return rc;
    pb_uint(&p->body, PROFILE_DURATION_NANOS, ana_model_total(p->model)->last_ns);
    if ((rc = p->body.err ? p->body.err : ana_xout_write(job->out, p->body.p, p->body.len)))
        return rc;
    p->body.len = 0;
    return 0;
}

bool ana_export_pprof_type_ok(const char *name)
{
    static const char *const types[] = {"alloc_objects", "alloc_space", "inuse_objects",
                                        "inuse_space"};

    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (!strcmp(name, types[i]))
            return true;
    return false;
}

bool ana_export_pprof_streams(const struct fmt_reader *r)
{
    return !ana_reach_present(r);
}

/* The header now, the model that hands each image over as it ends. */
static int start_stream(struct ana_export_job *job)
{
    struct pprof *p = job->state;
    int rc = header(job, NULL);

    return rc ? rc : ana_xjob_retiring_model(job, retire, &p->model);
}

static void release_pprof(struct ana_export_job *job)
{
    struct pprof *p = job->state;

    ana_model_destroy(p->model);
    if (p->win_on)
        ana_window_release(&p->win);
    free(p->img);
    free(p->mods);
    free(p->by_stack.of);
    free(p->reach);
    ana_xlive_release(&p->live);
    ana_heaps_release(&p->heaps);
    free(p->msg.p);
    free(p->body.p);
    ana_map_release(&p->locations);
    ana_map_release(&p->functions);
    ana_strtab_release(&p->strs);
}

int ana_export_pprof(struct ana_export_job *job)
{
    static const struct ana_xjob_hooks hooks = {.write = write_pprof, .release = release_pprof};
    static const struct ana_xjob_hooks stream_hooks = {.write = write_stream,
                                                       .release = release_pprof};
    static const struct ana_xjob_hooks window_hooks = {.write = write_window,
                                                       .release = release_pprof};
    /* image_done is set when the output streams (ana_export_streams). */
    bool stream = job->o->image_done != NULL, window = job->o->window;
    struct pprof *p = ana_xjob_state(job, sizeof(*p),
                                     window   ? &window_hooks
                                     : stream ? &stream_hooks
                                              : &hooks);

    if (!p)
        return -ENOMEM;
    static const struct ana_heap_replay_ops live_ops = {.step = live_step};
    struct fmt_trace_counts c;
    int rc;

    p->r = job->r;
    p->out = job->out;
    fmt_reader_counts(job->r, &c);
    p->nr_stacks = c.nr_stacks;
    ana_heaps_init(&p->heaps, job->r);
    ana_xlive_init(&p->live);
    /* The heap of each stack, the samples' label (written at the end or
     * at each image's). */
    if (ana_heaps_present(job->r) &&
        (rc = ana_heaps_by_stack_subscribe(&p->by_stack, job->pass[0], &p->heaps, p->nr_stacks)))
        return rc;
    if (window && stream)
        return -EINVAL; /* a window's keys are the whole trace's */
    if (window) {
        rc = ana_window_subscribe(&p->win, job->pass[0], job->r, job->o->window_t0_ns,
                                  job->o->window_t1_ns, ANA_WINDOW_BY_STACK);
        p->win_on = !rc;
        return rc;
    }
    if (stream)
        return start_stream(job);
    if (!(p->m = ana_xjob_model(job)))
        return -ENOMEM;
    if (ana_reach_present(job->r) && (rc = ana_xjob_subscribe(job, 0, &live_ops, p)))
        return rc;
    return 0;
}
