/* SPDX-License-Identifier: MIT */
/* The interim Windows event records (docs/windows-internals.md, "Interim records"):
 * what the collector writes into shared memory, and, in the same bytes,
 * what the launcher writes to its output file. Shared by the collector,
 * the launcher and the host dumper; no Windows headers. */
#ifndef WIN_REC_H
#define WIN_REC_H

#include <stdint.h>

#define WIN_REC_MAX_FRAMES 32

enum win_rec_kind {
    /* Heap calls: a7 is the depth, 0 for a call the program made, > 0 for
     * one made inside another heap call of the same thread. */
    WIN_REC_HEAP_ALLOC = 1,   /* a0 heap, a1 flags, a2 size, a3 result */
    WIN_REC_HEAP_REALLOC = 2, /* a0 heap, a1 flags, a2 old ptr, a3 size, a4 result */
    WIN_REC_HEAP_FREE = 3,    /* a0 heap, a1 flags, a2 ptr, a3 result (BOOLEAN) */
    WIN_REC_HEAP_CREATE = 4,  /* a0 flags, a1 base, a2 reserve, a3 commit, a4 result heap */
    WIN_REC_HEAP_DESTROY = 5, /* a0 heap, a1 result */
    /* a0 process, a1 base asked, a2 size asked, a3 MEM_*, a4 PAGE_*, a5 status,
     * a6 base got, a7 size got */
    WIN_REC_VM_ALLOC = 6,
    /* a0 process, a1 base asked, a2 size asked, a3 MEM_*, a5 status, a6 base, a7 size */
    WIN_REC_VM_FREE = 7,
    /* a0 process, a1 base asked, a2 size asked, a4 new PAGE_*, a5 status, a6 base,
     * a7 size; old PAGE_* in a3 */
    WIN_REC_VM_PROTECT = 8,
    /* a0 process, a1 section handle, a2 view size asked, a3 MEM_*, a4 PAGE_*, a5 status,
     * a6 base got, a7 view size got */
    WIN_REC_MAP_VIEW = 9,
    WIN_REC_UNMAP_VIEW = 10, /* a0 process, a1 base, a5 status */
    /* a0 base, a1 image size, a2 CodeView age, a3..a4 GUID (16 bytes, as in the PE),
     * then text: UTF-8 path, NUL, UTF-8 PDB name, NUL */
    WIN_REC_MODULE = 11,
    WIN_REC_PROCESS = 12, /* a0 pid, a1 parent pid (0: the launcher's), a2 pointer bytes */
    WIN_REC_EXIT = 13,    /* a0 pid, a1 exit code (launcher) */
    WIN_REC_THREAD = 14,  /* a0 tid: first event of a thread */
    WIN_REC_DROPPED = 15, /* a0 records the collector could not place (ring full) */
    WIN_REC_CHILD = 16,   /* a0 child pid, a1 1: collector loaded in it, 0: not */
    /* The launcher's clock pairs, at start and at end, to turn tsc into time:
     * a0 tsc, a1 QueryPerformanceCounter at start; a2, a3 the same at end;
     * a4 QueryPerformanceFrequency. pid 0, seq 0. */
    WIN_REC_CLOCK = 17,
    /* The address space when the collector started (VirtualQuery), one
     * record per region in use that is not part of an image: a0 AllocationBase,
     * a1 BaseAddress, a2 RegionSize, a3 State (MEM_COMMIT or MEM_RESERVE),
     * a4 Protect, a5 AllocationProtect, a6 Type (MEM_PRIVATE or MEM_MAPPED)
     * | WIN_REGION_COLLECTOR when the collector made the allocation, a7 the
     * allocation's size (its regions together) in its first region, else 0. */
    WIN_REC_REGION = 18,
    WIN_REC_KIND_MAX = 18
};

#define WIN_REGION_COLLECTOR 1ull /* in WIN_REC_REGION's a6 */

/* Every record: this head, nr_frames 64-bit return addresses, then for
 * WIN_REC_MODULE the text. size counts all of it, padded to 8 bytes. */
struct win_rec {
    uint16_t kind;
    uint16_t nr_frames;
    uint32_t size;
    uint32_t pid;
    uint32_t tid;
    uint64_t seq; /* process-wide order of the calls' returns */
    uint64_t tsc; /* rdtsc after the call returned */
    uint64_t a[8];
};

#define WIN_REC_HEAD_SIZE ((uint32_t)sizeof(struct win_rec))

/* Shared memory between one process's collector and the launcher. */
#define WIN_SHM_MAGIC 0x4d48535357534d4dull /* "MMSWSSHM" */
#define WIN_SHM_VERSION 1
#define WIN_SHM_HEAD_SIZE 4096
#define WIN_SHM_SEG_SIZE 65536
#define WIN_SHM_NR_SEGS 64

enum win_seg_state { WIN_SEG_FREE = 0, WIN_SEG_OWNED = 1, WIN_SEG_FULL = 2 };

/* Each segment starts with this; records follow it. The owning thread
 * publishes with a release store of committed; the launcher copies
 * [drained, committed) and, once a FULL segment is drained, frees it. */
struct win_seg_head {
    volatile uint32_t state;
    volatile uint32_t committed; /* bytes of records, from after this head */
    volatile uint32_t drained;
    uint32_t owner_tid;
};

struct win_shm_head {
    uint64_t magic;
    uint32_t version;
    uint32_t nr_segs;
    uint32_t seg_size;
    uint32_t pid;
    volatile int64_t seq;     /* next record's seq */
    volatile int32_t dropped; /* records lost to a full ring */
    volatile uint32_t ready;  /* 1: hooks installed; 2: collector failed (reason[]) */
    volatile uint32_t hint;   /* where a thread starts looking for a free segment */
    char reason[200];         /* UTF-8, when ready == 2 */
    /* A child to follow: the collector puts its pid here (REQUESTED), the
     * launcher loads the collector into it and answers DONE or FAILED, the
     * collector takes the answer and sets NONE. One child at a time. */
    volatile uint32_t child_state;
    volatile uint32_t child_pid;
    /* The traced process that started this one (the launcher sets it
     * before loading the collector; 0 for the program it started). */
    uint32_t parent_pid;
};

enum win_child_state {
    WIN_CHILD_NONE = 0,
    WIN_CHILD_CLAIMED = 1, /* a thread is filling in child_pid */
    WIN_CHILD_REQUESTED = 2,
    WIN_CHILD_DONE = 3,
    WIN_CHILD_FAILED = 4
};

/* The shared memory of process <pid>: a named mapping, "Local\\memscribe-<pid>". */
#define WIN_SHM_NAME_FMT L"Local\\memscribe-%lu"

/* Interim output file: this head, then records as drained (the reader
 * orders them by seq within a process). */
#define WIN_FILE_MAGIC "MSWINEV1"
struct win_file_head {
    char magic[8];
    uint32_t version;
    uint32_t head_size;
};

#endif
