/* SPDX-License-Identifier: MIT */
/* The frame of interest: the one rule that decides which frames of a
 * symbolized stack a row shows and which one names it. Text rows, trees,
 * the HTML page (through its data) and JSON's "interest" index all ask it;
 * flame graphs and exports keep whole stacks and do not.
 *
 * Each frame is of one class (ana_interest_class):
 *   entry      the program's entry chain: libc's start-up (_start,
 *              __libc_start_main, exit's handlers), thread start
 *              (start_thread, clone3), the dynamic loader's initializers,
 *              mingw's CRT start-up and Wine's thread thunks
 *              (BaseThreadInitThunk, RtlUserThreadStart); and any frame
 *              of libc or the loader with no symbol: their internal
 *              functions, these among them, where libc6-dbg is not
 *              installed (at the root side they are the chain; elsewhere
 *              an entry-class frame counts as runtime, as below)
 *   runtime    the language runtime and the system's libraries: std::,
 *              __gnu_cxx::, libc's _IO_ internals, anything in libc,
 *              libstdc++, libgcc_s or the dynamic loader, Wine's and
 *              Windows' system DLLs (ntdll, kernelbase, kernel32, msvcrt...)
 *   allocator  allocation wrappers: the libc allocator's own functions,
 *              operator new and delete, xmalloc, xrealloc, g_malloc and
 *              their kin, and the names a user adds (--alloc-fn NAME,
 *              MEMSCRIBE_ALLOC_FNS; docs/symbols.md)
 *   user       everything else: the program's own code
 *
 * A stack's entry chain is its run of entry frames on the root side (an
 * entry-class frame elsewhere counts as runtime; a stripped program's
 * nameless _start is of it); rows and trees leave it out. Its frame of interest is its first user
 * frame, leaf first, before the chain, or the leaf when it has none. A row (ana_interest_row)
 * leaves out the allocation wrappers at its leaf (as malloc and operator new are cut from every
 * stack), shows the other frames down to the frame of interest as one mark ("[6 library frames]"),
 * then the frame of interest, then its callers, each run of two or more non-user frames folded into
 * one mark, never the entry chain; a row of one item is the frame of interest alone.
 * docs/symbols.md says it for users. */
#ifndef ANA_INTEREST_H
#define ANA_INTEREST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/sym/ana_symbolize.h"

enum ana_frame_class {
    ANA_FRAME_USER = 0,
    ANA_FRAME_ALLOCATOR,
    ANA_FRAME_RUNTIME,
    ANA_FRAME_ENTRY,
    ANA_FRAME_NR_CLASSES,
};

/* The class's name as the page's data and docs say it ("user", ...). */
const char *ana_frame_class_name(enum ana_frame_class c);

/* The class of one symbolized frame (its function as demangled, its
 * module), with the user's own allocation wrappers: alloc_fns[0 ..
 * nr_alloc_fns), exact function names (a C++ name with its argument list,
 * or without it to match every overload). Never allocates. */
enum ana_frame_class ana_interest_class(const struct ana_sym_frame *f, const char *const *alloc_fns,
                                        size_t nr_alloc_fns);

/* Where the entry chain of a stack of n frames of classes cls[] (leaf
 * first) starts: the frames [return value, n) are it. Its root-most frame
 * may be a user one (the _start of a stripped program, which has no
 * symbol) when the frame after it is of the chain. n when there is none,
 * and n too when every frame is of it (a stack all start-up keeps its
 * frames). */
uint32_t ana_interest_entry(const uint8_t *cls, uint32_t n);

/* The index (leaf first) of the frame of interest: the first user frame
 * before the entry chain, else 0 (the leaf). 0 for an empty stack. */
uint32_t ana_interest_find(const uint8_t *cls, uint32_t n);

/* One item of a row: frames [first, first + nr) of the stack, shown as
 * one mark (ana_interest_mark) when folded, else the frame itself. */
struct ana_interest_item {
    uint32_t first, nr;
    bool folded;
};

/* The mark of nr folded frames, "[6 library frames]" ("[1 library
 * frame]"), in buf as snprintf writes; the HTML page words it the same
 * (report.js). */
int ana_interest_mark(char *buf, size_t size, uint32_t nr);

/* A row's layout: its items, leaf first, and what it leaves out. */
struct ana_interest_row {
    uint32_t nr_items;
    uint32_t interest; /* frame index of the frame of interest */
    uint32_t entry;    /* where the entry chain starts (ana_interest_entry) */
    uint32_t nr_more;  /* frames after the last item, up to the entry chain */
};

/* Lay out a row of the stack of n frames of classes cls[] (leaf first) in
 * at most max items (0: no limit), the frame of interest always among
 * them. items must have room for n items (or max, if smaller and not 0). */
void ana_interest_row(const uint8_t *cls, uint32_t n, uint32_t max, struct ana_interest_item *items,
                      struct ana_interest_row *out);

#endif
