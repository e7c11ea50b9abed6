/* SPDX-License-Identifier: MIT */
/* Suppressions of the runtime's one-time allocations (see cli_supp.h). */
#include "cli/cli_supp.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/sym/ana_symbolize.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"
#include "format/fmt_shm.h"

/* Allocations every program of a kind makes once and never frees. */
static const char *const default_rules[] = {
    /* libstdc++'s emergency exception pool (eh_alloc.cc), made by its
     * static constructor while ld.so runs the libraries' initializers:
     * with symbols, and as module+offset without them. */
    "*pool::pool()*eh_alloc.cc*",
    "libstdc++.so*+0x* < call_init (*",
    /* stdio's buffer of a stream, made at its first use, kept until exit. */
    "_IO_file_doallocate (*",
};

static void add(char ***rules, size_t *nr, const char *cmd, const char *rule)
{
    char **v = realloc(*rules, (*nr + 1) * sizeof(*v));

    if (!v || !(v[*nr] = strdup(rule)))
        cli_die("%s: out of memory", cmd);
    *rules = v;
    (*nr)++;
}

/* A suppressions file is a few rules: a larger one is not one (LSan's own
 * files are a few kilobytes). */
#define CLI_SUPP_MAX_SIZE (1u << 20)

static void die_unread(const char *cmd, const char *path, const char *why)
{
    cli_die("%s: %s: cannot read the suppressions: %s", cmd, path, why);
}

/* The text of path, NUL-terminated, if it is a regular file of at most
 * CLI_SUPP_MAX_SIZE bytes, refused as trace inputs are (fmt_reader.c):
 * /dev/zero would grow memory without end, a FIFO would hang, a folder
 * would read as no rules. O_NONBLOCK so that opening a FIFO does not wait
 * for a writer before the check; at most the bound is read, also of a file
 * that grows meanwhile. Dies otherwise. */
static char *read_rules(const char *cmd, const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    char *text;
    size_t len = 0;

    if (fd < 0 || fstat(fd, &st))
        die_unread(cmd, path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        die_unread(cmd, path, "not a regular file");
    if (!(text = malloc(CLI_SUPP_MAX_SIZE + 2)))
        cli_die("%s: out of memory", cmd);
    for (;;) {
        ssize_t n = read(fd, text + len, CLI_SUPP_MAX_SIZE + 1 - len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            die_unread(cmd, path, strerror(errno));
        if (n == 0)
            break;
        len += (size_t)n;
        if (len > CLI_SUPP_MAX_SIZE)
            cli_die("%s: %s: cannot read the suppressions: larger than a rules file's %u bytes",
                    cmd, path, CLI_SUPP_MAX_SIZE);
    }
    close(fd);
    text[len] = 0;
    if (strlen(text) != len)
        die_unread(cmd, path, "a NUL byte in it: not a text file of rules");
    return text;
}

/* One file of rules into rules: the same syntax for memscribe's and for
 * LeakSanitizer's (its parser trims blanks around a line). */
static void load_file(char ***rules, size_t *nr_rules, const char *cmd, const char *path)
{
    char *text = read_rules(cmd, path), *line = text, *next;
    unsigned nr = 0;

    for (; *line; line = next) {
        size_t len = strcspn(line, "\n");

        next = line + len + (line[len] == '\n');
        line[len] = 0;
        nr++;
        while (len > 0 && strchr("\r \t", line[len - 1]))
            line[--len] = 0;
        const char *p = line + strspn(line, " \t");
        if (!*p || *p == '#')
            continue;
        if (strncmp(p, "leak:", 5) || !p[5])
            cli_die("%s: %s:%u: a rule is 'leak:PATTERN' (docs/leaks.md), not '%s'", cmd, path, nr,
                    p);
        add(rules, nr_rules, cmd, p + 5);
    }
    free(text);
}

void cli_supp_load(struct cli_supp *s, struct cli_ana *a)
{
    if (s->loaded)
        return;
    s->loaded = true;
    if (!s->no_defaults)
        for (size_t i = 0; i < sizeof(default_rules) / sizeof(default_rules[0]); i++)
            add(&s->rules, &s->nr_rules, a->cmd, default_rules[i]);
    for (unsigned i = 0; i < s->nr_files; i++)
        load_file(&s->rules, &s->nr_rules, a->cmd, s->files[i]);
    for (unsigned i = 0; i < s->nr_lsan_files; i++)
        load_file(&s->lsan_rules, &s->nr_lsan_rules, a->cmd, s->lsan_files[i]);
}

/* Where the n bytes of piece first occur in str, or NULL. */
static const char *find_piece(const char *str, const char *piece, size_t n)
{
    for (; *str; str++)
        if (!strncmp(str, piece, n))
            return str;
    return n ? NULL : str;
}

bool cli_supp_lsan_match(const char *pattern, const char *name)
{
    bool start = false, asterisk = false;

    if (!name || !*name)
        return false;
    if (*pattern == '^') {
        start = true;
        pattern++;
    }
    while (*pattern) {
        if (*pattern == '*') {
            pattern++;
            start = false;
            asterisk = true;
            continue;
        }
        if (*pattern == '$')
            return !*name || asterisk;
        if (!*name)
            return false;
        size_t n = strcspn(pattern, "*$");
        const char *at = find_piece(name, pattern, n);
        if (!at || (start && at != name))
            return false;
        name = at + n;
        pattern += n;
        start = asterisk = false;
    }
    return true;
}

/* The LSan rule that matches a frame of stack, or NULL. LSan tries each
 * address's module path, then the function and file of each frame the
 * address reads as (inlined ones too): all of them here, from the stack
 * as memscribe cleans it (the allocator's and memscribe's frames cut). */
static const char *lsan_match(const struct cli_supp *s, struct cli_ana *a, uint32_t stack)
{
    uint64_t addrs[FMT_SHM_MAX_DEPTH];
    struct ana_sym_stack ss = {0};
    uint32_t image;
    int depth = fmt_reader_stack(a->r, stack, &image, addrs, FMT_SHM_MAX_DEPTH), rc;
    const char *hit = NULL;

    if (depth < 0)
        cli_ana_fail(a, depth);
    if ((rc = ana_sym_stack(ana_stacks_sym(cli_ana_stacks(a)), image, addrs,
                            depth < FMT_SHM_MAX_DEPTH ? (uint32_t)depth : FMT_SHM_MAX_DEPTH, &ss)))
        cli_ana_fail(a, rc);
    for (uint32_t i = 0; i < ss.nr_lines && !hit; i++) {
        const struct ana_sym_frame *f = ss.lines[i].frame;
        for (size_t k = 0; k < s->nr_lsan_rules && !hit; k++) {
            const char *r = s->lsan_rules[k];
            if (cli_supp_lsan_match(r, f->module) || cli_supp_lsan_match(r, f->function) ||
                cli_supp_lsan_match(r, f->file))
                hit = r;
        }
    }
    ana_sym_stack_release(&ss);
    return hit;
}

const char *cli_supp_match(const struct cli_supp *s, struct cli_ana *a, uint32_t stack)
{
    if (s->nr_lsan_rules && stack) {
        const char *hit = lsan_match(s, a, stack);
        if (hit)
            return hit;
    }
    if (!s->nr_rules)
        return NULL;
    struct ana_stacks *st = cli_ana_stacks(a);
    const struct ana_frame *f;
    int n = ana_stacks_frames(st, stack, &f); /* each row once: not kept */
    if (n < 0)
        cli_ana_fail(a, n);
    size_t len = 1;
    for (int i = 0; i < n; i++)
        len += strlen(ana_stacks_str(st, f[i].place)) + 3;
    char *text = malloc(len);
    if (!text)
        cli_die("%s: out of memory", a->cmd);
    text[0] = 0;
    for (int i = 0, at = 0; i < n; i++)
        at += sprintf(text + at, "%s%s", i ? " < " : "", ana_stacks_str(st, f[i].place));
    const char *hit = NULL;
    for (size_t i = 0; i < s->nr_rules && !hit; i++)
        if (!fnmatch(s->rules[i], text, 0))
            hit = s->rules[i];
    free(text);
    return hit;
}

void cli_supp_release(struct cli_supp *s)
{
    for (size_t i = 0; i < s->nr_rules; i++)
        free(s->rules[i]);
    free(s->rules);
    for (size_t i = 0; i < s->nr_lsan_rules; i++)
        free(s->lsan_rules[i]);
    free(s->lsan_rules);
    s->rules = s->lsan_rules = NULL;
    s->nr_rules = s->nr_lsan_rules = 0;
    s->loaded = false;
}
