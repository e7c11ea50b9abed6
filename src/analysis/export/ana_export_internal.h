/* SPDX-License-Identifier: MIT */
/* What the exporters share: an output sink with optional compression, one
 * reading of heap events (which block an event starts and ends, and
 * whether the ended one was temporary), the per-stack model built from
 * it, and symbolized stacks. */
#ifndef ANA_EXPORT_INTERNAL_H
#define ANA_EXPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/core/ana_map.h"
#include "analysis/core/ana_sample.h"
#include "analysis/export/ana_export_api.h"
#include "analysis/model/ana_step.h"
#include "analysis/sym/ana_symbolize.h"
#include "memscribe/trace.h"

/* ---- Output sink: buffered writes to an fd, plain, gzip or zstd. The
 * first error sticks; every later call is a no-op returning it. */
struct ana_xout;

int ana_xout_open(struct ana_xout **out, int fd, enum ana_export_compress c);
int ana_xout_write(struct ana_xout *o, const void *p, size_t n);
__attribute__((format(printf, 2, 3))) int ana_xout_printf(struct ana_xout *o, const char *fmt, ...);
/* Write len bytes of s with JSON escaping (no quotes added), through the
 * one JSON escaper, ana_json_escape(). */
int ana_xout_json_strn(struct ana_xout *o, const char *s, size_t len);
/* Flush, end the compressed stream, free. Returns the first error. */
int ana_xout_close(struct ana_xout *o);

/* ---- One reading of heap events, shared by every exporter. */
struct ana_xstep {
    bool ends;      /* the event ends block ev->ref (ref_size, ref_stack, ...) */
    bool starts;    /* the event starts block ev->serial of ev->size bytes */
    bool temporary; /* the ended block is temporary: freed by the thread that
                       allocated it with no other allocation by that thread
                       in between (docs/architecture.md, Meanings) */
    uint64_t heap;  /* heap in use after it by the selected running processes */
};

/* The analysis core's reading of events (ana_step.h) with the export's
 * options: which processes it looks at and whom to tell of progress.
 * Start it as {.o = the options} (o may be NULL: every process, no
 * progress). */
struct ana_xtemp {
    const struct ana_export_options *o;
    struct ana_stepper step; /* set up at the first event */
    bool started;
    uint64_t nr_events; /* seen, for progress */
};

/* Classify ev. Returns 1 for a heap event of a selected process that ends
 * or starts a block, 0 for any other event, -ENOMEM. A realloc ends the
 * old block before it starts the new one. */
int ana_xstep_event(struct ana_xtemp *t, const struct fmt_event *ev, struct ana_xstep *st);
void ana_xtemp_release(struct ana_xtemp *t);

/* ---- The model: per-stack heap figures over the whole trace, taken from
 * the analysis core (ana_model.h) so that peak, leaked and temporary are
 * the numbers `memscribe report` prints. */
struct ana_xstack {
    uint64_t nr_allocs;   /* blocks started */
    uint64_t alloc_bytes; /* bytes requested */
    uint64_t nr_temporary;
    uint64_t live_blocks; /* at the end of the trace: leaked */
    uint64_t live_bytes;
    uint64_t peak_bytes; /* live at the peak instant (all images) */
};

struct ana_xmodel {
    uint32_t nr_stacks;        /* ids 0..nr_stacks; 0 = no stack */
    struct ana_xstack *stacks; /* nr_stacks + 1 entries */
    uint64_t nr_allocs;
    uint64_t alloc_bytes;
    uint64_t nr_temporary;
    uint64_t live_blocks; /* at the end */
    uint64_t live_bytes;
    uint64_t peak_bytes; /* maximum of heap in use, after an event */
    uint64_t peak_blocks;
    uint64_t peak_ts_ns;
    uint64_t peak_step; /* ordinal (from 1) of the heap event (ana_xstep_event
                           returns 1) whose step reached the peak; 0: none */
    uint64_t first_ts_ns;
    uint64_t end_ts_ns; /* last event's time */
};

/* One pass over r from its first chunk (r is left at the end). Returns 0
 * or -errno. */
int ana_xmodel_build(struct fmt_reader *r, const struct ana_export_options *o,
                     struct ana_xmodel *m);
void ana_xmodel_release(struct ana_xmodel *m);

/* The blocks still live at the end, from their allocations: fn for each
 * heap allocation of a selected process (o->filter) whose serial is in live
 * (a map of ana_export_map.h), in trace order, by a pass over r from its
 * first chunk. fn returns 0, or -errno to stop. Returns 0 or -errno. */
typedef int ana_xlive_fn(void *arg, const struct fmt_event *ev);
int ana_xlive_each(struct fmt_reader *r, const struct ana_export_options *o,
                   const struct ana_map *live, ana_xlive_fn *fn, void *arg);

/* ---- Symbolized stacks. */
struct ana_xsym {
    struct fmt_reader *r;
    const struct ana_export_options *o;
    struct ana_sym *sym;
    struct ana_sym_stack raw; /* as the symbolizer gives it */
    struct ana_sym_stack st;  /* raw with its strings escaped */
    struct ana_sym_frame *frames;
    uint32_t cap_frames;
    /* Each string the symbolizer gave (they live as long as it does), by
     * its address: itself when it needs no escaping, else its escaped copy,
     * made once and kept in owned until close. */
    struct ana_map escaped;
    char **owned;
    uint32_t nr_owned, cap_owned;
    uint64_t *addrs;
    uint32_t cap_addrs;
};

/* Create the symbolizer (o->sym) and give it every module of the trace. */
int ana_xsym_open(struct ana_xsym *x, struct fmt_reader *r, const struct ana_export_options *o);
/* Pass the symbolizer's notes to o->note, and free it. */
void ana_xsym_close(struct ana_xsym *x);
/* Symbolize stack id (0: an empty stack), leaf first, allocator frames
 * cut. The frames' function, file and module are escaped (ana_text.h:
 * valid UTF-8, control characters as \xHH), since the program chose
 * their bytes. *out stays valid until the next call. Returns 0 or -errno. */
int ana_xsym_stack(struct ana_xsym *x, uint32_t id, const struct ana_sym_stack **out,
                   uint32_t *image);
/* A frame's short name: the function, else "module+0xOFF", else "0xADDR".
 * Returns buf (or the symbolizer's string). */
const char *ana_xsym_name(const struct ana_sym_frame *f, char *buf, size_t size);
/* s (len bytes; words: NUL-separated, as a command line) escaped as
 * ana_text.h says, in a new string the caller frees; NULL: out of memory. */
char *ana_xtext(const char *s, size_t len, bool words);
/* The last path component of a module, or "???" */
const char *ana_xsym_basename(const char *path);

/* ---- The exporters. Each returns 0 or -errno. */
int ana_export_folded(struct fmt_reader *r, const struct ana_export_options *o,
                      struct ana_xout *out);
int ana_export_csv(struct fmt_reader *r, const struct ana_export_options *o, struct ana_xout *out);
int ana_export_pprof(struct fmt_reader *r, const struct ana_export_options *o,
                     struct ana_xout *out);
int ana_export_massif(struct fmt_reader *r, const struct ana_export_options *o,
                      struct ana_xout *out);
int ana_export_dhat(struct fmt_reader *r, const struct ana_export_options *o, struct ana_xout *out);
int ana_export_heaptrack(struct fmt_reader *r, const struct ana_export_options *o,
                         struct ana_xout *out);
/* *output_failed and err as ana_export_run(). */
int ana_export_sqlite(struct fmt_reader *r, const struct ana_export_options *o, const char *path,
                      int *output_failed, char *err, size_t err_size);

#endif
