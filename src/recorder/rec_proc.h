/* SPDX-License-Identifier: MIT */
/* The recorder's dealings with processes (rec_proc.c): socket, spawning,
 * exits and wait statuses, RSS samples. */
#ifndef REC_PROC_H
#define REC_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "recorder/rec_internal.h"

/* Bind a fresh abstract SOCK_SEQPACKET socket; its name (no leading NUL)
 * goes to name. Returns the listening fd or -errno. */
int rec_socket_open(char *name, size_t name_size);
/* One pass over the socket, now_ns read before it: look again at the
 * connections waiting for their hello, then accept at most max queued ones
 * and take in their hellos; count in s->ignored what brought none (closed,
 * silent for REC_CONN_WAIT_NS, refused). Updates s->queue: behind when it
 * stopped at max (then a marker goes in behind the rest), in_ns when the
 * queue was seen empty or the marker came out. */
void rec_socket_accept(struct rec_session *s, int lfd, uint64_t now_ns, uint32_t max);
/* Passes of rec_socket_catch_up at most: the queue holds REC_LISTEN_BACKLOG
 * connections, REC_ACCEPTS_PER_ROUND a pass, and a full queue may refuse
 * the marker a few times. */
#define REC_CATCH_UP_PASSES 64u
/* At the end: pass after pass until every connection made before the call
 * is accepted (or REC_CATCH_UP_PASSES passes, under a flood that keeps the
 * marker out); then the connections still waiting are dropped (counted). */
void rec_socket_catch_up(struct rec_session *s, int lfd);
/* A program we start (record -- CMD, the Wine loader), held until the
 * trace exists so that a failure there kills a program that has not run. */
struct rec_child {
    pid_t pid;
    int go_fd, err_fd; /* >= 0 until it is let go */
    int exec_err;      /* execve's errno once let go, 0 if it ran */
};
/* Fork a child that runs path once let go. 0, or -1 with errno. */
int rec_child_spawn(struct rec_child *c, const char *path, char *const argv[], char *const envp[]);
/* Let it run; says (as name) if it could not be told to go or could not
 * be run (c->exec_err). */
void rec_child_go(struct rec_session *s, struct rec_child *c, const char *name);
/* Kill and reap it if it was never let go. */
void rec_child_drop(struct rec_child *c);
/* Its wait status as record's exit status: its exit code, 128+N if signal
 * N killed it, 127 if it could not be run. */
int rec_child_exit_code(const struct rec_child *c, int status);
/* Collect every exited child's status. Returns 1 when no child is left. */
int rec_reap(struct rec_statuses *st);
/* Close the open images whose processes have ended (after taking in the
 * hellos queued on lfd before they ended, which may add segments to them;
 * while the queue is behind, an image waits for a later round). */
void rec_check_exits(struct rec_session *s, struct rec_statuses *st, int lfd, uint64_t now_ns);
/* pid's argv, NUL-separated (*len bytes, the last NUL included), from
 * /proc; malloc'd, NULL if out of memory. */
char *rec_proc_cmdline(pid_t pid, size_t *len);
/* Queue an RSS sample for each open image due one. */
void rec_sample_rss(struct rec_session *s, uint64_t now_ns, uint64_t period_ns);

#endif
