/* SPDX-License-Identifier: MIT */
/* The Windows collector DLL's shared state (docs/windows.md, Collector). */
#ifndef WIN_COL_INTERNAL_H
#define WIN_COL_INTERNAL_H

#include "win_rec.h"

#include <stdint.h>
#include <windows.h>

/* Threads the collector can follow at once; a thread's slot is given back
 * when it exits. Static, so no thread ever allocates to be traced. */
#define WIN_COL_MAX_THREADS 1024

struct win_thread {
    volatile LONG in_use;
    uint32_t busy;       /* inside the collector: nested calls pass through */
    DWORD last_error;    /* the program's, kept across the collector's work */
    uint32_t heap_depth; /* heap calls of this thread in progress */
    uint32_t tid;
    struct win_seg_head *seg;
};

struct win_col {
    struct win_shm_head *shm;
    uint8_t *segs;
    DWORD tls;
    uint32_t pid;
    uintptr_t stop_lo, stop_hi; /* RtlUserThreadStart: frames past it are junk */
    uintptr_t self_lo, self_hi; /* this DLL: its frames (hooks) are left out */
};

extern struct win_col win_col;

/* The calling thread's state (set up on its first call), or NULL when the
 * collector is off or out of thread slots. Guard not taken. */
struct win_thread *win_col_thread(void);
/* The calling thread's state with its guard taken, or NULL (collector off,
 * nested inside the collector, or no thread slot left). */
struct win_thread *win_col_enter(void);
void win_col_leave(struct win_thread *t);
/* Give back the calling thread's slot and segment (DLL_THREAD_DETACH). */
void win_col_thread_exit(void);

/* Write one record of kind with args a[0..nr_a) and, when with_stack, the
 * caller's stack from the hook's caller on; text (len bytes) follows. seq:
 * the record's place in the process's order, from win_col_seq(), or 0 to
 * take one now. */
void win_col_emit(struct win_thread *t, unsigned kind, uint64_t seq, const uint64_t *a,
                  unsigned nr_a, int with_stack, const void *text, uint32_t len);
/* The next seq. A free takes its seq before the real call: once the block is
 * back, another thread may get the same address and log its allocation. */
uint64_t win_col_seq(void);

/* Emit a WIN_REC_MODULE for the PE image mapped at base (path: UTF-16, may be
 * NULL). Reads only the mapped headers; never allocates. */
void win_col_module_emit(struct win_thread *t, const void *base, const WCHAR *path);
/* A WIN_REC_MODULE for every module loaded now. */
void win_col_modules_emit_all(struct win_thread *t);

/* A WIN_REC_REGION for every region in use now that is not part of an
 * image (docs/windows-internals.md, "The address space at start"); shm: the view of
 * the launcher's shared memory, the collector's own. Never allocates. */
void win_col_regions_emit_all(struct win_thread *t, const void *shm);

/* Install the heap and virtual-memory hooks. Returns 0, or -errno with a
 * one-line reason in why[0..why_size). */
int win_col_hooks_install(char *why, size_t why_size);
/* Hook CreateProcessInternalW so that children are traced too. Same returns. */
int win_col_child_hook(char *why, size_t why_size);

#endif
