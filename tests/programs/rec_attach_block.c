/* SPDX-License-Identifier: MIT */
/* librec_attach_block.so: its constructor, run by dlopen with the loader's
 * lock held, says so (DIR/inctor.0) and waits until DIR/unblock.0 exists
 * (DIR from REC_ATTACH_DIR). rec_attach_locked dlopens it. */
#define _DEFAULT_SOURCE /* usleep */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void rec_attach_block_init(void)
{
    const char *dir = getenv("REC_ATTACH_DIR");
    char path[4096];
    int fd;

    if (!dir)
        return;
    snprintf(path, sizeof(path), "%s/inctor.0", dir);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0)
        close(fd);
    snprintf(path, sizeof(path), "%s/unblock.0", dir);
    while (access(path, F_OK) != 0)
        usleep(2000);
}
