/* SPDX-License-Identifier: MIT */
/* `record --serve` (rec_serve.c): the recorder a collector started itself. */
#ifndef REC_SERVE_H
#define REC_SERVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "recorder/rec_internal.h"

/* The collector hands over its listening socket on fd 3 and waits for a
 * word on fd 4: "ok", or the reason it will not be traced. */
#define REC_SERVE_LFD 3
#define REC_SERVE_WORD_FD 4

struct rec_serve {
    pid_t root;
    int rootfd; /* pidfd of the first program, -1 if it is gone already */
    char sock[108];
    uint64_t last_scan_ns;
};

/* Take over fd 3 and the socket name and secret from the environment.
 * Returns the listening fd, or -1 with a message in msg. */
int rec_serve_init(struct rec_serve *sv, struct rec_session *s, pid_t root, char *msg,
                   size_t msg_size);
/* Has the whole traced tree ended (no image open, nothing queued, no
 * process left that could still say hello)? */
int rec_serve_finished(struct rec_serve *sv, const struct rec_session *s, uint64_t now_ns);
/* The first program's argv, NUL-separated (*len bytes, the last NUL
 * included), from /proc; malloc'd, NULL if out of memory. */
char *rec_serve_command(pid_t pid, size_t *len);
/* The trace exists: say "ok" on fd 4 and close it; stderr goes to
 * /dev/null from now on (nobody reads it), and the cwd to "/". */
void rec_serve_ready(struct rec_serve *sv);
void rec_serve_free(struct rec_serve *sv);

#endif
