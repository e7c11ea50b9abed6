/* SPDX-License-Identifier: MIT */
/* Runs sym_chain under libsym_capture.so and parses its records. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "test_ana_sym_fixture.h"

#ifndef SYM_PROGRAMS_DIR
#error "SYM_PROGRAMS_DIR: the build's tests/programs directory"
#endif
#ifndef SYM_SOURCE_DIR
#error "SYM_SOURCE_DIR: the source tree's tests/programs directory"
#endif

const char *symfix_program(const char *name)
{
    static char path[4][1024];
    static int next;
    char *p = path[next++ % 4];

    snprintf(p, sizeof(path[0]), "%s/%s", SYM_PROGRAMS_DIR, name);
    return p;
}

int symfix_sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int hex_bytes(const char *hex, uint8_t *out, uint32_t max)
{
    uint32_t n = 0;

    if (!strcmp(hex, "-"))
        return 0;
    for (; hex[0] && hex[1] && n < max; hex += 2) {
        unsigned v;
        if (sscanf(hex, "%2x", &v) != 1)
            return -1;
        out[n++] = (uint8_t)v;
    }
    return (int)n;
}

static int parse_module(struct symfix *fx, char *line)
{
    struct fmt_module m = {0};
    char id[2 * FMT_MAX_BUILD_ID + 2];
    int pos = 0;
    unsigned long base;

    if (sscanf(line, "module %lx %129s %u%n", &base, id, &m.nr_segments, &pos) != 3 ||
        m.nr_segments > FMT_MAX_SEGMENTS)
        return -1;
    m.base = base;
    int len = hex_bytes(id, m.build_id, FMT_MAX_BUILD_ID);
    if (len < 0)
        return -1;
    m.build_id_len = (uint32_t)len;
    char *p = line + pos;
    for (uint32_t i = 0; i < m.nr_segments; i++) {
        unsigned long v, sz, off;
        unsigned flags;
        int used;
        if (sscanf(p, " %lx %lx %lx %x%n", &v, &sz, &off, &flags, &used) != 4)
            return -1;
        m.segments[i] =
            (struct fmt_segment){.vaddr = v, .memsz = sz, .offset = off, .flags = flags};
        p += used;
    }
    while (*p == ' ')
        p++;
    p[strcspn(p, "\n")] = '\0';
    for (size_t i = 0; i < fx->nr_modules; i++)
        if (fx->modules[i].base == m.base && !strcmp(fx->modules[i].path, p))
            return 0;
    if (fx->nr_modules == SYMFIX_MAX_MODULES)
        return -1;
    m.path = strdup(p);
    m.path_len = (uint32_t)strlen(p);
    fx->modules[fx->nr_modules++] = m;
    return 0;
}

static int parse_stack(struct symfix *fx, char *line)
{
    struct symfix_stack *st = &fx->stacks[fx->nr_stacks];
    unsigned long size;
    unsigned nr;
    int pos;

    if (fx->nr_stacks == SYMFIX_MAX_STACKS ||
        sscanf(line, "stack %lu %u%n", &size, &nr, &pos) != 2 || nr > SYMFIX_MAX_FRAMES)
        return -1;
    st->size = size;
    st->nr = nr;
    char *p = line + pos;
    for (unsigned i = 0; i < nr; i++) {
        unsigned long a;
        int used;
        if (sscanf(p, " %lx%n", &a, &used) != 1)
            return -1;
        st->addrs[i] = a;
        p += used;
    }
    fx->nr_stacks++;
    return 0;
}

int symfix_run(struct symfix *fx)
{
    char path[512], line[16384];

    memset(fx, 0, sizeof(*fx));
    snprintf(fx->tmpdir, sizeof(fx->tmpdir), "/tmp/test_ana_sym.XXXXXX");
    if (!mkdtemp(fx->tmpdir)) {
        perror("mkdtemp");
        return -1;
    }
    if (symfix_sh("SYM_CAPTURE_OUT=%s/capture.txt LD_PRELOAD=%s %s > %s/stdout.txt", fx->tmpdir,
                  symfix_program("libsym_capture.so"), symfix_program("sym_chain"), fx->tmpdir)) {
        fprintf(stderr, "symfix: running sym_chain failed\n");
        return -1;
    }
    snprintf(path, sizeof(path), "%s/capture.txt", fx->tmpdir);
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    int rc = 0;
    while (!rc && fgets(line, sizeof(line), f)) {
        if (!strncmp(line, "module ", 7))
            rc = parse_module(fx, line);
        else if (!strncmp(line, "stack ", 6))
            rc = parse_stack(fx, line);
    }
    fclose(f);
    if (rc) {
        fprintf(stderr, "symfix: %s: bad line: %s", path, line);
        return -1;
    }
    snprintf(path, sizeof(path), "%s/stdout.txt", fx->tmpdir);
    f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    while (fgets(line, sizeof(line), f)) {
        unsigned long a;
        if (sscanf(line, "symbol sym_alias %lx", &a) == 1)
            fx->sym_alias = a;
        else if (sscanf(line, "symbol sym_asm_nosize %lx", &a) == 1)
            fx->sym_asm_nosize = a;
    }
    fclose(f);
    return 0;
}

void symfix_free(struct symfix *fx)
{
    for (size_t i = 0; i < fx->nr_modules; i++)
        free((char *)fx->modules[i].path);
    if (fx->tmpdir[0])
        symfix_sh("rm -rf '%s'", fx->tmpdir);
    fx->nr_modules = 0;
}

const struct symfix_stack *symfix_stack(const struct symfix *fx, uint64_t size)
{
    for (size_t i = 0; i < fx->nr_stacks; i++)
        if (fx->stacks[i].size == size)
            return &fx->stacks[i];
    return NULL;
}

const struct fmt_module *symfix_module(const struct symfix *fx, const char *name)
{
    size_t len = strlen(name);

    for (size_t i = 0; i < fx->nr_modules; i++) {
        const char *p = fx->modules[i].path;
        size_t plen = strlen(p);
        if (plen >= len && !strcmp(p + plen - len, name) &&
            (plen == len || p[plen - len - 1] == '/'))
            return &fx->modules[i];
    }
    return NULL;
}

int symfix_line(const char *file, const char *marker)
{
    char path[1024], line[1024], tag[128];
    int n = 0, found = -1;

    snprintf(path, sizeof(path), "%s/%s", SYM_SOURCE_DIR, file);
    snprintf(tag, sizeof(tag), "@sym:%s", marker);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        n++;
        char *hit = strstr(line, tag);
        /* The whole marker: "@sym:cpp-new" must not match "@sym:cpp-newer". */
        if (hit &&
            !(hit[strlen(tag)] == '-' || (hit[strlen(tag)] >= 'a' && hit[strlen(tag)] <= 'z'))) {
            found = n;
            break;
        }
    }
    fclose(f);
    return found;
}
