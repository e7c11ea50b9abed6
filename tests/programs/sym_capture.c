/* SPDX-License-Identifier: MIT */
/* A tiny stand-in for the collector, preloaded into sym_chain by the
 * symbolizer's unit tests: malloc calls whose size marks a test case
 * (SYM_SIZE_BASE..+63) record their stack with unw_backtrace, as the
 * collector does, together with the module map at that moment. Output goes
 * to the file named by SYM_CAPTURE_OUT, one line per record:
 *
 *     module <base> <build id hex or -> <nr segs> [<vaddr> <memsz> <offset> <flags>]... <path>
 *     stack <size> <nr> <addr>...
 *
 * Addresses in hex. Inside malloc nothing may allocate: raw write(2), a
 * static buffer, snprintf on integers only. */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "sym_cases.h"

extern void *__libc_malloc(size_t size);

static int out_fd = -1;
static char exe_path[4096];
static char line[8192];
static size_t line_len;

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void put(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    int n = vsnprintf(line + line_len, sizeof(line) - line_len, fmt, ap);
    va_end(ap);
    if (n > 0)
        line_len += (size_t)n < sizeof(line) - line_len ? (size_t)n : sizeof(line) - line_len - 1;
}

static void flush_line(void)
{
    put("\n");
    if (write(out_fd, line, line_len) < 0)
        _exit(99);
    line_len = 0;
}

static void put_build_id(const struct dl_phdr_info *info)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        const unsigned char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            const unsigned char *name = p + sizeof(*nh);
            const unsigned char *desc = name + ((nh->n_namesz + 3) & ~3u);
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
                put(" ");
                for (unsigned k = 0; k < nh->n_descsz; k++)
                    put("%02x", desc[k]);
                return;
            }
            p = desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
    put(" -");
}

static int put_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    unsigned nr = 0;

    for (int i = 0; i < info->dlpi_phnum; i++)
        nr += info->dlpi_phdr[i].p_type == PT_LOAD;
    put("module %lx", (unsigned long)info->dlpi_addr);
    put_build_id(info);
    put(" %u", nr);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD)
            put(" %lx %lx %lx %x", (unsigned long)ph->p_vaddr, (unsigned long)ph->p_memsz,
                (unsigned long)ph->p_offset, (unsigned)ph->p_flags);
    }
    /* The main program has an empty name: use its real path. */
    put(" %s", info->dlpi_name[0] ? info->dlpi_name : exe_path);
    flush_line();
    return 0;
}

static __attribute__((noinline)) void capture(size_t size)
{
    void *frames[SYM_MAX_FRAMES + 2];
    int n = unw_backtrace(frames, SYM_MAX_FRAMES + 2);

    dl_iterate_phdr(put_module, NULL);
    /* frames[0] is in capture(), frames[1] in malloc: like the collector's
     * own frames, they are not part of the recorded stack. */
    put("stack %zu %d", size, n > 2 ? n - 2 : 0);
    for (int i = 2; i < n; i++)
        put(" %lx", (unsigned long)(uintptr_t)frames[i]);
    flush_line();
}

void *malloc(size_t size)
{
    void *p = __libc_malloc(size);

    if (out_fd >= 0 && size >= SYM_SIZE_BASE && size < SYM_SIZE_BASE + 64)
        capture(size);
    return p;
}

__attribute__((constructor)) static void capture_init(void)
{
    const char *out = getenv("SYM_CAPTURE_OUT");
    void *warm[4];

    ssize_t n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
    exe_path[n > 0 ? n : 0] = '\0';
    /* The first unw_backtrace scans the modules: do it outside malloc. */
    unw_backtrace(warm, 4);
    if (out)
        out_fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}
