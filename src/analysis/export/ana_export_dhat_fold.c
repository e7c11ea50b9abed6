/* SPDX-License-Identifier: MIT */
/* DHAT on a process tree (ana_export_options.image_done), in one pass and
 * without a model: memory follows the processes running, not the tree's
 * program points (2.6 M on a build of 330 files: the file's).
 *
 * A stack gets its program point the first time a running process uses it:
 * its frames' labels (ana_xdhat_frames) are looked up among every program
 * point's by a hash, each candidate checked frame by frame, and a new
 * program point is made for a new list. The program points that running
 * processes use are in memory; when the last process using one exits, it
 * goes to a scratch file (ana_xscratch_open: one record per program point,
 * its frames in a second file), read back if a later process uses it
 * again. What stays in memory of the others is their index: a slot of 4
 * bytes by their frames' hash (load under 3/4) and 4 bytes of that hash, to
 * tell the candidates.
 *
 * The numbers are those of the whole model's file (ana_export_dhat.c): the
 * same blocks, steps and sums, and the peak's numbers (gb, gbk) taken
 * lazily: a program point's live bytes are saved, before they change, at
 * the first change after each new peak of the tree (ana_step.peak), so at
 * the end a program point that changed since the last peak has the bytes
 * saved then, and one that did not, its live bytes. The file's order is the
 * whole model's: program points by their lowest stack id, frames numbered
 * as the program points first name them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/export/ana_export_dhat.h"
#include "analysis/export/ana_export_internal.h"
#include "util/util_array.h"
#include "util/util_sort.h"

/* A program point as the records' scratch file keeps it, at id * size:
 * its numbers when the last process using it exited. */
struct pp_rec {
    struct dhat_pp n;
    uint64_t gen;      /* the peak generation n.gb and n.gbk are of (touch) */
    uint64_t list_pos; /* its frames: nr_frames labels in the lists' file */
    uint32_t nr_frames;
    uint32_t stack; /* the lowest stack id that allocated in it: its place */
};

/* A program point in memory: one that a running process uses. */
struct pp_mem {
    struct pp_rec rec;
    uint32_t id;
    uint32_t refs; /* (image, stack) pairs of running processes mapped to it */
    uint32_t *frames;
};

/* The index is grown past this load (in quarters). */
#define INDEX_LOAD_QUARTERS 3
struct dfold {
    struct fmt_reader *r;
    struct ana_xout *out;
    struct ana_xsym *sym;
    const struct ana_export_options *o;
    uint32_t nr_stacks;
    struct ana_strtab frames; /* ftbl's labels, numbered as met */
    struct ana_map running;   /* (image, stack) -> its program point's slot in mem */
    struct pp_mem *mem;       /* slots; refs 0: free */
    uint32_t nr_mem, cap_mem;
    uint32_t *free_slots;
    uint32_t nr_free, cap_free;
    struct ana_map mem_of; /* id + 1 -> slot */
    /* Every program point, at the slot its frames' hash's upper half
     * names (linear probing): (fingerprint << id_bits | id + 1), the
     * fingerprint the lowest 32 - id_bits bits of the hash; 0 empty. Grown,
     * it is made again from the lists' file. */
    uint32_t *index;
    size_t index_mask;
    unsigned id_bits;
    uint32_t nr_pps;
    /* The scratch files: the records by id, and the lists, each its
     * length then its labels, in the order of the ids. */
    int rec_fd;
    struct ana_xscratch_out lists;
    /* The peaks of the tree so far (each a generation), the last one's
     * time, the last selected event's. */
    uint64_t gen, peak_ns, end_ns;
    uint32_t *list; /* a stack's labels */
    uint32_t nr_list, cap_list;
    uint64_t *keys; /* scratch: an image's keys in running */
    size_t cap_keys;
};

static uint64_t list_hash(const uint32_t *l, uint32_t n)
{
    uint64_t h = n;

    for (uint32_t i = 0; i < n; i++)
        h = ana_map_mix(h ^ l[i]) + i;
    return ana_map_mix(h);
}

static uint32_t index_fp(const struct dfold *f, uint64_t h)
{
    return (uint32_t)h & (uint32_t)((1ull << (32 - f->id_bits)) - 1);
}

static void index_put(struct dfold *f, uint64_t h, uint32_t id)
{
    size_t i = (size_t)(h >> 32) & f->index_mask;

    while (f->index[i])
        i = (i + 1) & f->index_mask;
    f->index[i] = index_fp(f, h) << f->id_bits | (id + 1);
}

/* The index made again for cap slots, from the lists' file. */
static int index_make(struct dfold *f, size_t cap)
{
    struct ana_xscratch_win w = {.fd = f->lists.fd};
    uint64_t pos = 0;
    const void *p;
    int rc;

    free(f->index);
    if (!(f->index = calloc(cap, sizeof(*f->index))))
        return -ENOMEM;
    f->index_mask = cap - 1;
    for (f->id_bits = 0; (1ull << f->id_bits) < cap; f->id_bits++)
        ;
    if (f->id_bits > 31) /* no bit left for the fingerprint */
        return -EOVERFLOW;
    if ((rc = ana_xscratch_flush(&f->lists)))
        return rc;
    w.len = f->lists.len;
    for (uint32_t id = 0, n; id < f->nr_pps; id++, pos += (uint64_t)n * sizeof(n)) {
        if ((rc = ana_xscratch_get(&w, pos, sizeof(n), &p)))
            break;
        memcpy(&n, p, sizeof(n));
        pos += sizeof(n);
        if ((rc = ana_xscratch_get(&w, pos, (size_t)n * sizeof(n), &p)))
            break;
        index_put(f, list_hash(p, n), id);
    }
    free(w.buf);
    return rc;
}

/* Room for one more program point in the index. 0 or -errno. */
static int index_room(struct dfold *f)
{
    size_t cap = f->index ? f->index_mask + 1 : 0;

    if ((size_t)f->nr_pps + 1 <= cap / 4 * INDEX_LOAD_QUARTERS)
        return 0;
    return index_make(f, cap ? cap * 2 : 4096);
}

/* Append f->list, after its length, to the lists' file; *pos: where its
 * labels are. */
static int list_append(struct dfold *f, uint64_t *pos)
{
    uint32_t n = f->nr_list;
    int rc = ana_xscratch_append(&f->lists, &n, sizeof(n));

    *pos = ana_xscratch_end(&f->lists);
    return rc ? rc : ana_xscratch_append(&f->lists, f->list, (size_t)n * sizeof(n));
}

/* A free slot in mem for program point id, its record rec and its frames
 * (taken over). */
static int mem_add(struct dfold *f, uint32_t id, const struct pp_rec *rec, uint32_t *frames,
                   uint32_t *slot)
{
    uint32_t *at;

    if (f->nr_free)
        *slot = f->free_slots[--f->nr_free];
    else if (UTIL_ARRAY_RESERVE(f->mem, f->cap_mem, (size_t)f->nr_mem + 1, 256))
        return -ENOMEM;
    else
        *slot = f->nr_mem++;
    f->mem[*slot] = (struct pp_mem){.rec = *rec, .id = id, .frames = frames};
    if (!(at = ana_map_put(&f->mem_of, (uint64_t)id + 1, NULL)))
        return -ENOMEM;
    *at = *slot;
    return 0;
}

/* Whether program point id's frames are f->list (1, *slot its slot in
 * mem, read back from the scratch files if it was not there), or not (0).
 * Returns 1, 0 or -errno. */
static int pp_is(struct dfold *f, uint32_t id, uint32_t *slot)
{
    const uint32_t *s = ana_map_get(&f->mem_of, (uint64_t)id + 1);
    size_t size = (size_t)f->nr_list * sizeof(*f->list);
    struct pp_rec rec;
    uint32_t *frames;
    int rc;

    if (s) {
        *slot = *s;
        return f->mem[*s].rec.nr_frames == f->nr_list && !memcmp(f->mem[*s].frames, f->list, size);
    }
    if ((rc = ana_xscratch_read(f->rec_fd, (uint64_t)id * sizeof(rec), &rec, sizeof(rec))))
        return rc;
    if (rec.nr_frames != f->nr_list)
        return 0;
    if (!(frames = malloc(size ? size : 1)))
        return -ENOMEM;
    if ((rc = ana_xscratch_read_back(&f->lists, rec.list_pos, frames, size)) ||
        memcmp(frames, f->list, size)) {
        free(frames);
        return rc;
    }
    return (rc = mem_add(f, id, &rec, frames, slot)) ? rc : 1;
}

/* The program point of f->list (a stack's labels) in mem: found, or made.
 * stack: the stack. */
static int pp_find(struct dfold *f, uint32_t stack, uint32_t *slot)
{
    uint64_t h = list_hash(f->list, f->nr_list);
    uint32_t fp, id_mask, *frames;
    int rc;

    if ((rc = index_room(f)))
        return rc;
    fp = index_fp(f, h);
    id_mask = (uint32_t)((1ull << f->id_bits) - 1);
    for (size_t i = (size_t)(h >> 32) & f->index_mask; f->index[i]; i = (i + 1) & f->index_mask)
        if (f->index[i] >> f->id_bits == fp && (rc = pp_is(f, (f->index[i] & id_mask) - 1, slot)))
            return rc < 0 ? rc : 0;
    struct pp_rec rec = {.gen = f->gen, .nr_frames = f->nr_list, .stack = stack};
    if ((rc = list_append(f, &rec.list_pos)))
        return rc;
    if (!(frames = malloc((f->nr_list ? f->nr_list : 1) * sizeof(*frames))))
        return -ENOMEM;
    memcpy(frames, f->list, f->nr_list * sizeof(*frames));
    index_put(f, h, f->nr_pps);
    if ((rc = mem_add(f, f->nr_pps++, &rec, frames, slot)))
        free(frames);
    return rc;
}

/* The slot in mem of the program point of image's stack. */
static int resolve(struct dfold *f, uint32_t image, uint32_t stack, uint32_t *slot)
{
    uint64_t key;
    uint32_t *at;
    int rc;

    if (stack > f->nr_stacks)
        stack = 0; /* a corrupt id counts as no stack, as the whole model's */
    key = ((uint64_t)image << 32 | stack) + 1;
    if ((at = ana_map_get(&f->running, key))) {
        *slot = *at;
        return 0;
    }
    if ((rc = ana_xdhat_frames(f->sym, &f->frames, stack, &f->list, &f->nr_list, &f->cap_list)) ||
        (rc = pp_find(f, stack, slot)))
        return rc;
    struct pp_mem *p = &f->mem[*slot];
    p->refs++;
    if (stack < p->rec.stack)
        p->rec.stack = stack;
    if (!(at = ana_map_put(&f->running, key, NULL)))
        return -ENOMEM;
    *at = *slot;
    return 0;
}

/* Program point in slot, no longer used by a (image, stack): out of memory
 * to the scratch file when no running process uses it. */
static int release(struct dfold *f, uint32_t slot)
{
    struct pp_mem *p = &f->mem[slot];

    if (--p->refs)
        return 0;
    int rc =
        ana_xscratch_write(f->rec_fd, (uint64_t)p->id * sizeof(p->rec), &p->rec, sizeof(p->rec));
    ana_map_del(&f->mem_of, (uint64_t)p->id + 1);
    free(p->frames);
    p->frames = NULL;
    if (!rc && UTIL_ARRAY_RESERVE(f->free_slots, f->cap_free, (size_t)f->nr_free + 1, 256))
        rc = -ENOMEM;
    if (!rc)
        f->free_slots[f->nr_free++] = slot;
    return rc;
}

/* Image exited: its stacks' program points are released, its stacks let
 * go (an event of it that comes later finds them again, as long as the
 * reader keeps them). */
static int image_ends(struct dfold *f, uint32_t image, uint64_t end_ns)
{
    size_t n = 0;
    int rc = 0;

    for (size_t i = 0; i < f->running.cap; i++) {
        uint64_t key = ana_map_slot_key(&f->running, i);
        if (!key || (uint32_t)((key - 1) >> 32) != image)
            continue;
        if (UTIL_ARRAY_RESERVE(f->keys, f->cap_keys, n + 1, 256))
            return -ENOMEM;
        f->keys[n++] = key;
    }
    for (size_t i = 0; i < n && !rc; i++) {
        uint32_t slot = *(const uint32_t *)ana_map_get(&f->running, f->keys[i]);
        ana_map_del(&f->running, f->keys[i]);
        rc = release(f, slot);
    }
    return rc ? rc : f->o->image_done(f->o->image_arg, image, end_ns);
}

/* Before program point p changes: its live bytes saved if the tree
 * reached a peak since it last changed (they are its bytes at that peak). */
static void touch(struct dfold *f, struct pp_rec *p)
{
    if (p->gen == f->gen)
        return;
    p->n.gb = p->n.live;
    p->n.gbk = p->n.livebk;
    p->gen = f->gen;
}

/* Each selected step: the blocks it ends and starts, in their program
 * points; the peaks; the images' exits. */
static int on_step(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    struct dfold *f = arg;
    uint32_t slot;
    int rc;

    if (!st->selected)
        return 0;
    f->end_ns = ev->ts_ns;
    if (ev->kind == FMT_EV_PROCESS_EXIT)
        return image_ends(f, ev->image, ev->ts_ns);
    if (st->ends) {
        if ((rc = resolve(f, ev->image, ev->ref_stack, &slot)))
            return rc;
        touch(f, &f->mem[slot].rec);
        ana_xdhat_end(&f->mem[slot].rec.n, ev);
    }
    if (st->starts) {
        if ((rc = resolve(f, ev->image, ev->stack, &slot)))
            return rc;
        touch(f, &f->mem[slot].rec);
        ana_xdhat_start(&f->mem[slot].rec.n, ev);
    }
    if (st->peak) {
        f->gen++;
        f->peak_ns = ev->ts_ns;
    }
    return 0;
}

/* ---- The file, after the pass. */

/* Every program point in memory to the scratch file, and what found them
 * freed. */
static int put_away(struct dfold *f)
{
    int rc = 0;

    for (uint32_t s = 0; s < f->nr_mem; s++) {
        struct pp_mem *p = &f->mem[s];
        if (p->refs && !rc)
            rc = ana_xscratch_write(f->rec_fd, (uint64_t)p->id * sizeof(p->rec), &p->rec,
                                    sizeof(p->rec));
        free(p->frames);
    }
    free(f->mem);
    free(f->index);
    f->mem = NULL;
    f->index = NULL;
    f->nr_mem = 0;
    ana_map_release(&f->running);
    ana_map_release(&f->mem_of);
    return rc ? rc : ana_xscratch_flush(&f->lists);
}

static int by_u64(const void *a, const void *b, void *arg)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    (void)arg;
    return (x > y) - (x < y);
}

/* *order: the program points' ids by their lowest stack (stack << 32 |
 * id), read from the records' file (w), sorted in place: it is as large
 * as the index was. */
static int pp_order(struct dfold *f, struct ana_xscratch_win *w, uint64_t **order)
{
    const struct pp_rec *rec;
    int rc = 0;

    if (!(*order = malloc(((size_t)f->nr_pps + 1) * sizeof(**order))))
        return -ENOMEM;
    for (uint32_t id = 0; id < f->nr_pps && !rc; id++)
        if (!(rc = ana_xscratch_get(w, (uint64_t)id * sizeof(*rec), sizeof(*rec),
                                    (const void **)&rec)))
            (*order)[id] = (uint64_t)rec->stack << 32 | id;
    if (!rc)
        util_sort_in_place(*order, f->nr_pps, sizeof(**order), by_u64, NULL);
    return rc;
}

/* The labels of f->list renumbered in the order they are first named
 * (new_of: by label, UINT32_MAX until named; old_of: by new number). */
static void renumber(struct dfold *f, uint32_t *new_of, uint32_t *old_of, uint32_t *nr_new)
{
    for (uint32_t i = 0; i < f->nr_list; i++) {
        uint32_t *l = &f->list[i];
        if (new_of[*l] == UINT32_MAX) {
            old_of[*nr_new] = *l;
            new_of[*l] = (*nr_new)++;
        }
        *l = new_of[*l];
    }
}

/* Program point id as the file shows it (its frames renumbered), its
 * record read through recs, its frames through lists. */
static int write_pp(struct dfold *f, struct ana_xscratch_win *recs, struct ana_xscratch_win *lists,
                    uint32_t i, uint32_t id, uint32_t *new_of, uint32_t *old_of, uint32_t *nr_new,
                    char **fs, size_t *cap_fs)
{
    const void *p;
    struct pp_rec rec;
    int rc;

    if ((rc = ana_xscratch_get(recs, (uint64_t)id * sizeof(rec), sizeof(rec), &p)))
        return rc;
    memcpy(&rec, p, sizeof(rec));
    if (UTIL_ARRAY_RESERVE(f->list, f->cap_list, (size_t)rec.nr_frames + 1, 64))
        return -ENOMEM;
    if ((rc = ana_xscratch_get(lists, rec.list_pos, (size_t)rec.nr_frames * sizeof(*f->list), &p)))
        return rc;
    memcpy(f->list, p, (size_t)rec.nr_frames * sizeof(*f->list));
    f->nr_list = rec.nr_frames;
    renumber(f, new_of, old_of, nr_new);
    if (rec.gen != f->gen) { /* no change since the last peak: its bytes then */
        rec.n.gb = rec.n.live;
        rec.n.gbk = rec.n.livebk;
    }
    if ((rc = ana_xdhat_fs(f->list, f->nr_list, fs, cap_fs)))
        return rc;
    return ana_xdhat_pp(f->out, i, &rec.n, f->end_ns, *fs);
}

/* After the pass: every program point to the scratch file, then the
 * file, the program points in order. */
static int write_fold(struct ana_export_job *job)
{
    struct dfold *f = job->state;
    struct ana_xscratch_win recs = {.fd = f->rec_fd,
                                    .len = (uint64_t)f->nr_pps * sizeof(struct pp_rec)};
    struct ana_xscratch_win lists = {.fd = f->lists.fd};
    uint64_t *order = NULL;
    uint32_t *new_of = malloc(((size_t)f->frames.nr + 1) * sizeof(*new_of));
    uint32_t *old_of = malloc(((size_t)f->frames.nr + 1) * sizeof(*old_of)), nr_new = 1;
    char *fs = NULL;
    size_t cap_fs = 0;
    int rc = new_of && old_of ? put_away(f) : -ENOMEM;

    lists.len = f->lists.len;
    if (!rc)
        rc = pp_order(f, &recs, &order);
    if (!rc) {
        memset(new_of, 0xff, (size_t)f->frames.nr * sizeof(*new_of));
        new_of[0] = old_of[0] = 0; /* "[root]" */
        rc = ana_xdhat_head(f->out, f->r, f->end_ns, f->peak_ns);
    }
    for (uint32_t i = 0; i < f->nr_pps && !rc; i++)
        rc = write_pp(f, &recs, &lists, i, (uint32_t)order[i], new_of, old_of, &nr_new, &fs,
                      &cap_fs);
    if (!rc)
        rc = ana_xdhat_ftbl(f->out, &f->frames, old_of, nr_new);
    free(order);
    free(new_of);
    free(old_of);
    free(fs);
    free(recs.buf);
    free(lists.buf);
    return rc;
}

static void release_fold(struct ana_export_job *job)
{
    struct dfold *f = job->state;

    for (uint32_t s = 0; s < f->nr_mem; s++)
        free(f->mem[s].frames);
    free(f->mem);
    free(f->free_slots);
    free(f->index);
    free(f->list);
    free(f->keys);
    ana_map_release(&f->running);
    ana_map_release(&f->mem_of);
    ana_strtab_release(&f->frames);
    if (f->rec_fd >= 0)
        close(f->rec_fd);
    if (f->lists.fd >= 0)
        close(f->lists.fd);
}

int ana_export_dhat_fold(struct ana_export_job *job)
{
    static const struct ana_heap_replay_ops ops = {.step = on_step};
    static const struct ana_xjob_hooks hooks = {.write = write_fold, .release = release_fold};
    struct dfold *f = ana_xjob_state(job, sizeof(*f), &hooks);
    struct fmt_trace_counts c;
    int rc = 0;

    if (!f)
        return -ENOMEM;
    f->r = job->r;
    f->out = job->out;
    f->o = job->o;
    f->rec_fd = f->lists.fd = -1;
    fmt_reader_counts(job->r, &c);
    f->nr_stacks = c.nr_stacks;
    ana_map_init(&f->running, sizeof(uint32_t));
    ana_map_init(&f->mem_of, sizeof(uint32_t));
    if ((rc = ana_strtab_intern(&f->frames, "[root]", &(uint32_t){0})) < 0)
        return rc;
    if ((f->rec_fd = ana_xscratch_open("dhat")) < 0 ||
        (f->lists.fd = ana_xscratch_open("dhat")) < 0)
        return f->rec_fd < 0 ? f->rec_fd : f->lists.fd;
    if (!(f->sym = ana_xjob_sym(job, &rc)))
        return rc;
    return ana_xjob_subscribe(job, 0, &ops, f);
}
