/* SPDX-License-Identifier: MIT */
/* The recorder's dealings with processes (rec_proc.c): socket, spawning,
 * exits and wait statuses, RSS samples. */
#ifndef REC_PROC_H
#define REC_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "recorder/rec_internal.h"

/* Wait statuses collected by rec_reap(), by pid, until an image claims one. */
struct rec_status {
    pid_t pid;
    int status;
};

struct rec_statuses {
    struct rec_status *v;
    uint32_t n, cap;
    pid_t root;
    int root_status;
    int root_done;
};

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
/* Fork a child that runs path once a byte arrives on *go_fd; if execve
 * fails, the child writes its errno to *err_fd. Returns the pid or -1. */
pid_t rec_spawn(const char *path, char *const argv[], char *const envp[], int *go_fd, int *err_fd);

/* Let rec_spawn's child run and close both descriptors: *exec_err is
 * execve's errno when it failed, else 0. Returns 0, or -errno when the
 * child could not be told to go. */
int rec_spawn_go(int go_fd, int err_fd, int *exec_err);
/* Collect every exited child's status. Returns 1 when no child is left. */
int rec_reap(struct rec_statuses *st);
/* Close the open images whose processes have ended (after taking in the
 * hellos queued on lfd before they ended, which may add segments to them;
 * while the queue is behind, an image waits for a later round). */
void rec_check_exits(struct rec_session *s, struct rec_statuses *st, int lfd, uint64_t now_ns);
/* Queue an RSS sample for each open image due one. */
void rec_sample_rss(struct rec_session *s, uint64_t now_ns, uint64_t period_ns);

#endif
