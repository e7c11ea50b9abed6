/* SPDX-License-Identifier: MIT */
/* Per-thread state and records into shared-memory segments: no lock, no
 * syscall and no allocation per event (a thread's first event and a full
 * segment are the rare paths). */
#include "win_col_internal.h"

#include <intrin.h>
#include <string.h>
#include <winternl.h>

struct win_col win_col;

static struct win_thread threads[WIN_COL_MAX_THREADS];
static volatile LONG thread_hint;

/* Marks a thread whose state is being set up, so the calls the set-up
 * makes pass through. */
#define WIN_THREAD_SETUP ((void *)1)

/* TlsGetValue without its SetLastError(0): the TEB slot, read directly
 * (TlsAlloc gives the first 64 indexes there; win_col_main checks). */
static TEB *teb(void)
{
    TEB *t;
    /* NtCurrentTeb() itself trips gcc 12's -Warray-bounds (a segment read
     * through a null-based pointer), so the same read in asm. */
#ifdef _WIN64
    __asm__("movq %%gs:0x30, %0" : "=r"(t));
#else
    __asm__("movl %%fs:0x18, %0" : "=r"(t));
#endif
    return t;
}

static void *tls_get(void)
{
    return teb()->TlsSlots[win_col.tls];
}

static void tls_set(void *v)
{
    teb()->TlsSlots[win_col.tls] = v;
}

static struct win_thread *thread_claim(void)
{
    for (unsigned i = 0; i < WIN_COL_MAX_THREADS; i++) {
        unsigned k = ((unsigned)thread_hint + i) % WIN_COL_MAX_THREADS;
        if (InterlockedCompareExchange(&threads[k].in_use, 1, 0) == 0) {
            thread_hint = (LONG)(k + 1);
            threads[k].busy = 0;
            threads[k].heap_depth = 0;
            threads[k].seg = NULL;
            threads[k].tid = GetCurrentThreadId();
            return &threads[k];
        }
    }
    return NULL;
}

struct win_thread *win_col_thread(void)
{
    struct win_thread *t;

    if (!win_col.shm)
        return NULL;
    t = tls_get();
    if (t == WIN_THREAD_SETUP)
        return NULL;
    if (!t) {
        DWORD err = GetLastError();

        tls_set(WIN_THREAD_SETUP);
        t = thread_claim();
        tls_set(t ? t : WIN_THREAD_SETUP);
        if (!t) {
            InterlockedIncrement((volatile LONG *)&win_col.shm->dropped);
            return NULL;
        }
        uint64_t a = t->tid;
        t->busy = 1;
        win_col_emit(t, WIN_REC_THREAD, 0, &a, 1, 0, NULL, 0);
        t->busy = 0;
        SetLastError(err);
    }
    return t;
}

struct win_thread *win_col_enter(void)
{
    struct win_thread *t = win_col_thread();

    if (!t || t->busy)
        return NULL;
    t->busy = 1;
    t->last_error = GetLastError();
    return t;
}

void win_col_leave(struct win_thread *t)
{
    SetLastError(t->last_error);
    t->busy = 0;
}

static struct win_seg_head *seg_at(unsigned i)
{
    return (struct win_seg_head *)(win_col.segs + (size_t)i * WIN_SHM_SEG_SIZE);
}

/* Hand the segment to the launcher to drain and free. */
static void seg_release(struct win_thread *t)
{
    if (t->seg) {
        MemoryBarrier();
        t->seg->state = WIN_SEG_FULL;
        t->seg = NULL;
    }
}

/* A free segment for t, waiting a little for the launcher to drain one. */
static struct win_seg_head *seg_claim(struct win_thread *t)
{
    struct win_shm_head *h = win_col.shm;

    for (unsigned tries = 0; tries < 2000; tries++) {
        for (unsigned i = 0; i < h->nr_segs; i++) {
            unsigned k = (h->hint + i) % h->nr_segs;
            struct win_seg_head *s = seg_at(k);
            if (s->state == WIN_SEG_FREE &&
                InterlockedCompareExchange((volatile LONG *)&s->state, WIN_SEG_OWNED,
                                           WIN_SEG_FREE) == WIN_SEG_FREE) {
                h->hint = k + 1;
                s->owner_tid = t->tid;
                return s;
            }
        }
        SwitchToThread();
    }
    return NULL;
}

void win_col_thread_exit(void)
{
    struct win_thread *t;

    if (!win_col.shm)
        return;
    t = tls_get();
    if (!t || t == WIN_THREAD_SETUP)
        return;
    tls_set(WIN_THREAD_SETUP);
    seg_release(t);
    t->in_use = 0;
}

/* Return addresses of the hook's caller and up, cut after the thread's
 * start routine (what RtlCaptureStackBackTrace finds past it is junk). */
static unsigned stack_capture(uint64_t *frames)
{
    void *pc[WIN_REC_MAX_FRAMES + 4];
    /* The collector's own frames (this function, win_col_emit, the hook)
     * are left out by address below, whatever the compiler inlined. */
    unsigned n = RtlCaptureStackBackTrace(0, WIN_REC_MAX_FRAMES + 4, pc, NULL);
    unsigned k = 0;

    for (unsigned i = 0; i < n && pc[i] && k < WIN_REC_MAX_FRAMES; i++) {
        uintptr_t a = (uintptr_t)pc[i];
        /* a hook's own frame, when the heap manager's inner calls are hooked too */
        if (a >= win_col.self_lo && a < win_col.self_hi)
            continue;
        frames[k++] = a;
        if (a >= win_col.stop_lo && a < win_col.stop_hi)
            break;
    }
    return k;
}

uint64_t win_col_seq(void)
{
    return win_col.shm ? (uint64_t)InterlockedIncrement64(&win_col.shm->seq) : 0;
}

void win_col_emit(struct win_thread *t, unsigned kind, uint64_t seq, const uint64_t *a,
                  unsigned nr_a, int with_stack, const void *text, uint32_t len)
{
    uint64_t frames[WIN_REC_MAX_FRAMES];
    unsigned nr = with_stack ? stack_capture(frames) : 0;
    uint32_t size = WIN_REC_HEAD_SIZE + 8 * nr + ((len + 7) & ~7u);
    const uint32_t room = WIN_SHM_SEG_SIZE - sizeof(struct win_seg_head);
    struct win_rec *r;

    if (size > room)
        return;
    if (t->seg && t->seg->committed + size > room)
        seg_release(t);
    if (!t->seg && !(t->seg = seg_claim(t))) {
        InterlockedIncrement((volatile LONG *)&win_col.shm->dropped);
        return;
    }
    r = (struct win_rec *)((uint8_t *)(t->seg + 1) + t->seg->committed);
    r->kind = (uint16_t)kind;
    r->nr_frames = (uint16_t)nr;
    r->size = size;
    r->pid = win_col.pid;
    r->tid = t->tid;
    r->seq = seq ? seq : win_col_seq();
    r->tsc = __rdtsc();
    for (unsigned i = 0; i < 8; i++)
        r->a[i] = i < nr_a ? a[i] : 0;
    memcpy(r + 1, frames, 8 * nr);
    if (len) {
        uint8_t *p = (uint8_t *)(r + 1) + 8 * nr;
        memcpy(p, text, len);
        memset(p + len, 0, ((len + 7) & ~7u) - len);
    }
    /* Publish: the launcher reads up to committed, so the record is whole
     * before the store (x86 keeps stores in order; the barrier keeps the
     * compiler from moving them). */
    MemoryBarrier();
    t->seg->committed += size;
}
