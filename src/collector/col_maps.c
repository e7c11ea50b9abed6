/* SPDX-License-Identifier: MIT */
/* The address space when a stream starts: every line of /proc/self/maps
 * becomes an mmap event with origin SNAPSHOT, so an analysis sees the
 * program's whole address space from the first instant. The collector's
 * own mappings (rings, stack tables) are marked FMT_EVF_COLLECTOR. Read with raw syscalls into
 * mmap'd memory (no stdio, no malloc: STYLE.md, Inside a hook). */
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/col_internal.h"

#define COL_OWN_MAX 64
#define COL_MAPS_BUF (64u * 1024)

static struct {
    uintptr_t lo, hi;
} col_own[COL_OWN_MAX];
/* The snapshot's own read buffer: in the maps it reads, gone right after. */
static uintptr_t col_buf_lo, col_buf_hi;
static _Atomic unsigned col_nr_own;

void col_maps_note_own(const void *p, size_t len)
{
    unsigned i = atomic_fetch_add(&col_nr_own, 1);

    if (!p || i >= COL_OWN_MAX)
        return;
    col_own[i].lo = (uintptr_t)p;
    col_own[i].hi = (uintptr_t)p + len;
}

const void *col_maps_own_table(uint32_t *nr, uint32_t *cap)
{
    unsigned n = atomic_load(&col_nr_own);

    *nr = n > COL_OWN_MAX ? COL_OWN_MAX : n;
    *cap = COL_OWN_MAX;
    return col_own;
}

/* libunwind maps and unmaps its own caches (a thread's at its exit, from a
 * TLS destructor outside any hook): those calls are the collector's. */
static uintptr_t col_tool_lo, col_tool_hi;

static int col_find_unwinder(struct dl_phdr_info *info, size_t size, void *arg)
{
    const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;

    (void)size, (void)arg;
    base = base ? base + 1 : info->dlpi_name;
    if (!base || strncmp(base, "libunwind", 9))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        if (!col_tool_lo || lo < col_tool_lo)
            col_tool_lo = lo;
        if (lo + ph->p_memsz > col_tool_hi)
            col_tool_hi = lo + ph->p_memsz;
    }
    return 0;
}

void col_maps_tool_init(void)
{
    col_dl_iterate_phdr(col_find_unwinder, NULL);
}

int col_maps_tool_caller(const void *ra)
{
    return (uintptr_t)ra >= col_tool_lo && (uintptr_t)ra < col_tool_hi;
}

/* The end of the collector's own range that holds addr, or 0; else, in
 * *next, the lowest own range start above addr (hi if none). */
static uint64_t col_maps_own_at(uint64_t addr, uint64_t hi, uint64_t *next)
{
    unsigned n = atomic_load(&col_nr_own);

    if (n > COL_OWN_MAX)
        n = COL_OWN_MAX;
    *next = hi;
    for (unsigned i = 0; i < n; i++) {
        if (addr >= col_own[i].lo && addr < col_own[i].hi)
            return col_own[i].hi;
        if (col_own[i].lo > addr && col_own[i].lo < *next)
            *next = col_own[i].lo;
    }
    return 0;
}

static uint64_t col_hex(const char **s, const char *end)
{
    uint64_t v = 0;

    for (; *s < end; (*s)++) {
        char c = **s;
        unsigned d;

        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else
            break;
        v = v << 4 | d;
    }
    return v;
}

static const char *col_skip_field(const char *s, const char *end)
{
    while (s < end && *s != ' ')
        s++;
    while (s < end && *s == ' ')
        s++;
    return s;
}

/* One maps line: "lo-hi rwxp offset dev inode   path". */
static void col_maps_line(struct col_thread *t, uint64_t ts, const char *s, const char *end)
{
    uint64_t lo, hi, off, inode, extra[4];
    const char *perms, *path;
    int prot = 0, flags;

    lo = col_hex(&s, end);
    if (s >= end || *s++ != '-')
        return;
    hi = col_hex(&s, end);
    s = col_skip_field(s, end);
    perms = s;
    if (end - perms < 4)
        return;
    s = col_skip_field(s, end);
    off = col_hex(&s, end);
    s = col_skip_field(s, end); /* dev */
    s = col_skip_field(s, end);
    inode = 0;
    while (s < end && *s >= '0' && *s <= '9')
        inode = inode * 10 + (uint64_t)(*s++ - '0');
    while (s < end && *s == ' ')
        s++;
    path = s;
    if (end - path >= 10 && !memcmp(path, "[vsyscall]", 10))
        return; /* above the user address space: not the program's to use */
    prot |= perms[0] == 'r' ? PROT_READ : 0;
    prot |= perms[1] == 'w' ? PROT_WRITE : 0;
    prot |= perms[2] == 'x' ? PROT_EXEC : 0;
    flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
    if (inode == 0 && (path == end || *path == '['))
        flags |= MAP_ANONYMOUS;
    if (end - path >= 7 && !memcmp(path, "[stack]", 7))
        flags |= MAP_GROWSDOWN;
    extra[0] = (uint64_t)prot;
    extra[1] = (uint64_t)flags;
    extra[2] = (uint64_t)(int64_t)-1;
    extra[3] = off;
    /* Our rings, and the parts of the line that are our tables (the kernel
     * merges neighbouring anonymous mappings into one line), are marked:
     * they take address space but are not the program's memory. */
    if (end - path >= 16 && !memcmp(path, "/memfd:memscribe", 16)) {
        col_emit_event(t, FMT_SHM_REC_EVENT, FMT_EV_MMAP, FMT_EVF_COLLECTOR, FMT_ORIGIN_SNAPSHOT, 0,
                       ts, lo, hi - lo, extra, 4);
        return;
    }
    while (lo < hi) {
        uint64_t next, own_end, piece_end;

        if (lo >= col_buf_lo && lo < col_buf_hi) {
            lo = col_buf_hi < hi ? col_buf_hi : hi;
            continue;
        }
        own_end = col_maps_own_at(lo, hi, &next);
        if (!own_end && col_buf_lo > lo && col_buf_lo < next)
            next = col_buf_lo;
        piece_end = own_end ? (own_end < hi ? own_end : hi) : next;

        col_emit_event(t, FMT_SHM_REC_EVENT, FMT_EV_MMAP, own_end ? FMT_EVF_COLLECTOR : 0,
                       FMT_ORIGIN_SNAPSHOT, 0, ts, lo, piece_end - lo, extra, 4);
        lo = piece_end;
    }
}

void col_maps_snapshot(struct col_thread *t)
{
    /* Not col_sys_mmap: this buffer is gone before anyone looks. */
    long p = syscall(COL_SYS_MMAP, 0L, (long)COL_MAPS_BUF, (long)(PROT_READ | PROT_WRITE),
                     (long)(MAP_PRIVATE | MAP_ANONYMOUS), -1L, 0L);
    char *buf = (char *)p;
    size_t have = 0;
    uint64_t ts;
    long fd, n;

    if (p < 0 && p > -4096)
        return;
    col_buf_lo = (uintptr_t)p;
    col_buf_hi = (uintptr_t)p + COL_MAPS_BUF;
    fd = syscall(SYS_openat, (long)AT_FDCWD, (long)"/proc/self/maps", (long)(O_RDONLY | O_CLOEXEC));
    if (fd < 0) {
        syscall(SYS_munmap, p, (long)COL_MAPS_BUF);
        col_buf_lo = col_buf_hi = 0;
        return;
    }
    ts = col_stamp(t);
    for (;;) {
        char *nl;

        n = syscall(SYS_read, fd, (long)(buf + have), (long)(COL_MAPS_BUF - have));
        if (n <= 0)
            break;
        have += (size_t)n;
        while ((nl = memchr(buf, '\n', have))) {
            col_maps_line(t, ts, buf, nl);
            have -= (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, have);
        }
        if (have == COL_MAPS_BUF)
            have = 0; /* a line longer than the buffer: drop it */
    }
    col_stamp_done(t);
    syscall(SYS_close, fd);
    syscall(SYS_munmap, p, (long)COL_MAPS_BUF);
    col_buf_lo = col_buf_hi = 0;
}
