/* SPDX-License-Identifier: MIT */
/* DHAT's JSON, shared by its two makers: ana_export_dhat.c writes it from
 * the export's model of the whole trace, ana_export_dhat_fold.c folds a
 * process tree's program points as its processes end. Both write the
 * same file: program points in the order of their lowest stack id, frames
 * in the order the program points first name them. */
#ifndef ANA_EXPORT_DHAT_H
#define ANA_EXPORT_DHAT_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/core/ana_strtab.h"
#include "analysis/export/ana_export_internal.h"

/* A program point's numbers. */
struct dhat_pp {
    uint64_t tb, tbk;     /* total bytes, blocks */
    uint64_t tl_ns;       /* total lifetime of ended blocks */
    uint64_t live_ts_sum; /* start times of live blocks */
    uint64_t live, livebk;
    uint64_t mb, mbk; /* own maximum */
    uint64_t gb, gbk; /* at the global peak */
};

/* The block ev ends leaves p: its lifetime counts. */
static inline void ana_xdhat_end(struct dhat_pp *p, const struct fmt_event *ev)
{
    uint64_t n = fmt_event_ref_count(ev); /* an estimate in a sampled trace */

    p->live -= ev->ref_size;
    p->livebk -= n;
    p->live_ts_sum -= n * ev->ref_ts_ns;
    p->tl_ns += n * (ev->ts_ns - ev->ref_ts_ns);
}

/* The block ev starts joins p. */
static inline void ana_xdhat_start(struct dhat_pp *p, const struct fmt_event *ev)
{
    uint64_t n = fmt_event_count(ev);

    p->tb += ev->size;
    p->tbk += n;
    p->live += ev->size;
    p->livebk += n;
    p->live_ts_sum += n * ev->ts_ns;
    if (p->live > p->mb)
        p->mb = p->live, p->mbk = p->livebk;
}

/* Stack id's frames as labels interned in frames (DHAT's ftbl, whose
 * first string, "[root]", the caller interns), leaf first, into (*list)[0..*n) (*cap grown as
 * needed; an empty stack is one frame, "[unknown stack]"). Returns 0 or
 * -errno. */
int ana_xdhat_frames(struct ana_xsym *sym, struct ana_strtab *frames, uint32_t stack,
                     uint32_t **list, uint32_t *n, uint32_t *cap);

/* *text: list's n numbers joined by commas, as a program point's "fs"
 * holds them (*cap grown as needed). 0 or -ENOMEM. */
int ana_xdhat_fs(const uint32_t *list, uint32_t n, char **text, size_t *cap);

/* The file up to its program points: the command, the end (te) and the
 * peak's time (tg). Returns 0 or -errno. */
int ana_xdhat_head(struct ana_xout *o, struct fmt_reader *r, uint64_t end_ns, uint64_t peak_ns);
/* Program point i (0: the first) with its frames' indexes fs ("i,j,k");
 * blocks live at end_ns count as living until then. */
int ana_xdhat_pp(struct ana_xout *o, uint32_t i, const struct dhat_pp *p, uint64_t end_ns,
                 const char *fs);
/* The frames' table, the file's end: frames->strs[order[i]] for i < nr
 * (order NULL: every frame in its own order). Returns 0 or -errno. */
int ana_xdhat_ftbl(struct ana_xout *o, const struct ana_strtab *frames, const uint32_t *order,
                   uint32_t nr);

/* A process tree's DHAT file, each process's stacks let go at its exit
 * (ana_export_options.image_done; ana_export_dhat_fold.c). 0 or -errno. */
int ana_export_dhat_fold(struct ana_export_job *job);

#endif
