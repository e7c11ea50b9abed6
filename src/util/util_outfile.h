/* SPDX-License-Identifier: MIT */
/* Creating the files memscribe writes (traces, the Windows event file,
 * exports, pictures, pages, snapshots, replay scripts) so that another local
 * user cannot choose where they go or read them: in a shared directory
 * (/tmp) that user could plant a symbolic link at the name, so that a root
 * recording overwrote a root-only file, or make the file first (mode 0666),
 * so that root's trace, argv included, went into a file that user owns and
 * reads. Every writer opens its file here (docs/record-programs.md, "Other users"). */
#ifndef UTIL_OUTFILE_H
#define UTIL_OUTFILE_H

#include <sys/types.h>

struct util_outfile {
    /* 1: a regular file this call made at the name (the caller may unlink
     * it to take it back); 0: an existing device, FIFO or file written in
     * place. */
    int created;
    /* On failure: what was refused or went wrong, a phrase for "cannot
     * create FILE: <why>". */
    char why[200];
};

/* Open path for a file memscribe writes; acc is O_WRONLY, O_RDWR, or
 * O_RDONLY for a file another process fills (the Windows launcher's), and
 * the descriptor is O_CLOEXEC. The final name is made at once with O_EXCL
 * and O_NOFOLLOW, mode less the umask: never a temporary name renamed at
 * the end, so the file is readable while it is written and whole under its
 * name after a SIGKILL. What is already there:
 * - a regular file is replaced (unlinked, then made anew) only if it is the
 *   caller's (effective uid); another user's is refused (-EPERM). One of
 *   the caller's in a directory the caller may not write is emptied in place
 *   if it has no other name (hard link);
 * - a symbolic link is followed only if it is the caller's or root's
 *   (/dev/stdout, /dev/fd/N); what it leads to must be the caller's if it
 *   is a regular file (then emptied in place: `-o /dev/stdout > file`),
 *   the caller's or root's otherwise; a link to nothing is refused;
 * - a character or block device, a FIFO (or a socket) is opened as it is
 *   (`-o /dev/null`, a named pipe) if it is the caller's or root's: a FIFO
 *   another user made would hand that user the data;
 * - a directory: -EISDIR.
 * Returns the descriptor, or -errno with o->why saying what was refused.
 * Makes no directory and follows symbolic links before the last name: a
 * directory another user may write without the sticky bit is that user's
 * to rename in anyway. */
int util_outfile_open(const char *path, int acc, mode_t mode, struct util_outfile *o);

/* A directory memscribe writes its files in (record --snapshot-every):
 * made (mode less the umask) if missing; one already there must be the
 * caller's or root's, and so must a symbolic link to it. Returns 0, or
 * -errno with o->why saying what was refused (o->created: 1 if made). */
int util_outfile_dir(const char *path, mode_t mode, struct util_outfile *o);

#endif
