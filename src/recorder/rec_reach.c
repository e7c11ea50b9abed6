/* SPDX-License-Identifier: MIT */
/* The scan at exit (record --reach, docs/leaks.md, docs/protocol-order.md "Leak
 * classes at exit"): an image that ends asks for it and waits; we stop its
 * threads with ptrace, write every event it made before, read its roots
 * (registers, stacks, writable mappings that hold no heap block) and
 * blocks with process_vm_readv, class the blocks as memcheck does
 * (rec_reach_mark.c), write the REACH record, and let the image go on
 * ending. Where ptrace is refused the record says why. */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memscribe/trace.h"
#include "recorder/rec_cpu.h"
#include "recorder/rec_internal.h"
#include "recorder/rec_proc.h"
#include "recorder/rec_reach_internal.h"
#include "util/util_array.h"

/* Threads of one process we stop at most, and passes over its task list
 * (a thread may start while we stop the others). */
#define REC_REACH_MAX_THREADS 4096
#define REC_REACH_TASK_PASSES 8
/* How long threads may take to stop, and the merge to write every event
 * made before they stopped. */
#define REC_REACH_STOP_MS 1000
#define REC_REACH_CATCH_UP_MS 1000
/* memcheck keeps the red zone below the stack pointer addressable
 * (VG_STACK_REDZONE_SZB: 128 on amd64, 0 on x86). */
#if defined(__aarch64__)
#define REC_REACH_REDZONE 0 /* AAPCS64 on Linux keeps nothing below sp */
#else
#define REC_REACH_REDZONE 128
#endif
#define REC_REACH_REDZONE32 0
#define REC_REACH_MAX_OWN 64

struct rec_reach_thread {
    pid_t tid;
    int stopped;
    int inject; /* a signal it stopped for, handed back at the detach */
    uint64_t regs[32];
    unsigned nr_regs;
    uint64_t sp;
};

struct rec_reach_proc {
    pid_t pid;
    unsigned word; /* 8, or 4: a thread's registers came in the i386 layout */
    struct rec_reach_thread *t;
    uint32_t nr, cap;
    uint32_t nr_stopped;
};

static ssize_t rec_reach_vm_read(void *arg, const struct iovec *local, unsigned long nr_local,
                                 const struct iovec *remote, unsigned long nr_remote)
{
    return process_vm_readv(*(pid_t *)arg, local, nr_local, remote, nr_remote, 0);
}

static int rec_reach_known(const struct rec_reach_proc *p, pid_t tid)
{
    for (uint32_t i = 0; i < p->nr; i++)
        if (p->t[i].tid == tid)
            return 1;
    return 0;
}

/* Seize and interrupt the threads not seized yet: the number seized, or
 * -errno when not even the first could be (why says so). */
static int rec_reach_seize_pass(struct rec_reach_proc *p, char *why, size_t why_size)
{
    char path[64];
    struct dirent *d;
    DIR *dir;
    int added = 0;

    snprintf(path, sizeof(path), "/proc/%d/task", (int)p->pid);
    if (!(dir = opendir(path))) {
        snprintf(why, why_size, "cannot list %s: %s", path, strerror(errno));
        return -errno;
    }
    while ((d = readdir(dir)) && p->nr < REC_REACH_MAX_THREADS) {
        pid_t tid = (pid_t)atoi(d->d_name);

        if (tid <= 0 || rec_reach_known(p, tid))
            continue;
        if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0) {
            if (errno != ESRCH && p->nr == 0) {
                int e = errno;

                snprintf(why, why_size, "ptrace refused (%s)", strerror(e));
                closedir(dir);
                return -e;
            }
            continue;
        }
        if (UTIL_ARRAY_RESERVE(p->t, p->cap, (size_t)p->nr + 1, 16)) {
            ptrace(PTRACE_DETACH, tid, NULL, NULL);
            break;
        }
        p->t[p->nr++] = (struct rec_reach_thread){.tid = tid};
        ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
        added++;
    }
    closedir(dir);
    return added;
}

/* i386's struct user_regs_struct, as PTRACE_GETREGSET gives a 32-bit
 * tracee's NT_PRSTATUS to a 64-bit tracer (the tracee's layout). */
struct rec_reach_regs32 {
    uint32_t ebx, ecx, edx, esi, edi, ebp, eax, xds, xes, xfs, xgs, orig_eax, eip, xcs, eflags, esp,
        xss;
};

/* A stopped thread's general registers (memcheck's VG_(apply_to_GP_regs)):
 * amd64's 16, or x86's 8 for a 32-bit process (then p->word is 4), or
 * AArch64's 31 and sp. */
static void rec_reach_regs(struct rec_reach_proc *p, struct rec_reach_thread *t)
{
#if defined(__x86_64__)
    union {
        struct user_regs_struct r;
        struct rec_reach_regs32 r32;
    } u;
    struct iovec iov = {&u, sizeof(u)};

    if (ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_PRSTATUS, &iov) != 0)
        return;
    if (iov.iov_len == sizeof(u.r32)) {
        const struct rec_reach_regs32 *r = &u.r32;
        const uint64_t v[8] = {r->eax, r->ecx, r->edx, r->ebx, r->esi, r->edi, r->ebp, r->esp};

        memcpy(t->regs, v, sizeof(v));
        t->nr_regs = 8;
        t->sp = r->esp;
        p->word = 4;
        return;
    }
    const struct user_regs_struct *r = &u.r;
    const uint64_t v[16] = {r->rax, r->rbx, r->rcx, r->rdx, r->rsi, r->rdi, r->rbp, r->rsp,
                            r->r8,  r->r9,  r->r10, r->r11, r->r12, r->r13, r->r14, r->r15};
    memcpy(t->regs, v, sizeof(v));
    t->nr_regs = 16;
    t->sp = r->rsp;
#elif defined(__aarch64__)
    /* x0-x30 and sp: x30 may hold a pointer as well as a return address. */
    struct user_regs_struct r;

    (void)p;
    if (rec_cpu_get(t->tid, &r) != 0)
        return;
    memcpy(t->regs, r.regs, sizeof(r.regs));
    t->regs[31] = r.sp;
    t->nr_regs = 32;
    t->sp = r.sp;
#else
    (void)p;
    (void)t;
#endif
}

/* Wait until every seized thread stopped (or ended), bounded. */
static void rec_reach_wait_stops(struct rec_reach_proc *p)
{
    for (int ms = 0; ms < REC_REACH_STOP_MS; ms++) {
        int left = 0;

        for (uint32_t i = 0; i < p->nr; i++) {
            struct rec_reach_thread *t = &p->t[i];
            int st;

            if (t->stopped || t->tid == 0)
                continue;
            pid_t got = waitpid(t->tid, &st, __WALL | WNOHANG);
            if (got == t->tid && WIFSTOPPED(st)) {
                t->stopped = 1;
                /* A signal-delivery stop: the signal goes back at the detach. */
                if ((st >> 16) != PTRACE_EVENT_STOP)
                    t->inject = WSTOPSIG(st);
                rec_reach_regs(p, t);
                p->nr_stopped++;
            } else if (got == t->tid || (got < 0 && errno == ECHILD)) {
                t->tid = 0; /* it ended */
            } else {
                left++;
            }
        }
        if (!left)
            return;
        poll(NULL, 0, 1);
    }
}

static int rec_reach_stop(struct rec_reach_proc *p, char *why, size_t why_size)
{
#if !defined(REC_CPU_ATTACH)
    snprintf(why, why_size, "not on this architecture");
    return -ENOSYS;
#endif
    for (int pass = 0; pass < REC_REACH_TASK_PASSES; pass++) {
        int rc = rec_reach_seize_pass(p, why, why_size);

        if (rc < 0)
            return rc;
        if (rc == 0)
            break;
    }
    rec_reach_wait_stops(p);
    if (!p->nr_stopped) {
        snprintf(why, why_size, "no thread of the process could be stopped");
        return -ESRCH;
    }
    return 0;
}

/* Let every seized thread go, each with the signal it stopped for. A
 * thread seized that never stopped (within REC_REACH_STOP_MS) cannot be
 * detached while it runs: it is waited for once more, then detached; a
 * thread still running then is let go when it next stops. */
static void rec_reach_resume(struct rec_reach_proc *p)
{
    for (uint32_t i = 0; i < p->nr; i++) {
        struct rec_reach_thread *t = &p->t[i];
        int st;

        for (int ms = 0; t->tid && !t->stopped && ms < 100; ms++) {
            pid_t got = waitpid(t->tid, &st, __WALL | WNOHANG);

            if (got == t->tid && WIFSTOPPED(st)) {
                t->stopped = 1;
                t->inject = (st >> 16) != PTRACE_EVENT_STOP ? WSTOPSIG(st) : 0;
            } else if (got != 0) {
                t->tid = 0;
            } else {
                poll(NULL, 0, 1);
            }
        }
        if (t->tid)
            ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(intptr_t)t->inject);
    }
    free(p->t);
    p->t = NULL;
}

/* Write every event the image made before its threads stopped at t:
 * the merge's watermark passes t once its rings are read to their end.
 * The socket is read first, as in a round: a thread's first events go to
 * a new segment whose hello it sent before them, and a segment not taken
 * in yet is a ring the watermark cannot wait for (its blocks were
 * unclassed when the recorder was behind: the i386 test under load). */
static void rec_reach_catch_up(struct rec_session *s, uint64_t t)
{
    for (int ms = 0; ms < REC_REACH_CATCH_UP_MS; ms++) {
        uint64_t now = rec_clock_now(&s->clock), limit;

        if (s->lfd >= 0)
            rec_socket_accept(s, s->lfd, now, REC_ACCEPTS_PER_ROUND);
        limit = rec_merge_watermark(s, now);

        rec_merge_emit(s, limit);
        if (limit > t)
            return;
        poll(NULL, 0, 1);
    }
}

static int rec_reach_add_block(void *arg, const struct fmt_writer_block *b)
{
    struct rec_reach *rr = arg;

    rr->blocks[rr->nr_blocks++] =
        (struct rec_reach_block){.addr = b->addr, .size = b->size, .serial = b->serial};
    return 0;
}

static int rec_reach_count_block(void *arg, const struct fmt_writer_block *b)
{
    (void)b;
    ++*(size_t *)arg;
    return 0;
}

static int rec_reach_by_addr(const void *a, const void *b)
{
    const struct rec_reach_block *x = a, *y = b;

    return x->addr < y->addr ? -1 : x->addr > y->addr ? 1 : x->serial < y->serial ? -1 : 1;
}

struct rec_reach_key {
    uint64_t key, i;
};

/* The blocks' 64-bit field at off (addr, serial) and their indexes,
 * sorted stably by it: an LSD radix sort a byte at a time, the bytes every
 * key shares skipped (qsort of 4 million 48-byte blocks took a second).
 * Returns the pairs (malloc'd), or NULL when out of memory. */
static struct rec_reach_key *rec_reach_sort_keys(const struct rec_reach_block *blocks, size_t n,
                                                 size_t off)
{
    struct rec_reach_key *a = malloc((n ? n : 1) * sizeof(*a)),
                         *b = malloc((n ? n : 1) * sizeof(*b));
    uint64_t and = ~0ull, or = 0;

    if (!a || !b) {
        free(a);
        free(b);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        memcpy(&a[i].key, (const char *)&blocks[i] + off, sizeof(a[i].key));
        a[i].i = i;
        and &= a[i].key;
        or |= a[i].key;
    }
    for (unsigned shift = 0; shift < 64; shift += 8) {
        size_t count[257] = {0};
        struct rec_reach_key *t;

        if (!(((and^ or) >> shift) & 0xff))
            continue; /* every key has this byte */
        for (size_t i = 0; i < n; i++)
            count[((a[i].key >> shift) & 0xff) + 1]++;
        for (int d = 0; d < 256; d++)
            count[d + 1] += count[d];
        for (size_t i = 0; i < n; i++)
            b[count[(a[i].key >> shift) & 0xff]++] = a[i];
        t = a;
        a = b;
        b = t;
    }
    free(b);
    return a;
}

/* Radix passes of 11 bits: 2,048 counters stay in the L1 cache. */
#define REC_REACH_DIGIT 11u

/* The blocks' order by address as packed keys: each block's offset from
 * the lowest, less the low bits every offset shares, above its index. A
 * heap of 4 million blocks in 200 MiB sorts in three passes over 8-byte
 * keys (the 16-byte keys of rec_reach_sort_keys took four or five).
 * Returns the keys (malloc'd, *ibits the index's bits), or NULL when the
 * two do not fit in 64 bits or memory is short. */
static uint64_t *rec_reach_sort_packed(const struct rec_reach_block *blocks, size_t n,
                                       unsigned *ibits)
{
    uint64_t lo = UINT64_MAX, spread = 0, *a, *b;
    unsigned shift, abits;

    for (size_t i = 0; i < n; i++)
        lo = blocks[i].addr < lo ? blocks[i].addr : lo;
    for (size_t i = 0; i < n; i++)
        spread |= blocks[i].addr - lo;
    shift = spread ? (unsigned)__builtin_ctzll(spread) : 0;
    abits = spread ? 64u - (unsigned)__builtin_clzll(spread >> shift) : 0;
    *ibits = n > 1 ? 64u - (unsigned)__builtin_clzll((uint64_t)n - 1) : 1;
    if (abits + *ibits > 64 || !(a = malloc((n ? n : 1) * sizeof(*a))))
        return NULL;
    if (!(b = malloc((n ? n : 1) * sizeof(*b)))) {
        free(a);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        a[i] = ((blocks[i].addr - lo) >> shift) << *ibits | i;
    for (unsigned d = *ibits; d < *ibits + abits; d += REC_REACH_DIGIT) {
        size_t count[(1u << REC_REACH_DIGIT) + 1] = {0};
        uint64_t *t;

        for (size_t i = 0; i < n; i++)
            count[((a[i] >> d) & ((1u << REC_REACH_DIGIT) - 1)) + 1]++;
        for (unsigned k = 0; k < (1u << REC_REACH_DIGIT); k++)
            count[k + 1] += count[k];
        for (size_t i = 0; i < n; i++)
            b[count[(a[i] >> d) & ((1u << REC_REACH_DIGIT) - 1)]++] = a[i];
        t = a;
        a = b;
        b = t;
    }
    free(b);
    return a;
}

/* Sort the blocks by address (stable): 0, or -ENOMEM (unsorted). */
static int rec_reach_sort(struct rec_reach_block **blocks, size_t n)
{
    struct rec_reach_block *out = malloc((n ? n : 1) * sizeof(*out));
    unsigned ibits;
    uint64_t *p = out ? rec_reach_sort_packed(*blocks, n, &ibits) : NULL;
    struct rec_reach_key *k;

    if (!out)
        return -ENOMEM;
    if (p) {
        /* The reads are scattered: fetch a few ahead so their misses overlap. */
        for (size_t i = 0; i < n; i++) {
            if (i + 16 < n)
                __builtin_prefetch(&(*blocks)[p[i + 16] & ((1ull << ibits) - 1)]);
            out[i] = (*blocks)[p[i] & ((1ull << ibits) - 1)];
        }
        free(p);
    } else if ((k = rec_reach_sort_keys(*blocks, n, offsetof(struct rec_reach_block, addr)))) {
        for (size_t i = 0; i < n; i++)
            out[i] = (*blocks)[k[i].i];
        free(k);
    } else {
        free(out);
        return -ENOMEM;
    }
    free(*blocks);
    *blocks = out;
    return 0;
}

/* The blocks' serials and classes by serial, for the REACH record: 0 or
 * -ENOMEM. Serials are dense (every allocation takes the next), so where
 * the live ones span at most REC_REACH_DENSE times their number each class
 * is put at its serial's place in a byte per serial and read back in
 * order: one scattered write a block, where the radix sort made passes
 * over 16-byte keys. */
#define REC_REACH_DENSE 16u
static int rec_reach_by_serials(const struct rec_reach *rr, uint64_t *serials, uint8_t *classes)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    size_t n = rr->nr_blocks, j = 0;
    uint8_t *at;

    for (size_t i = 0; i < n; i++) {
        lo = rr->blocks[i].serial < lo ? rr->blocks[i].serial : lo;
        hi = rr->blocks[i].serial > hi ? rr->blocks[i].serial : hi;
    }
    if (n && hi - lo < (uint64_t)n * REC_REACH_DENSE && (at = calloc(hi - lo + 1, 1))) {
        /* Classes are below 0xff: the byte holds class + 1, 0 for none. */
        for (size_t i = 0; i < n; i++)
            at[rr->blocks[i].serial - lo] = (uint8_t)(rr->blocks[i].state + 1);
        for (uint64_t d = 0; d <= hi - lo; d++) {
            if (at[d]) {
                serials[j] = lo + d;
                classes[j++] = (uint8_t)(at[d] - 1);
            }
        }
        free(at);
        return 0;
    }
    struct rec_reach_key *k =
        rec_reach_sort_keys(rr->blocks, n, offsetof(struct rec_reach_block, serial));

    if (!k)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        serials[i] = k[i].key;
        classes[i] = rr->blocks[k[i].i].state;
    }
    free(k);
    return 0;
}

/* The image's live blocks, by address; of two that overlap (a free the
 * trace missed) the later one stays. */
static int rec_reach_blocks(struct rec_session *s, struct rec_image *img, struct rec_reach *rr)
{
    size_t n = 0, k = 0;

    fmt_writer_live_blocks(s->w, img->index, rec_reach_count_block, &n);
    if (!(rr->blocks = calloc(n ? n : 1, sizeof(*rr->blocks))))
        return -ENOMEM;
    fmt_writer_live_blocks(s->w, img->index, rec_reach_add_block, rr);
    if (rec_reach_sort(&rr->blocks, rr->nr_blocks))
        qsort(rr->blocks, rr->nr_blocks, sizeof(*rr->blocks), rec_reach_by_addr);
    for (size_t i = 0; i < rr->nr_blocks; i++) {
        struct rec_reach_block *b = &rr->blocks[i];

        if (k && b->addr - rr->blocks[k - 1].addr <
                     (rr->blocks[k - 1].size ? rr->blocks[k - 1].size : 1)) {
            if (b->serial > rr->blocks[k - 1].serial)
                rr->blocks[k - 1] = *b;
            continue;
        }
        rr->blocks[k++] = *b;
    }
    rr->nr_blocks = k;
    return 0;
}

/* /proc/PID/maps, whole, NUL-terminated (malloc'd), or NULL. */
static char *rec_reach_read_maps(pid_t pid)
{
    char path[64], *buf = NULL;
    size_t len = 0, cap = 0;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return NULL;
    for (;;) {
        if (UTIL_ARRAY_RESERVE(buf, cap, len + 65537, 65536)) {
            free(buf);
            close(fd);
            return NULL;
        }
        ssize_t got = read(fd, buf + len, cap - len - 1);
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    close(fd);
    buf[len] = 0;
    return buf;
}

/* One line of maps: 0, or -1 at the end. *path points into the line. */
static int rec_reach_map_line(char **cur, struct rec_reach_map *m, const char **path)
{
    char *line = *cur, *end, *p, perms[5] = "";

    if (!*line)
        return -1;
    end = strchr(line, '\n');
    if (end)
        *end = 0;
    *cur = end ? end + 1 : line + strlen(line);
    m->lo = strtoull(line, &p, 16);
    m->hi = *p == '-' ? strtoull(p + 1, &p, 16) : 0;
    sscanf(p, " %4s", perms);
    m->r = perms[0] == 'r';
    m->w = perms[1] == 'w';
    m->x = perms[2] == 'x';
    /* perms, offset, device, inode, then the path (if any). */
    for (int field = 0; field < 4 && *p; field++) {
        while (*p == ' ')
            p++;
        while (*p && *p != ' ')
            p++;
    }
    while (*p == ' ')
        p++;
    *path = p;
    m->file = *p == '/';
    return 0;
}

struct rec_reach_roots {
    const struct rec_reach_proc *proc;
    uint64_t own[REC_REACH_MAX_OWN][2];
    uint32_t nr_own;
};

/* Is a writable mapping a root? Not the heap (glibc's main arena), not
 * our own rings, not a device (scanning one may hang: memcheck skips them
 * but /dev/zero). */
static int rec_reach_is_root(const struct rec_reach_map *m, const char *path)
{
    if (!m->r || !m->w || m->hi <= m->lo)
        return 0;
    return !(!strcmp(path, "[heap]") || !strncmp(path, "/memfd:memscribe-", 17) ||
             (!strncmp(path, "/dev/", 5) && strncmp(path, "/dev/zero", 9)) ||
             !strncmp(path, "[vvar", 5));
}

/* glibc's other arenas live in heaps of HEAP_MAX_SIZE (64 MiB on 64-bit,
 * 1 MiB on 32-bit: twice DEFAULT_MMAP_THRESHOLD_MAX), aligned to it, each
 * opening with its heap_info (ar_ptr, prev, size, mprotect_size: words)
 * and read-write up to mprotect_size. Where an anonymous mapping holds
 * such a start, the rest of it is malloc's, not a root: its free chunks
 * hold stale pointers (memcheck never scans its own arena). */
#define REC_REACH_HEAP_MAX (64ull << 20)
#define REC_REACH_HEAP_MAX32 (1ull << 20)

static uint64_t rec_reach_arena_cut(struct rec_reach *rr, uint64_t lo, uint64_t hi)
{
    uint64_t max = rr->word == 4 ? REC_REACH_HEAP_MAX32 : REC_REACH_HEAP_MAX;

    for (uint64_t b = (lo + max - 1) & ~(max - 1); b < hi; b += max) {
        uint64_t hinfo[4] = {0};
        uint32_t h32[4];
        int ok;

        if (rr->word == 4) {
            struct iovec l = {h32, sizeof(h32)}, r = {(void *)(uintptr_t)b, sizeof(h32)};

            ok = rr->read(rr->read_arg, &l, 1, &r, 1) == (ssize_t)sizeof(h32);
            for (int i = 0; ok && i < 4; i++)
                hinfo[i] = h32[i];
        } else {
            struct iovec l = {hinfo, sizeof(hinfo)}, r = {(void *)(uintptr_t)b, sizeof(hinfo)};

            ok = rr->read(rr->read_arg, &l, 1, &r, 1) == (ssize_t)sizeof(hinfo);
        }
        if (ok && hinfo[3] == hi - b && hinfo[2] <= hinfo[3] && !(hinfo[3] & 4095) && hinfo[0] &&
            !(hinfo[0] & (rr->word - 1)))
            return b;
    }
    return hi;
}

/* Scan the root range [lo, hi) less the live blocks in it (a large
 * block's own mapping, merged with its neighbours: a block's words count
 * only when it is reached). */
static void rec_reach_scan_less_blocks(struct rec_reach *rr, uint64_t lo, uint64_t hi)
{
    size_t a = 0, b = rr->nr_blocks;

    while (a < b) {
        size_t mid = a + (b - a) / 2;

        if (rr->blocks[mid].addr + rr->blocks[mid].size <= lo)
            a = mid + 1;
        else
            b = mid;
    }
    for (; a < rr->nr_blocks && rr->blocks[a].addr < hi && lo < hi; a++) {
        const struct rec_reach_block *k = &rr->blocks[a];

        if (k->addr > lo)
            rec_reach_root_range(rr, lo, k->addr);
        if (k->addr + k->size > lo)
            lo = k->addr + k->size;
    }
    if (lo < hi)
        rec_reach_root_range(rr, lo, hi);
}

/* Scan [lo, hi) less the collector's own mappings. */
static void rec_reach_scan_less_own(struct rec_reach *rr, const struct rec_reach_roots *ro,
                                    uint64_t lo, uint64_t hi)
{
    for (uint32_t i = 0; i < ro->nr_own && lo < hi; i++) {
        uint64_t olo = ro->own[i][0], ohi = ro->own[i][1];

        if (ohi <= lo || olo >= hi)
            continue;
        if (olo > lo)
            rec_reach_scan_less_blocks(rr, lo, olo);
        lo = ohi;
    }
    if (lo < hi)
        rec_reach_scan_less_blocks(rr, lo, hi);
}

static int rec_reach_by_lo(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;

    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The collector's own mappings, as its table in the program says (pairs
 * of uintptr_t: 4 bytes each in a 32-bit process; read like any of its
 * memory: a scribbled table only changes what is scanned). */
static void rec_reach_own(struct rec_reach_roots *ro, const struct fmt_shm_header *h, pid_t pid,
                          unsigned word)
{
    uint64_t addr = atomic_load_explicit(&h->own_addr, memory_order_relaxed);
    uint32_t n = atomic_load_explicit(&h->own_nr, memory_order_relaxed), raw[REC_REACH_MAX_OWN][2];
    struct iovec l = {word == 4 ? (void *)raw : (void *)ro->own, 0},
                 r = {(void *)(uintptr_t)addr, 0};

    if (n > REC_REACH_MAX_OWN)
        n = REC_REACH_MAX_OWN;
    l.iov_len = r.iov_len = n * 2 * (size_t)word;
    if (!addr || !n || process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)l.iov_len)
        return;
    for (uint32_t i = 0; word == 4 && i < n; i++) {
        ro->own[i][0] = raw[i][0];
        ro->own[i][1] = raw[i][1];
    }
    ro->nr_own = n;
    qsort(ro->own, n, sizeof(ro->own[0]), rec_reach_by_lo);
}

/* The roots: every writable mapping that is one (rec_reach_is_root), a
 * thread's stack from its stack pointer less the red zone up (below it
 * memcheck sees no valid word), then each thread's registers. Also the
 * maps for the vtable heuristic: rr->maps, malloc'd. */
static void rec_reach_roots(struct rec_reach *rr, const struct rec_reach_roots *ro, char *maps)
{
    struct rec_reach_map m, *all = NULL;
    size_t nr_all = 0, cap_all = 0;
    const char *path;
    char *cur = maps;
    uint64_t redzone = rr->word == 4 ? REC_REACH_REDZONE32 : REC_REACH_REDZONE;

    while (rec_reach_map_line(&cur, &m, &path) == 0) {
        if (!UTIL_ARRAY_RESERVE(all, cap_all, nr_all + 1, 256))
            all[nr_all++] = m;
        if (!rec_reach_is_root(&m, path))
            continue;
        uint64_t lo = m.lo, hi = *path ? m.hi : rec_reach_arena_cut(rr, m.lo, m.hi);
        for (uint32_t i = 0; i < ro->proc->nr; i++) {
            uint64_t sp = ro->proc->t[i].sp;

            if (ro->proc->t[i].stopped && sp >= m.lo && sp < m.hi && sp - m.lo >= redzone)
                lo = sp - redzone > lo ? sp - redzone : lo;
        }
        rec_reach_scan_less_own(rr, ro, lo, hi);
    }
    rr->maps = all;
    rr->nr_maps = nr_all;
    for (uint32_t i = 0; i < ro->proc->nr; i++)
        if (ro->proc->t[i].stopped)
            for (unsigned j = 0; j < ro->proc->t[i].nr_regs; j++)
                rec_reach_root_word(rr, ro->proc->t[i].regs[j]);
}

/* Class the blocks and write the record: 0 or -errno (why says). */
static int rec_reach_scan(struct rec_session *s, struct rec_image *img, struct rec_reach_proc *p,
                          const struct fmt_shm_header *h, struct fmt_writer_reach *out, char *why,
                          size_t why_size)
{
    struct rec_reach rr = {.word = p->word, .read = rec_reach_vm_read, .read_arg = &p->pid};
    struct rec_reach_snap snap = {.read = rec_reach_vm_read, .read_arg = &p->pid};
    struct rec_reach_roots ro = {.proc = p};
    char *maps = rec_reach_read_maps(p->pid);
    uint64_t *serials = NULL;
    uint8_t *classes = NULL;
    int rc;

    if (!maps) {
        snprintf(why, why_size, "cannot read /proc/%d/maps: %s", (int)p->pid, strerror(errno));
        return -errno;
    }
    rec_merge_cut(s); /* --aggregate: the pending blocks are written, with serials */
    if ((rc = rec_reach_blocks(s, img, &rr)) || (rc = rec_reach_init(&rr))) {
        snprintf(why, why_size, "out of memory");
        goto out;
    }
    uint64_t t0 = rec_clock_now(&s->clock);
    /* The heap copied into the recorder for the search, at most
     * --reach-copy's bytes (beyond, and out of memory for the copy, the
     * blocks are read from the process as the search needs them: slower,
     * and the program stays stopped longer). */
    rec_reach_snap_make(&snap, rr.blocks, rr.nr_blocks,
                        s->opt.reach_copy < SIZE_MAX ? (size_t)s->opt.reach_copy : SIZE_MAX);
    rr.read = rec_reach_snap_read;
    rr.read_arg = rr.view_arg = &snap;
    rr.view = rec_reach_snap_view;
    rec_reach_own(&ro, h, p->pid, rr.word);
    rec_reach_roots(&rr, &ro, maps);
    rec_reach_mark(&rr);
    s->reach.scan_ns += rec_clock_now(&s->clock) - t0;
    s->reach.nr_blocks += rr.nr_blocks;
    s->reach.read_bytes += rr.root_bytes + rr.block_bytes;
    serials = malloc((rr.nr_blocks ? rr.nr_blocks : 1) * sizeof(*serials));
    classes = malloc(rr.nr_blocks ? rr.nr_blocks : 1);
    if (!serials || !classes || rec_reach_by_serials(&rr, serials, classes)) {
        rc = -ENOMEM;
        snprintf(why, why_size, "out of memory");
        goto out;
    }
    out->nr_threads = p->nr_stopped;
    out->root_bytes = rr.root_bytes;
    out->skipped_bytes = rr.skipped_bytes;
    out->nr_blocks = rr.nr_blocks;
    out->serials = serials;
    out->classes = classes;
    rc = fmt_writer_reach(s->w, out);
    if (rc < 0 && s->write_err == 0)
        s->write_err = rc;
out:
    free(serials);
    free(classes);
    free((void *)rr.maps);
    free(rr.blocks);
    rec_reach_free(&rr);
    rec_reach_snap_free(&snap);
    free(maps);
    return rc;
}

/* Class img's live blocks now: at its exit when it asked (asked: the
 * answer it waits for follows), or when the recorder decides (a detach,
 * a request to the recorder): then the program is only held a moment and
 * its blocks are live at the scan, not leaked. */
static void rec_reach_image(struct rec_session *s, struct rec_image *img, struct fmt_shm_header *h,
                            int asked)
{
    struct rec_reach_proc p = {.pid = (pid_t)img->pid, .word = 8};
    uint64_t t = rec_clock_now(&s->clock), held;
    struct fmt_writer_reach out = {
        .image = img->index,
        .status = FMT_REACH_UNAVAILABLE,
        .ts_ns = t > s->start_mono_ns ? t - s->start_mono_ns : 0,
    };
    char why[200] = "";

    if (asked)
        atomic_store_explicit(&h->reach_done, FMT_SHM_REACH_SCANNING, memory_order_release);
    int stop = rec_reach_stop(&p, why, sizeof(why));

    if (stop == 0) {
        rec_reach_catch_up(s, rec_clock_now(&s->clock));
        out.status = FMT_REACH_SCANNED;
        if (rec_reach_scan(s, img, &p, h, &out, why, sizeof(why)) != 0) {
            out = (struct fmt_writer_reach){
                .image = img->index, .ts_ns = out.ts_ns, .status = FMT_REACH_UNAVAILABLE};
        }
    }
    rec_reach_resume(&p);
    /* A scan not asked for of a process that has just ended (no thread
     * left to stop): nothing to say, its exit had its own chance. */
    if (!asked && (stop == -ESRCH || stop == -ENOENT))
        return;
    held = rec_clock_now(&s->clock) - t;
    s->reach.nr_scans++;
    s->reach.last_ts_ns = out.ts_ns;
    s->reach.held_ns += held;
    if (held > s->reach.max_held_ns)
        s->reach.max_held_ns = held;
    if (out.status == FMT_REACH_UNAVAILABLE) {
        int rc;

        out.reason = why;
        if ((rc = fmt_writer_reach(s->w, &out)) < 0 && s->write_err == 0)
            s->write_err = rc;
        rec_session_say(s, REC_SAY_WARN, "pid %u: no leak classes %s: %s", img->pid,
                        asked ? "at its exit" : "now", why);
    }
    if (asked) {
        atomic_store_explicit(&h->reach_done, FMT_SHM_REACH_DONE, memory_order_release);
        syscall(SYS_futex, &h->reach_done, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
    }
}

/* SIGUSR1 to the recorder under --reach: scan every image at the next
 * round (rec_reach_round). */
static volatile sig_atomic_t rec_reach_requested;

static void rec_reach_on_usr1(int sig)
{
    (void)sig;
    rec_reach_requested = 1;
}

void rec_reach_signals(struct rec_session *s)
{
    struct sigaction sa = {.sa_handler = rec_reach_on_usr1, .sa_flags = SA_RESTART};

    if (!s->opt.reach)
        return;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
}

/* Segment 0's header of an image that can be scanned, or NULL. */
static struct fmt_shm_header *rec_reach_header(const struct rec_image *img)
{
    if (!img->open || img->reach_seen || !img->nr_segs || !img->segs[0].base)
        return NULL;
    return img->segs[0].base;
}

void rec_reach_round(struct rec_session *s)
{
    for (uint32_t i = 0; i < s->nr_images; i++) {
        struct rec_image *img = s->images[i];
        struct fmt_shm_header *h = rec_reach_header(img);

        if (!h || !atomic_load_explicit(&h->reach_req, memory_order_acquire))
            continue;
        img->reach_seen = 1;
        rec_reach_image(s, img, h, 1);
    }
    if (rec_reach_requested) {
        uint32_t before = s->reach.nr_scans;

        rec_reach_requested = 0;
        rec_reach_now(s);
        /* The time the trace dates the scan at, as leaks shows it (to the
         * microsecond, cut), so that leaks --at it finds this scan; the
         * end of the scans can be far later on a loaded machine. */
        rec_session_say(s, REC_SAY_NOTE,
                        "leak classes on request: %u process(es) scanned at %" PRIu64 ".%06" PRIu64
                        "s",
                        s->reach.nr_scans - before, s->reach.last_ts_ns / 1000000000,
                        s->reach.last_ts_ns % 1000000000 / 1000);
    }
}

void rec_reach_now(struct rec_session *s)
{
    for (uint32_t i = 0; i < s->nr_images; i++) {
        struct rec_image *img = s->images[i];
        struct fmt_shm_header *h = rec_reach_header(img);
        int asked;

        if (!h || kill((pid_t)img->pid, 0) != 0)
            continue;
        /* An image that asked meanwhile gets its answer from this scan. */
        asked = atomic_load_explicit(&h->reach_req, memory_order_acquire) != 0;
        img->reach_seen = asked;
        rec_reach_image(s, img, h, asked);
    }
}
