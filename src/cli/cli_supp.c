/* SPDX-License-Identifier: MIT */
/* Suppressions of the runtime's one-time allocations (see cli_supp.h). */
#include "cli/cli_supp.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_ana.h"

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

static void add(struct cli_supp *s, const char *cmd, const char *rule)
{
    char **v = realloc(s->rules, (s->nr_rules + 1) * sizeof(*v));

    if (!v || !(v[s->nr_rules] = strdup(rule)))
        cli_die("%s: out of memory", cmd);
    s->rules = v;
    s->nr_rules++;
}

static void load_file(struct cli_supp *s, const char *cmd, const char *path)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    unsigned nr = 0;
    ssize_t len;

    if (!f)
        cli_die("%s: %s: cannot read the suppressions: %s", cmd, path, strerror(errno));
    while ((len = getline(&line, &cap, f)) >= 0) {
        nr++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        const char *p = line + strspn(line, " \t");
        if (!*p || *p == '#')
            continue;
        if (strncmp(p, "leak:", 5) || !p[5])
            cli_die("%s: %s:%u: a rule is 'leak:PATTERN' (docs/leaks.md), not '%s'", cmd, path, nr,
                    p);
        add(s, cmd, p + 5);
    }
    free(line);
    fclose(f);
}

void cli_supp_load(struct cli_supp *s, struct cli_ana *a)
{
    if (!s->no_defaults)
        for (size_t i = 0; i < sizeof(default_rules) / sizeof(default_rules[0]); i++)
            add(s, a->cmd, default_rules[i]);
    for (unsigned i = 0; i < s->nr_files; i++)
        load_file(s, a->cmd, s->files[i]);
}

const char *cli_supp_match(const struct cli_supp *s, struct cli_ana *a, uint32_t stack)
{
    if (!s->nr_rules)
        return NULL;
    struct ana_stacks *st = cli_ana_stacks(a);
    const struct ana_frame *f;
    int n = ana_stacks_get(st, stack, &f);
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
    s->rules = NULL;
    s->nr_rules = 0;
}
