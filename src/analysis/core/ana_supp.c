/* SPDX-License-Identifier: MIT */
/* Suppressions of the runtime's one-time allocations (see ana_supp.h). */
#include "analysis/core/ana_supp.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/sym/ana_symbolize.h"

/* Allocations every program of a kind makes once and never frees. */
static const char *const default_rules[] = {
    /* libstdc++'s emergency exception pool (eh_alloc.cc), made by its
     * static constructor while ld.so runs the libraries' initializers:
     * with symbols, and as module+offset without them. */
    "*pool::pool()*eh_alloc.cc*",
    "libstdc++.so*+0x* < call_init (*",
    "libstdc++.so*+0x* < ld-linux*.so*+0x*",
    /* stdio's buffer of a stream, made at its first use, kept until exit. */
    "_IO_file_doallocate (*",
};

static int add(char ***rules, size_t *nr, const char *rule)
{
    char **v = realloc(*rules, (*nr + 1) * sizeof(*v));

    if (!v)
        return -ENOMEM;
    *rules = v;
    if (!(v[*nr] = strdup(rule)))
        return -ENOMEM;
    (*nr)++;
    return 0;
}

int ana_supp_add_defaults(struct ana_supp *s)
{
    int rc = 0;

    for (size_t i = 0; i < sizeof(default_rules) / sizeof(default_rules[0]) && !rc; i++)
        rc = add(&s->rules, &s->nr_rules, default_rules[i]);
    return rc;
}

/* A suppressions file is a few rules: a larger one is not one (LSan's own
 * files are a few kilobytes). */
#define ANA_SUPP_MAX_SIZE (1u << 20)

static int unread(const char *path, const char *why, char *err, size_t err_size)
{
    snprintf(err, err_size, "%s: cannot read the suppressions: %s", path, why);
    return -EINVAL;
}

/* The text of path into *out, NUL-terminated, if it is a regular file of at
 * most ANA_SUPP_MAX_SIZE bytes, refused as trace inputs are (fmt_reader.c):
 * /dev/zero would grow memory without end, a FIFO would hang, a folder
 * would read as no rules. O_NONBLOCK so that opening a FIFO does not wait
 * for a writer before the check; at most the bound is read, also of a file
 * that grows meanwhile. */
static int read_rules(const char *path, char **out, char *err, size_t err_size)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY), rc = 0;
    struct stat st;
    char *text = NULL;
    size_t len = 0;

    if (fd < 0 || fstat(fd, &st))
        rc = unread(path, strerror(errno), err, err_size);
    else if (!S_ISREG(st.st_mode))
        rc = unread(path, "not a regular file", err, err_size);
    else if (!(text = malloc(ANA_SUPP_MAX_SIZE + 2)))
        rc = -ENOMEM;
    while (!rc) {
        ssize_t n = read(fd, text + len, ANA_SUPP_MAX_SIZE + 1 - len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = n < 0 ? unread(path, strerror(errno), err, err_size) : 0;
            break;
        }
        len += (size_t)n;
        if (len > ANA_SUPP_MAX_SIZE) {
            snprintf(err, err_size,
                     "%s: cannot read the suppressions: larger than a rules file's %u bytes", path,
                     ANA_SUPP_MAX_SIZE);
            rc = -EINVAL;
        }
    }
    if (fd >= 0)
        close(fd);
    if (!rc) {
        text[len] = 0;
        if (strlen(text) != len)
            rc = unread(path, "a NUL byte in it: not a text file of rules", err, err_size);
    }
    if (rc)
        free(text);
    else
        *out = text;
    return rc;
}

/* One file of rules: the same syntax for memscribe's and for
 * LeakSanitizer's (its parser trims blanks around a line). */
int ana_supp_load_file(struct ana_supp *s, const char *path, bool lsan, char *err, size_t err_size)
{
    char **rules = lsan ? s->lsan_rules : s->rules, *text = NULL, *line, *next;
    size_t nr_rules = lsan ? s->nr_lsan_rules : s->nr_rules;
    unsigned nr = 0;
    int rc = read_rules(path, &text, err, err_size);

    for (line = text; !rc && *line; line = next) {
        size_t len = strcspn(line, "\n");

        next = line + len + (line[len] == '\n');
        line[len] = 0;
        nr++;
        while (len > 0 && strchr("\r \t", line[len - 1]))
            line[--len] = 0;
        const char *p = line + strspn(line, " \t");
        if (!*p || *p == '#')
            continue;
        if (strncmp(p, "leak:", 5) || !p[5]) {
            snprintf(err, err_size, "%s:%u: a rule is 'leak:PATTERN' (docs/leaks.md), not '%s'",
                     path, nr, p);
            rc = -EINVAL;
        } else {
            rc = add(&rules, &nr_rules, p + 5);
        }
    }
    free(text);
    if (lsan) {
        s->lsan_rules = rules;
        s->nr_lsan_rules = nr_rules;
    } else {
        s->rules = rules;
        s->nr_rules = nr_rules;
    }
    return rc;
}

/* Where the n bytes of piece first occur in str, or NULL. */
static const char *find_piece(const char *str, const char *piece, size_t n)
{
    for (; *str; str++)
        if (!strncmp(str, piece, n))
            return str;
    return n ? NULL : str;
}

bool ana_supp_lsan_match(const char *pattern, const char *name)
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
static const char *lsan_match(const struct ana_supp *s, struct fmt_reader *r, struct ana_stacks *st,
                              uint32_t stack, int *rc)
{
    struct ana_sym_stack ss = {0};
    uint32_t image;
    int depth = fmt_reader_stack(r, stack, &image, NULL, 0);
    uint64_t *addrs = depth > 0 ? malloc((size_t)depth * sizeof(*addrs)) : NULL;
    const char *hit = NULL;

    *rc = depth < 0 ? depth : depth && !addrs ? -ENOMEM : 0;
    if (!*rc && depth)
        depth = fmt_reader_stack(r, stack, &image, addrs, (uint32_t)depth);
    if (!*rc && depth > 0)
        *rc = ana_sym_stack(ana_stacks_sym(st), image, addrs, (uint32_t)depth, &ss);
    free(addrs);
    if (*rc)
        return NULL;
    for (uint32_t i = 0; i < ss.nr_lines && !hit; i++) {
        const struct ana_sym_frame *f = ss.lines[i].frame;
        for (size_t k = 0; k < s->nr_lsan_rules && !hit; k++) {
            const char *rule = s->lsan_rules[k];
            if (ana_supp_lsan_match(rule, f->module) || ana_supp_lsan_match(rule, f->function) ||
                ana_supp_lsan_match(rule, f->file))
                hit = rule;
        }
    }
    ana_sym_stack_release(&ss);
    return hit;
}

const char *ana_supp_match(const struct ana_supp *s, struct fmt_reader *r, struct ana_stacks *st,
                           uint32_t stack, int *rc)
{
    *rc = 0;
    if (s->nr_lsan_rules && stack) {
        const char *hit = lsan_match(s, r, st, stack, rc);
        if (hit || *rc)
            return hit;
    }
    if (!s->nr_rules)
        return NULL;
    const struct ana_frame *f;
    int n = ana_stacks_frames(st, stack, &f); /* each row once: not kept */
    if (n < 0) {
        *rc = n;
        return NULL;
    }
    size_t len = 1;
    for (int i = 0; i < n; i++)
        len += strlen(ana_stacks_str(st, f[i].place)) + 3;
    char *text = malloc(len);
    if (!text) {
        *rc = -ENOMEM;
        return NULL;
    }
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

void ana_supp_release(struct ana_supp *s)
{
    for (size_t i = 0; i < s->nr_rules; i++)
        free(s->rules[i]);
    free(s->rules);
    for (size_t i = 0; i < s->nr_lsan_rules; i++)
        free(s->lsan_rules[i]);
    free(s->lsan_rules);
    memset(s, 0, sizeof(*s));
}
