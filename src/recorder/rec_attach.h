/* SPDX-License-Identifier: MIT */
/* `memscribe record -p PID` (rec_attach.c, rec_attach_elf.c): load the
 * attach build of the collector into a running process with ptrace and
 * start or stop it there. docs/record-attach.md. */
#ifndef REC_ATTACH_H
#define REC_ATTACH_H

#include <linux/filter.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Write the reason into msg (size bytes, printf's format) and return -1:
 * how each check below says no. */
int rec_say(char *msg, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Can pid be attached to at all? Reads /proc only, touches nothing: the
 * process exists, is ours to trace (ptrace_scope, its owner, our
 * capabilities), is not traced already, shares our namespaces, is a
 * dynamically linked program, and has no memscribe collector preloaded.
 * *is32: an i386 program (it needs the i386 collector). 0, or -1 with
 * the reason in msg. */
int rec_attach_check(pid_t pid, int *is32, char *msg, size_t msg_size);

/* Stop pid's thread pid, make it dlopen lib and call
 * memscribe_attach_start(settings), put it back as it was and let it go.
 * 0, or -1 with the reason in msg (the process is left running as it
 * was, unless it died meanwhile). */
int rec_attach_start(pid_t pid, const char *lib, const char *settings, char *msg, size_t msg_size);

/* The same for memscribe_attach_stop(): the GOTs put back. Sets
 * *nr_restored to the entries put back. 0, or -1 with msg. */
int rec_attach_stop(pid_t pid, const char *lib, long *nr_restored, char *msg, size_t msg_size);

/* Seize thread tid with ptrace and stop it (PTRACE_INTERRUPT): signals
 * that arrive first are delivered as they would have been. 0, or -errno
 * (-ESRCH: it is gone or exited meanwhile). rec_attach_let_go() detaches. */
int rec_attach_stop_thread(pid_t tid);
void rec_attach_let_go(pid_t tid);

/* rec_seccomp.c: the seccomp filters of pid's threads against the calls
 * the injection (in thread inject_tid) and the collector make there
 * (fmt_shm_calls.h). Stops each filtered thread for the read; changes
 * nothing. 0 if every thread lets them through, or -1 with the reason in
 * msg: a thread in strict mode, a filter that cannot be read (reading one
 * needs CAP_SYS_ADMIN) or evaluated, a call it forbids (named). */
int rec_seccomp_check(pid_t pid, pid_t inject_tid, int is32, char *msg, size_t msg_size);

/* One thread's filters, newest first: nr programs, program i len[i]
 * instructions long, one after the other in insns. */
struct rec_seccomp_filters {
    struct sock_filter *insns;
    uint32_t *len;
    uint32_t nr;
};
/* Read the filters of tid, stopped by us. 0, or -errno (-EACCES: we lack
 * CAP_SYS_ADMIN; -EINVAL: none). */
int rec_seccomp_read(pid_t tid, struct rec_seccomp_filters *f);
void rec_seccomp_free(struct rec_seccomp_filters *f);
/* The first call of the classes when (enum fmt_call_when) on the ABI that
 * filters f do not let through, with what happens to it instead in
 * *effect; NULL if they let all through. */
struct fmt_shm_call;
const struct fmt_shm_call *rec_seccomp_judge(const struct rec_seccomp_filters *f, int is32,
                                             unsigned when, const char **effect);

/* rec_attach_elf.c: where a mapped file's symbol sits in pid: its load
 * bias (from /proc/PID/maps) plus its value (from the file's .dynsym, or
 * .symtab). Returns the address, or 0 if the file is not mapped or has
 * no such defined symbol. file_suffix matches the end of the mapped
 * path ("/libc.so.6"); the path found goes to path. */
uint64_t rec_attach_symbol(pid_t pid, const char *file_suffix, const char *name, char *path,
                           size_t path_size);

#endif
