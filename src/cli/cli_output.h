/* SPDX-License-Identifier: MIT */
/* Where a command's page or picture goes. Markup on a terminal helps
 * nobody, so without -o and with standard output on a terminal it goes to
 * a file named after the trace, and the command says so; a pipe or a
 * redirection still gets it on standard output, as does "-o -". */
#ifndef CLI_OUTPUT_H
#define CLI_OUTPUT_H

#include <stdio.h>

#include "util/util_outfile.h"

struct cli_output {
    FILE *f;
    const char *name; /* for messages: the file, or "stdout" */
    char *made;       /* the name chosen for the terminal case, or NULL */
};

/* Create path, a file command cmd writes, the one way memscribe makes its
 * files (util_outfile_open: O_WRONLY, 0644 less the umask), or die naming
 * it and what was refused: "CMD: PATH: cannot create it: WHY". Returns the
 * descriptor; o (may be NULL) says whether the file is new. */
int cli_output_create(const char *cmd, const char *path, struct util_outfile *o);
/* The same, as a stream. */
FILE *cli_output_stream(const char *cmd, const char *path);

/* Open o for command cmd: output is -o's value (NULL: none), trace the
 * trace's path, suffix what follows the trace's name (without .mscr) in
 * the chosen file's name, e.g. ".html" or "-timeline.svg". Dies naming
 * the file if it cannot be opened. */
void cli_output_open(struct cli_output *o, const char *cmd, const char *output, const char *trace,
                     const char *suffix);

/* Close o after a write that returned rc; returns rc, or -errno of the
 * close when rc was 0. Says where a chosen file went. */
int cli_output_close(struct cli_output *o, const char *cmd, int rc);

#endif
