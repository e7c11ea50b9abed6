/* SPDX-License-Identifier: MIT */
/* win_trace IN.mswin OUT.mscr: the launcher's interim event file as a
 * memscribe trace (docs/windows.md, "The trace"), for every analysis
 * command. Host tool. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/util_outfile.h"
#include "win_conv.h"
#include "win_trace.h"

int main(int argc, char **argv)
{
    struct util_outfile made;
    struct win_conv_stats st;
    struct win_file f;
    char err[512];
    int fd, rc;

    if (argc != 3) {
        fprintf(stderr, "usage: win_trace IN.mswin OUT.mscr\n");
        return 2;
    }
    if (win_file_load(&f, argv[1], err, sizeof(err))) {
        fprintf(stderr, "win_trace: %s\n", err);
        return 1;
    }
    fd = util_outfile_open(argv[2], O_WRONLY, 0600, &made); /* as record's */
    if (fd < 0) {
        fprintf(stderr, "win_trace: %s: cannot create it: %s\n", argv[2], made.why);
        win_file_release(&f);
        return 1;
    }
    rc = win_trace_write(&f, fd, &st, 0, err, sizeof(err));
    if (close(fd) && !rc) {
        snprintf(err, sizeof(err), "%s", strerror(errno));
        rc = -1;
    }
    win_file_release(&f);
    if (rc) {
        fprintf(stderr, "win_trace: %s: %s\n", argv[2], err);
        return 1;
    }
    fprintf(stderr,
            "win_trace: %zu events (%zu nested heap calls left out, %zu blocks ended by "
            "HeapDestroy)\n",
            st.events, st.nested, st.destroy_frees);
    return 0;
}
