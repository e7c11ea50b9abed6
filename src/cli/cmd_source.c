/* SPDX-License-Identifier: MIT */
/* memscribe source: the lines of source around a frame of the trace, the
 * file found through the trace's own debug information and read only as
 * the trace's owner could read it (cli_source.h). docs/serve.md, "Source". */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/core/ana_text.h"
#include "cli/cli.h"
#include "cli/cli_ana.h"
#include "cli/cli_getopt.h"
#include "cli/cli_source.h"

enum { OPT_FRAME = CLI_ANA_OPT_FIRST_OWN, OPT_CONTEXT };

#define DEFAULT_CONTEXT 8
#define MAX_CONTEXT 1000

static void usage(FILE *out)
{
    fprintf(out, "usage: memscribe source [options] FILE FRAME\n\n"
                 "The source lines around FRAME, a frame as tree, report and the page\n"
                 "name it: 'f (file.c:12)'. The file is the one the trace's debug\n"
                 "information names for that frame, read only if the trace's owner could\n"
                 "read it: an absolute path with no symbolic link on the way, a regular\n"
                 "file of at most 8 MiB.\n\n"
                 "options:\n"
                 "  --frame F       the frame (instead of the second argument)\n"
                 "  --context N     lines before and after it (default 8, at most 1000)\n"
                 "  --format=F      text (default) or json\n"
                 "  -h, --help      this text\n" CLI_SYM_USAGE);
}

/* The lines shown: [first, last] (1-based) of the file's nr. */
struct span {
    uint32_t first, last, nr;
};

/* Where line k (1-based) starts in the text, and its length. */
static const char *line_at(const struct cli_source *src, uint32_t k, size_t *len)
{
    const char *p = src->text, *end = src->text + src->len;

    for (uint32_t i = 1; i < k && p < end; i++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    *len = (size_t)((nl ? nl : end) - p);
    return p;
}

static uint32_t count_lines(const struct cli_source *src)
{
    uint32_t n = 0;

    for (const char *p = src->text; p < src->text + src->len; n++) {
        const char *nl = memchr(p, '\n', (size_t)(src->text + src->len - p));
        p = nl ? nl + 1 : src->text + src->len;
    }
    return n;
}

/* A line for a terminal: tabs to the next multiple of 8 columns, the rest
 * as ana_text_put makes it safe. */
static void put_line(const char *s, size_t len)
{
    size_t col = 0, from = 0;

    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != '\t')
            continue;
        ana_text_put(stdout, s + from, i - from);
        col += i - from;
        if (i < len)
            do
                putchar(' ');
            while (++col % 8);
        from = i + 1;
    }
    putchar('\n');
}

static void print_text(const struct cli_ana *a, const char *frame, const struct ana_place_file *pf,
                       const struct cli_source *src, struct span sp, int changed)
{
    int width = snprintf(NULL, 0, "%" PRIu32, sp.last);

    printf("memscribe source: %s\nframe: %s\nfile: ", a->path, frame);
    ana_text_put(stdout, pf->path, strlen(pf->path));
    printf(", line %" PRIu32 " of %" PRIu32 "\n", pf->line, sp.nr);
    if (changed)
        printf("(the file changed after the trace was written: its lines may have moved)\n");
    putchar('\n');
    for (uint32_t k = sp.first; k <= sp.last; k++) {
        size_t len;
        const char *s = line_at(src, k, &len);
        printf("%c %*" PRIu32 "  ", k == pf->line ? '>' : ' ', width, k);
        put_line(s, len);
    }
}

static void print_json(struct cli_ana *a, const char *frame, const struct ana_place_file *pf,
                       const struct cli_source *src, struct span sp, int changed)
{
    struct ana_json j;

    cli_ana_json_begin(a, &j);
    ana_json_kv_str(&j, "frame", frame);
    ana_json_key(&j, "source");
    ana_json_strn(&j, pf->path, strlen(pf->path));
    ana_json_kv_u64(&j, "line", pf->line);
    ana_json_kv_u64(&j, "file_lines", sp.nr);
    ana_json_kv_bool(&j, "changed", changed);
    ana_json_kv_u64(&j, "first_line", sp.first);
    ana_json_key(&j, "lines");
    ana_json_begin_array(&j);
    for (uint32_t k = sp.first; k <= sp.last; k++) {
        size_t len;
        const char *s = line_at(src, k, &len);
        ana_json_strn(&j, s, len);
    }
    ana_json_end_array(&j);
    ana_json_end_object(&j);
    if (ana_json_finish(&j))
        cli_die("source: cannot write the output");
}

/* The file of frame in a's trace; dies saying why there is none. */
static struct ana_place_file find_file(struct cli_ana *a, const char *frame)
{
    struct ana_stacks *st = cli_ana_stacks(a);
    struct ana_place_file pf;
    uint32_t id;
    int rc;

    if (ana_stacks_intern(st, frame, &id))
        cli_die("source: out of memory");
    rc = ana_stacks_place_file(st, id, &pf);
    if (rc == -ENOENT && !strstr(frame, " ("))
        cli_usage_error("source: '%s' names no file and line: give a frame as tree names it, "
                        "'f (file.c:12)'",
                        frame);
    if (rc == -ENOENT)
        cli_die("source: %s: no frame of the trace reads '%s' with a file and line (its "
                "debug information may be gone)",
                a->path, frame);
    if (rc)
        cli_ana_fail(a, rc);
    if (pf.other)
        cli_die("source: %s: frames of two files read '%s' (%s and %s): no one file to show",
                a->path, frame, pf.path, pf.other);
    return pf;
}

int cmd_source(int argc, char **argv)
{
    static const struct option own[] = {
        {"frame", required_argument, NULL, OPT_FRAME},
        {"context", required_argument, NULL, OPT_CONTEXT},
        {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {
        .takes = CLI_TAKES_FORMAT | CLI_TAKES_SYM | CLI_JSON_NOTES, .own = own, .usage = usage};
    struct cli_ana a;
    const char *frame = NULL;
    uint64_t context = DEFAULT_CONTEXT;
    int c;

    cli_ana_init(&a, "source", 0);
    while ((c = cli_getopt(&g, &a, argc, argv)) != -1) {
        if (c == OPT_FRAME)
            frame = optarg;
        else if (c == OPT_CONTEXT &&
                 (context = cli_ana_number(&a, "--context", optarg)) > MAX_CONTEXT)
            cli_usage_error("source: --context wants at most %d lines", MAX_CONTEXT);
    }
    if (!frame && argc - optind == 2)
        frame = argv[--argc];
    if (!frame || !*frame)
        cli_usage_error("source: which frame? 'memscribe source FILE FRAME' (see --help)");
    if (a.format == CLI_FMT_CSV)
        cli_usage_error("source: --format wants text or json");
    cli_ana_open(&a, argc, argv, optind);

    struct ana_place_file pf = find_file(&a, frame);
    struct stat tst = {0};
    /* The trace's owner: whoever wrote it may see the files its frames
     * name, no one else through it (a crafted trace's #line). */
    uid_t owner = stat(a.path, &tst) ? geteuid() : tst.st_uid;
    struct cli_source src;
    const char *why;
    if (cli_source_read(pf.path, owner, &src, &why))
        cli_die("source: %s: %s", pf.path, why);
    struct span sp = {.nr = count_lines(&src)};
    if (pf.line > sp.nr)
        cli_die("source: %s has %" PRIu32 " lines, the frame is at line %" PRIu32
                ": not the file the program was built from",
                pf.path, sp.nr, pf.line);
    sp.first = pf.line > context ? pf.line - (uint32_t)context : 1;
    sp.last = pf.line + context < sp.nr ? pf.line + (uint32_t)context : sp.nr;
    int changed = tst.st_mtime && src.mtime > tst.st_mtime;
    if (a.format == CLI_FMT_JSON)
        print_json(&a, frame, &pf, &src, sp, changed);
    else
        print_text(&a, frame, &pf, &src, sp, changed);
    cli_source_release(&src);
    return cli_ana_close(&a);
}
