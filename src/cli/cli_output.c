/* SPDX-License-Identifier: MIT */
/* The files commands write: html, plot and flamegraph's page or picture,
 * and every other -o, --svg, --script (cli_output.h). */
#include "cli/cli_output.h"

#include <errno.h>
#include <fcntl.h>
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

int cli_output_create(const char *cmd, const char *path, struct util_outfile *o)
{
    struct util_outfile mine;
    int fd = util_outfile_open(path, O_WRONLY, 0644, o ? o : &mine);

    if (fd < 0)
        cli_die("%s: %s: cannot create it: %s", cmd, path, (o ? o : &mine)->why);
    return fd;
}

FILE *cli_output_stream(const char *cmd, const char *path)
{
    int fd = cli_output_create(cmd, path, NULL);
    FILE *f = fdopen(fd, "w");

    if (!f)
        cli_die("%s: %s: %s", cmd, path, strerror(errno));
    return f;
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
    o->f = cli_output_stream(cmd, output);
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
