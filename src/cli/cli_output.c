/* SPDX-License-Identifier: MIT */
/* The output file of html, plot and flamegraph (cli_output.h). */
#include "cli/cli_output.h"

#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

/* <trace's file name without .mscr><suffix>, in the current folder. */
static char *output_name(const char *cmd, const char *trace, const char *suffix)
{
    char *copy = strdup(trace), *name;
    const char *base;
    size_t len;

    if (!copy)
        cli_die("%s: out of memory", cmd);
    base = basename(copy);
    len = strlen(base);
    if (len > 5 && !strcmp(base + len - 5, ".mscr"))
        len -= 5;
    if (asprintf(&name, "%.*s%s", (int)len, base, suffix) < 0)
        cli_die("%s: out of memory", cmd);
    free(copy);
    return name;
}

void cli_output_open(struct cli_output *o, const char *cmd, const char *output, const char *trace,
                     const char *suffix)
{
    o->f = stdout;
    o->name = "stdout";
    o->made = NULL;
    if (output && !strcmp(output, "-"))
        return;
    if (!output) {
        if (!isatty(STDOUT_FILENO))
            return;
        output = o->made = output_name(cmd, trace, suffix);
    }
    o->name = output;
    if (!(o->f = fopen(output, "w")))
        cli_die("%s: %s: %s", cmd, output, strerror(errno));
}

int cli_output_close(struct cli_output *o, const char *cmd, int rc)
{
    if (o->f != stdout && fclose(o->f) && !rc)
        rc = -errno;
    if (o->made && !rc)
        cli_warn("%s: wrote %s (standard output is a terminal; -o FILE or -o - to choose)", cmd,
                 o->made);
    free(o->made);
    o->made = NULL;
    return rc;
}
