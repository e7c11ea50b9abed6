/* SPDX-License-Identifier: MIT */
/* Recorded stacks as text for reports: each stack id becomes its cleaned,
 * symbolized frames (leaf first), each frame a pair of interned strings:
 * the function ("Operation1()", or "libx.so+0x1a2b" when unknown) that call
 * trees merge on, and the full place ("Operation1() (demo.cc:52)") that
 * tables print. Results are cached per stack id, so a report symbolizes
 * each stack once. The symbolizer (ana_symbolize.h) does the work. */
#ifndef ANA_STACKS_H
#define ANA_STACKS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/sym/ana_interest.h"
#include "analysis/sym/ana_symbolize.h"
#include "memscribe/trace.h"

struct ana_stacks;

/* One frame: string ids for ana_stacks_str(). */
struct ana_frame {
    uint32_t function;
    uint32_t place;
};

/* Load the modules of every image of r into a new symbolizer. r must
 * outlive the result. Returns 0 or -errno. */
int ana_stacks_create(struct ana_stacks **out, struct fmt_reader *r,
                      const struct ana_sym_options *opt);
void ana_stacks_destroy(struct ana_stacks *s);

/* The frames of stack id, leaf first, in *frames (valid until destroy).
 * Returns the number of frames (0 for stack 0 or an empty stack) or
 * -errno. */
int ana_stacks_get(struct ana_stacks *s, uint32_t stack, const struct ana_frame **frames);

/* The frames of stack id as ana_stacks_get gives them, not kept: valid
 * until the next call on s. For a reader of each stack once (a tree of
 * every call site), where keeping them all would hold every stack's
 * frames at once. Returns the number of frames or -errno. */
int ana_stacks_frames(struct ana_stacks *s, uint32_t stack, const struct ana_frame **frames);

/* Forget what is kept per stack node (their pages: ana_stacks_internal.h)
 * but not the strings, frames got or keys: a tree's replay calls it once
 * an image's rows are folded, the nodes of a process that ended being of
 * no more use. Reading a stack again makes its nodes' pages again. */
void ana_stacks_drop_nodes(struct ana_stacks *s);

/* The string of an id from struct ana_frame. */
const char *ana_stacks_str(const struct ana_stacks *s, uint32_t id);
/* The class of a frame's string id (its function or its place) as
 * ana_interest_class() gave it for the frame (ana_interest.h), the user's
 * allocation wrappers (ana_sym_options.alloc_fns) included; ANA_FRAME_USER
 * for any other string. */
enum ana_frame_class ana_stacks_class(const struct ana_stacks *s, uint32_t id);

/* The classes of n frames, by their places, into cls[0 .. n). */
void ana_stacks_classes(const struct ana_stacks *s, const struct ana_frame *f, uint32_t n,
                        uint8_t *cls);

/* The same as a name function of labels (arg: the stacks), for trees and
 * flame graphs whose labels are these string ids. */
const char *ana_stacks_str_fn(void *arg, uint32_t id);

/* Intern another label (a process name for a tree level, ...) so that
 * it can sit beside frame strings. Returns 0 or -ENOMEM. */
int ana_stacks_intern(struct ana_stacks *s, const char *str, uint32_t *id);

/* The allocating function of a stack (its leaf after cleaning), as a
 * string id, or the id of "(no stack)". Its frames are not kept (a window
 * by function asks the leaf of every stack of a tree once). Returns 0 or
 * -errno. */
int ana_stacks_leaf(struct ana_stacks *s, uint32_t stack, uint32_t *function);

/* A key (not a string id) that is the same for two stacks exactly when
 * their frames read the same: the sequence of places (by_place: function,
 * file, line) or of functions; 0 for no stack. Rows and flame graphs group
 * stacks by it. Returns 0 or -errno. */
int ana_stacks_key(struct ana_stacks *s, uint32_t stack, int by_place, uint32_t *key);

/* Where the frames that read as place (a place's string id, 'f (a.c:12)')
 * come from: the source file as the debug information names it (not
 * escaped: a path to open) and the line. The trace's stacks are read, all
 * of them, so that two files whose frames read the same are found. */
struct ana_place_file {
    const char *path;  /* the file */
    const char *other; /* a second file whose frames read the same, or NULL */
    uint32_t line;
};
/* Returns 0, -ENOENT when no frame reads as place or its frames name no
 * file, or another -errno (a stack the reader cannot give). */
int ana_stacks_place_file(struct ana_stacks *s, uint32_t place, struct ana_place_file *out);

/* The files and modules a function's frames come from (the last part of
 * each path, escaped as frames are), kept once ana_stacks_keep_where is
 * called: a call tree merges a function's frames by name, and its filter
 * by file or module asks where they were. */
#define ANA_WHERE_MAX 4
struct ana_where {
    const char *files[ANA_WHERE_MAX];
    const char *modules[ANA_WHERE_MAX];
    unsigned nr_files, nr_modules;
    bool more; /* more files or modules than these */
};
/* From now on (stacks read before are read again). */
void ana_stacks_keep_where(struct ana_stacks *s);
/* Where function (a frame's function string id) is; false if not kept
 * (ana_stacks_keep_where not called, or not a function's id). */
bool ana_stacks_where(const struct ana_stacks *s, uint32_t function, struct ana_where *out);

/* Symbolizer notes (modules that could not be read), for --verbose. */
struct ana_sym *ana_stacks_sym(struct ana_stacks *s);

#endif
