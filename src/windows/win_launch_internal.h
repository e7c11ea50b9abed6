/* SPDX-License-Identifier: MIT */
/* The launcher memscribe.exe (docs/windows.md, Launcher). */
#ifndef WIN_LAUNCH_INTERNAL_H
#define WIN_LAUNCH_INTERNAL_H

#include "win_rec.h"

#include <stdio.h>
#include <windows.h>

/* One traced process: its handle and the shared memory its collector fills. */
struct win_proc {
    HANDLE handle;
    DWORD pid;
    DWORD parent_pid; /* the traced parent, 0 for the program started */
    HANDLE map;
    struct win_shm_head *shm;
    int exited;
    int traced; /* the collector is in it */
};

/* Start tracing process p (handle and pid set, main thread suspended):
 * shared memory, then the collector. Returns 0, or nonzero with why. */
int win_proc_attach(struct win_proc *p, const WCHAR *collector_dll, char *why, size_t n);

/* Create and initialise the shared memory for process pid in *p.
 * Returns 0, or a GetLastError() code. */
DWORD win_shm_create(struct win_proc *p);

/* Load collector_dll (full path) into the suspended process p. Returns 0 once
 * the collector says its hooks are in (shm->ready == 1); otherwise writes why
 * to why[0..n) and returns nonzero. */
int win_inject(struct win_proc *p, const WCHAR *collector_dll, char *why, size_t n);

/* Copy the records the collector of p has committed since the last call
 * to out, and free the segments it is done with. Records are whole once
 * committed, so this is right at any time, also after the process died.
 * Returns the bytes written, or -1 on a write error. */
long win_drain(struct win_proc *p, FILE *out);

#endif
