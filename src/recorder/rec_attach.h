/* SPDX-License-Identifier: MIT */
/* `memscribe record -p PID` (rec_attach.c, rec_attach_elf.c): load the
 * attach build of the collector into a running process with ptrace and
 * start or stop it there. docs/record.md, Attach. */
#ifndef REC_ATTACH_H
#define REC_ATTACH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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

/* rec_attach_elf.c: where a mapped file's symbol sits in pid: its load
 * bias (from /proc/PID/maps) plus its value (from the file's .dynsym, or
 * .symtab). Returns the address, or 0 if the file is not mapped or has
 * no such defined symbol. file_suffix matches the end of the mapped
 * path ("/libc.so.6"); the path found goes to path. */
uint64_t rec_attach_symbol(pid_t pid, const char *file_suffix, const char *name, char *path,
                           size_t path_size);

#endif
