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
/* Accept every queued connection and take in its hello; malformed ones
 * are counted in *nr_bad. A process already gone gets its status from st. */
void rec_socket_accept_all(struct rec_session *s, struct rec_statuses *st, int lfd, uint64_t now_ns,
                           uint64_t *nr_bad);
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
 * hellos still queued on lfd, which may add segments to them). */
void rec_check_exits(struct rec_session *s, struct rec_statuses *st, int lfd, uint64_t now_ns,
                     uint64_t *nr_bad);
/* Queue an RSS sample for each open image due one. */
void rec_sample_rss(struct rec_session *s, uint64_t now_ns, uint64_t period_ns);

#endif
