/* SPDX-License-Identifier: MIT */
/* memscribe record of a Windows program under Wine (cmd_record_win.c). */
#ifndef CMD_RECORD_WIN_H
#define CMD_RECORD_WIN_H

#include <stdint.h>

/* The record options as parsed by cmd_record. */
struct cmd_record_win_opts {
    const char *out_path; /* NULL: <program>.<pid>.mscr */
    uint32_t time_unit_ns;
    uint32_t depth;
    int quiet;
    /* Linux-only options: refused for a Windows program */
    int no_follow;
    const char *only;
    uint64_t sample_bytes;
};

/* Trace prog (a PE file of machine, from rec_win_pe_machine) run with
 * argv[1..argc) under Wine. Returns the exit code of `memscribe record`. */
int cmd_record_win(const char *prog, unsigned machine, int argc, char **argv,
                   const struct cmd_record_win_opts *o);

#endif
