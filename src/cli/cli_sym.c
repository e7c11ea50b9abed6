/* SPDX-License-Identifier: MIT */
/* Symbolized stacks for subcommands: shared options, a symbolizer loaded
 * with a trace's module map, and printing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_text.h"
#include "cli/cli.h"
#include "cli/cli_sym.h"

bool cli_sym_option(const char *cmd, int c, const char *arg, struct cli_sym_opts *o)
{
    switch (c) {
    case CLI_SYM_OPT_DEBUG_DIR:
        if (o->so.nr_debug_dirs == CLI_SYM_MAX_DEBUG_DIRS)
            cli_usage_error("%s: at most %d --debug-dir options", cmd, CLI_SYM_MAX_DEBUG_DIRS);
        o->debug_dirs[o->so.nr_debug_dirs++] = arg;
        return true;
    case CLI_SYM_OPT_SYSROOT:
        o->so.sysroot = arg;
        return true;
    case CLI_SYM_OPT_ALL_FRAMES:
        o->so.show_internal = true;
        return true;
    case CLI_SYM_OPT_RAW:
        o->so.raw = true;
        return true;
    case CLI_SYM_OPT_FULL_NAMES:
        o->so.full_names = true;
        return true;
    case CLI_SYM_OPT_VERBOSE:
        o->so.verbose = true;
        return true;
    case CLI_SYM_OPT_SYMBOL_PATH:
        o->so.symbol_path = arg;
        return true;
    case CLI_SYM_OPT_ALLOC_FN:
        if (o->so.nr_alloc_fns == CLI_SYM_MAX_ALLOC_FNS)
            cli_usage_error("%s: at most %d --alloc-fn options", cmd, CLI_SYM_MAX_ALLOC_FNS);
        if (!*arg)
            cli_usage_error("%s: --alloc-fn wants a function's name", cmd);
        o->alloc_fns[o->so.nr_alloc_fns++] = arg;
        return true;
    default:
        return false;
    }
}

/* --alloc-fn's names and MEMSCRIBE_ALLOC_FNS's in one list, which lives
 * as long as the process (the symbolizer copies it). */
static size_t alloc_fns(const struct cli_sym_opts *o, const char *const **out)
{
    static const char *all[2 * CLI_SYM_MAX_ALLOC_FNS];
    static char *env;
    static size_t nr_env;
    const char *e = getenv("MEMSCRIBE_ALLOC_FNS");

    if (e && !env && (env = strdup(e)))
        for (char *save, *w = strtok_r(env, ",\n", &save); w && nr_env < CLI_SYM_MAX_ALLOC_FNS;
             w = strtok_r(NULL, ",\n", &save))
            all[CLI_SYM_MAX_ALLOC_FNS + nr_env++] = w;
    size_t n = 0;
    for (size_t i = 0; i < o->so.nr_alloc_fns; i++)
        all[n++] = o->alloc_fns[i];
    for (size_t i = 0; i < nr_env; i++)
        all[n++] = all[CLI_SYM_MAX_ALLOC_FNS + i];
    *out = all;
    return n;
}

struct ana_sym_options cli_sym_options(const struct cli_sym_opts *o)
{
    struct ana_sym_options so = o->so;

    so.debug_dirs = o->debug_dirs;
    so.nr_alloc_fns = alloc_fns(o, &so.alloc_fns);
    /* memscribe serve names one for every query it runs (cli_serve_query.c) */
    const char *cache = getenv("MEMSCRIBE_SYMBOL_CACHE");
    so.cache = cache && *cache ? cache : NULL;
    return so;
}

struct ana_sym *cli_sym_open(const char *cmd, const struct cli_sym_opts *o,
                             const struct fmt_reader *r)
{
    struct ana_sym_options so = cli_sym_options(o);
    struct ana_sym *s;
    int rc = ana_sym_create(&s, &so);

    if (rc)
        cli_die("%s: symbolizer: %s", cmd, strerror(-rc));
    if ((rc = ana_sym_add_trace_modules(s, r)))
        cli_die("%s: symbolizer: %s", cmd, strerror(-rc));
    return s;
}

void cli_sym_print_stack(const char *cmd, FILE *out, struct ana_sym *s, uint32_t image,
                         const uint64_t *frames, uint32_t nr, const char *indent)
{
    struct ana_sym_stack st = {0};
    char line[1024];
    int rc = ana_sym_stack(s, image, frames, nr, &st);

    if (rc)
        cli_die("%s: symbolizer: %s", cmd, strerror(-rc));
    for (uint32_t i = 0; i < st.nr_lines; i++) {
        int n = ana_sym_format_line(&st.lines[i], line, sizeof(line));
        /* Very long C++ names are cut, never the line structure; the
         * program's names are escaped (ana_text.h). */
        fputs(indent, out);
        ana_text_put(out, line, strlen(line));
        fputs(n >= (int)sizeof(line) ? "...\n" : "\n", out);
    }
    ana_sym_stack_release(&st);
}

void cli_sym_print_notes(FILE *out, const struct ana_sym *s)
{
    for (size_t i = 0; i < ana_sym_nr_notes(s); i++)
        fprintf(out, "# note: %s\n", ana_sym_note(s, i));
}
